// The OpenAI-compatible client against a real HTTP server on loopback that plays well-behaved,
// slow, failing and malformed model servers.
#include "llm/openai/openai_language_model.h"

#include <unistd.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "net/testing/loopback_http_server.h"

namespace hotline::llm {
namespace {

using net::testing::LoopbackHttpServer;
using net::testing::LoopbackRequest;
using net::testing::LoopbackResponder;

std::string Chunk(const std::string& content, const std::string& finish = "") {
  nlohmann::json j;
  j["id"] = "chatcmpl-1";
  j["object"] = "chat.completion.chunk";
  nlohmann::json choice;
  choice["index"] = 0;
  choice["delta"] = content.empty() ? nlohmann::json::object() : nlohmann::json{{"content", content}};
  choice["finish_reason"] = finish.empty() ? nlohmann::json(nullptr) : nlohmann::json(finish);
  j["choices"] = nlohmann::json::array({choice});
  return "data: " + j.dump() + "\n\n";
}

const char kUsage[] =
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":21,\"completion_tokens\":4,"
    "\"prompt_tokens_details\":{\"cached_tokens\":16}}}\n\n";

// A whole well-formed answer: role chunk, three content chunks, finish, usage, [DONE].
std::string Answer() {
  return "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n" +
         Chunk("Your order ") + Chunk("ships on ") + Chunk("Monday, café open.") +
         Chunk("", "stop") + kUsage + "data: [DONE]\n\n";
}

OpenAiLlmConfig Config(const LoopbackHttpServer& server) {
  OpenAiLlmConfig c;
  c.base_url = server.Url("/v1");
  c.model = "tiny-chat";
  c.first_token_timeout_ms = 2000;
  c.idle_timeout_ms = 2000;
  c.retry_backoff_ms = 1;
  return c;
}

std::unique_ptr<OpenAiLanguageModel> Make(const OpenAiLlmConfig& c) {
  auto m = OpenAiLanguageModel::Create(c);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(m).value() : nullptr;
}

GenerateRequest Ask() {
  GenerateRequest r;
  r.messages = {{"system", "You are a helpful agent."}, {"user", "When does my order ship?"}};
  r.max_tokens = 64;
  return r;
}

struct LmRun {
  Result<GenerateStats> stats = InternalError("not run");
  std::string text;
  std::vector<std::string> deltas;
};

LmRun Gen(LanguageModel& lm, const GenerateRequest& req) {
  LmRun r;
  r.stats = lm.Generate(req, [&](std::string_view d) {
    r.deltas.emplace_back(d);
    r.text += d;
    return true;
  });
  return r;
}

TEST(OpenAiLlm, StreamsChunksAndSendsAnOpenAiRequest) {
  const std::string env = "HOTLINE_LLM_TEST_KEY_" + std::to_string(::getpid());
  ::setenv(env.c_str(), "sk-secret", 1);
  std::mutex mu;
  LoopbackRequest seen;
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest& req, LoopbackResponder& r) {
    {
      std::lock_guard<std::mutex> lock(mu);
      seen = req;
    }
    r.BeginChunked(200, "text/event-stream");
    r.WriteChunk(Answer());
    r.EndChunked();
  });
  ASSERT_TRUE(server.ok());
  OpenAiLlmConfig c = Config(**server);
  c.api_key_env = env;
  auto lm = Make(c);
  ASSERT_TRUE(lm);
  EXPECT_EQ(lm->endpoint(), (*server)->Url("/v1/chat/completions"));
  GenerateRequest req = Ask();
  req.stop = {"\nUser:"};
  req.seed = 7;
  LmRun run = Gen(*lm, req);
  ASSERT_TRUE(run.stats.ok()) << run.stats.status();
  EXPECT_EQ(run.text, "Your order ships on Monday, café open.");
  EXPECT_EQ(run.stats->finish, FinishReason::kStop);
  EXPECT_EQ(run.stats->prompt_tokens, 21);
  EXPECT_EQ(run.stats->cached_prompt_tokens, 16);
  EXPECT_EQ(run.stats->generated_tokens, 4);
  EXPECT_GT(run.stats->first_token_ms, 0);
  EXPECT_GE(run.deltas.size(), 1u);

  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.target, "/v1/chat/completions");
  EXPECT_EQ(seen.Header("Authorization"), "Bearer sk-secret");
  nlohmann::json body = nlohmann::json::parse(seen.body);
  EXPECT_EQ(body["model"], "tiny-chat");
  EXPECT_EQ(body["stream"], true);
  EXPECT_EQ(body["max_tokens"], 64);
  EXPECT_EQ(body["seed"], 7);
  EXPECT_EQ(body["stop"][0], "\nUser:");
  ASSERT_EQ(body["messages"].size(), 2u);
  EXPECT_EQ(body["messages"][1]["role"], "user");
  EXPECT_EQ(body["messages"][1]["content"], "When does my order ship?");
  EXPECT_EQ(lm->name(), "openai:" + c.base_url + "/tiny-chat");
  ::unsetenv(env.c_str());
}

TEST(OpenAiLlm, SseFramesSplitAnywhereGiveTheSameText) {
  for (size_t piece : {1u, 3u, 7u}) {
    auto server = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
      r.BeginChunked(200, "text/event-stream; charset=utf-8");
      const std::string all = Answer();
      for (size_t i = 0; i < all.size(); i += piece) r.WriteChunk(all.substr(i, piece));
      r.EndChunked();
    });
    ASSERT_TRUE(server.ok());
    auto lm = Make(Config(**server));
    ASSERT_TRUE(lm);
    LmRun run = Gen(*lm, Ask());
    ASSERT_TRUE(run.stats.ok()) << run.stats.status();
    EXPECT_EQ(run.text, "Your order ships on Monday, café open.") << "pieces of " << piece;
  }
}

TEST(OpenAiLlm, MalformedChunksAreClearErrors) {
  struct Case {
    std::string second_chunk;
    std::string expect;  // in the error message
  };
  const std::vector<Case> cases = {
      {"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}\n\n", "not valid JSON"},
      {"data: {\"choices\":[{\"delta\":{\"content\":5}}]}\n\n", "choices[0].delta.content"},
      {"data: {\"object\":\"chat.completion.chunk\"}\n\n", "\"choices\""},
      {"data: [1,2]\n\n", "not a JSON object"},
      {"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":-3}}\n\n", "usage.prompt_tokens"},
  };
  for (const Case& k : cases) {
    auto server = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
      r.BeginChunked(200, "text/event-stream");
      r.WriteChunk(Chunk("Hello"));
      r.WriteChunk(k.second_chunk);
      r.WriteChunk(Chunk("", "stop") + "data: [DONE]\n\n");
      r.EndChunked();
    });
    ASSERT_TRUE(server.ok());
    auto lm = Make(Config(**server));
    LmRun run = Gen(*lm, Ask());
    ASSERT_FALSE(run.stats.ok()) << k.second_chunk;
    EXPECT_EQ(run.stats.status().code(), StatusCode::kDataLoss);
    EXPECT_NE(run.stats.status().message().find(k.expect), std::string::npos)
        << run.stats.status();
    EXPECT_NE(run.stats.status().message().find("chunk 2"), std::string::npos)
        << run.stats.status();
    EXPECT_EQ((*server)->requests(), 1);  // text was streamed: never retried
  }
  // Not an event stream at all.
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    r.Send(200, "application/json", "{\"choices\":[]}");
  });
  auto lm = Make(Config(**server));
  LmRun run = Gen(*lm, Ask());
  EXPECT_EQ(run.stats.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(run.stats.status().message().find("text/event-stream"), std::string::npos);
}

TEST(OpenAiLlm, ServerErrorThenSuccessIsRetried) {
  std::atomic<int> calls{0};
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    const int n = calls.fetch_add(1);
    if (n == 0) {
      r.Send(500, "application/json", "{\"error\":{\"message\":\"engine warming up\"}}");
    } else if (n == 1) {
      r.Send(429, "application/json", "{\"error\":\"busy\"}");
    } else {
      r.BeginChunked(200, "text/event-stream");
      r.WriteChunk(Answer());
      r.EndChunked();
    }
  });
  ASSERT_TRUE(server.ok());
  MetricsRegistry metrics;  // the model's series go here, not to the global registry
  auto lm = OpenAiLanguageModel::Create(Config(**server), &metrics);
  ASSERT_TRUE(lm.ok()) << lm.status();
  LmRun run = Gen(**lm, Ask());
  ASSERT_TRUE(run.stats.ok()) << run.stats.status();
  EXPECT_EQ(run.text, "Your order ships on Monday, café open.");
  EXPECT_EQ((*server)->requests(), 3);
  const Labels openai = {{"backend", "openai"}};
  EXPECT_EQ(metrics.GetCounter("hotline_llm_requests_total", "LLM requests", openai).value(), 1u);
  EXPECT_EQ(metrics
                .GetCounter("hotline_llm_retries_total",
                            "LLM requests retried before the first token", openai)
                .value(),
            2u);
  EXPECT_EQ(metrics.GetCounter("hotline_llm_errors_total", "LLM requests failed", openai).value(),
            0u);

  // Failing every time: 1 + max_retries attempts, then the server's message.
  auto down = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    r.Send(503, "application/json", "{\"error\":{\"message\":\"overloaded\"}}");
  });
  OpenAiLlmConfig c = Config(**down);
  c.max_retries = 2;
  auto lm2 = Make(c);
  LmRun failed = Gen(*lm2, Ask());
  ASSERT_FALSE(failed.stats.ok());
  EXPECT_EQ(failed.stats.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(failed.stats.status().message().find("overloaded"), std::string::npos);
  EXPECT_EQ((*down)->requests(), 3);

  // A client error is not retried.
  auto bad = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    r.Send(401, "application/json", "{\"error\":{\"message\":\"invalid key\"}}");
  });
  auto lm3 = Make(Config(**bad));
  LmRun denied = Gen(*lm3, Ask());
  EXPECT_EQ(denied.stats.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ((*bad)->requests(), 1);
}

TEST(OpenAiLlm, ConnectionRefusedIsRetriedThenUnavailable) {
  std::string url;
  {
    auto server = LoopbackHttpServer::Start([](const LoopbackRequest&, LoopbackResponder&) {});
    ASSERT_TRUE(server.ok());
    url = (*server)->Url();
  }  // closed: nothing listens there now
  OpenAiLlmConfig c;
  c.base_url = url;
  c.max_retries = 1;
  c.retry_backoff_ms = 1;
  auto lm = Make(c);
  LmRun run = Gen(*lm, Ask());
  EXPECT_EQ(run.stats.status().code(), StatusCode::kUnavailable) << run.stats.status();
}

TEST(OpenAiLlm, ErrorAfterTheFirstTokenIsNotRetried) {
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    r.BeginChunked(200, "text/event-stream");
    r.WriteChunk(Chunk("Your order "));
    r.WriteChunk("data: {\"error\":{\"message\":\"worker crashed\"}}\n\n");
    r.EndChunked();
  });
  ASSERT_TRUE(server.ok());
  auto lm = Make(Config(**server));
  LmRun run = Gen(*lm, Ask());
  ASSERT_FALSE(run.stats.ok());
  EXPECT_NE(run.stats.status().message().find("worker crashed"), std::string::npos);
  EXPECT_EQ(run.text, "Your order ");  // heard once
  EXPECT_EQ((*server)->requests(), 1);

  // The connection dropped mid-answer (chunked body cut short).
  auto cut = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    r.BeginChunked(200, "text/event-stream");
    r.WriteChunk(Chunk("Your order "));
  });
  auto lm2 = Make(Config(**cut));
  LmRun dropped = Gen(*lm2, Ask());
  ASSERT_FALSE(dropped.stats.ok());
  EXPECT_EQ(dropped.text, "Your order ");
  EXPECT_EQ((*cut)->requests(), 1);
}

// A server that keeps failing opens the circuit: the next request fails at once without
// reaching it, and once breaker_open_ms is over one trial request finds it well again.
TEST(OpenAiLlm, ASickServerOpensTheCircuitAndATrialClosesIt) {
  std::atomic<bool> sick{true};
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    if (sick) {
      r.Send(503, "application/json", "{\"error\":{\"message\":\"overloaded\"}}");
      return;
    }
    r.BeginChunked(200, "text/event-stream");
    r.WriteChunk(Answer());
    r.EndChunked();
  });
  ASSERT_TRUE(server.ok());
  OpenAiLlmConfig c = Config(**server);
  c.max_retries = 0;
  c.breaker_failures = 2;
  c.breaker_open_ms = 300;
  MetricsRegistry metrics;
  auto made = OpenAiLanguageModel::Create(c, &metrics);
  ASSERT_TRUE(made.ok()) << made.status();
  OpenAiLanguageModel& lm = **made;
  const Labels openai = {{"backend", "openai"}};
  auto open = [&] { return metrics.GetGauge("hotline_llm_breaker_open", "", openai).value(); };
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(Gen(lm, Ask()).stats.status().code(), StatusCode::kUnavailable);
  }
  EXPECT_EQ((*server)->requests(), 2);
  EXPECT_EQ(open(), 1);
  const auto t0 = std::chrono::steady_clock::now();
  LmRun rejected = Gen(lm, Ask());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(100));
  EXPECT_EQ(rejected.stats.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(rejected.stats.status().message().find("circuit breaker"), std::string::npos)
      << rejected.stats.status();
  EXPECT_EQ((*server)->requests(), 2) << "an open circuit sent the request anyway";
  EXPECT_EQ(metrics.GetCounter("hotline_llm_breaker_rejected_total", "", openai).value(), 1u);

  sick = false;
  std::this_thread::sleep_for(std::chrono::milliseconds(350));
  LmRun trial = Gen(lm, Ask());
  ASSERT_TRUE(trial.stats.ok()) << trial.stats.status();
  EXPECT_EQ(open(), 0);
  EXPECT_TRUE(Gen(lm, Ask()).stats.ok());
  EXPECT_EQ((*server)->requests(), 4);

  // A client error says the server is well: it never opens the circuit.
  auto bad = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    r.Send(400, "application/json", "{\"error\":{\"message\":\"context_length_exceeded\"}}");
  });
  OpenAiLlmConfig cb = Config(**bad);
  cb.breaker_failures = 1;
  auto lm2 = Make(cb);
  for (int i = 0; i < 3; ++i) Gen(*lm2, Ask());
  EXPECT_EQ((*bad)->requests(), 3);
}

TEST(OpenAiLlm, FirstTokenAndIdleTimeouts) {
  // Headers and a role chunk, then silence.
  auto slow = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    r.BeginChunked(200, "text/event-stream");
    r.WriteChunk("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n");
    for (int i = 0; i < 100 && r.WriteChunk(": keep-alive\n\n"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  ASSERT_TRUE(slow.ok());
  OpenAiLlmConfig c = Config(**slow);
  c.first_token_timeout_ms = 150;
  auto lm = Make(c);
  const auto t0 = std::chrono::steady_clock::now();
  LmRun run = Gen(*lm, Ask());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(run.stats.status().code(), StatusCode::kDeadlineExceeded) << run.stats.status();
  EXPECT_NE(run.stats.status().message().find("first_token_timeout_ms"), std::string::npos);
  EXPECT_GE(ms, 140);
  EXPECT_LT(ms, 1500);
  EXPECT_EQ((*slow)->requests(), 1);  // a timeout is not retried

  // One delta, then silence: the idle limit.
  auto stall = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    r.BeginChunked(200, "text/event-stream");
    r.WriteChunk(Chunk("Your order "));
    for (int i = 0; i < 100 && r.WriteChunk(": keep-alive\n\n"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  OpenAiLlmConfig c2 = Config(**stall);
  c2.idle_timeout_ms = 150;
  auto lm2 = Make(c2);
  LmRun idle = Gen(*lm2, Ask());
  EXPECT_EQ(idle.stats.status().code(), StatusCode::kDeadlineExceeded) << idle.stats.status();
  EXPECT_NE(idle.stats.status().message().find("idle_timeout_ms"), std::string::npos);
  EXPECT_EQ(idle.text, "Your order ");
}

TEST(OpenAiLlm, CancelMidStreamAndLocalStopStrings) {
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    r.BeginChunked(200, "text/event-stream");
    for (int i = 0; i < 200 && r.WriteChunk(Chunk("word" + std::to_string(i) + " ")); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    r.EndChunked();
  });
  ASSERT_TRUE(server.ok());
  auto lm = Make(Config(**server));
  CancelToken cancel;
  GenerateRequest req = Ask();
  req.cancel = &cancel;
  std::atomic<int> deltas{0};
  std::thread canceller([&] {
    while (deltas.load() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cancel.Cancel();
  });
  const auto t0 = std::chrono::steady_clock::now();
  auto r = lm->Generate(req, [&](std::string_view) {
    deltas.fetch_add(1);
    return true;
  });
  canceller.join();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->finish, FinishReason::kCancelled);
  EXPECT_LT(deltas.load(), 20);
  EXPECT_LT(ms, 1000);

  // The server ignores the stop string; the client still cuts there and ends the stream.
  req.cancel = nullptr;
  req.stop = {"word3"};
  LmRun stopped = Gen(*lm, req);
  ASSERT_TRUE(stopped.stats.ok()) << stopped.stats.status();
  EXPECT_EQ(stopped.text, "word0 word1 word2 ");
  EXPECT_EQ(stopped.stats->finish, FinishReason::kStop);

  // A callback returning false.
  int calls = 0;
  auto cb = lm->Generate(Ask(), [&](std::string_view) { return ++calls < 2; });
  ASSERT_TRUE(cb.ok());
  EXPECT_EQ(cb->finish, FinishReason::kCallback);
  EXPECT_EQ(calls, 2);
}

TEST(OpenAiLlm, ResponseSizeIsBounded) {
  auto server = LoopbackHttpServer::Start([&](const LoopbackRequest&, LoopbackResponder& r) {
    r.BeginChunked(200, "text/event-stream");
    for (int i = 0; i < 1000 && r.WriteChunk(Chunk(std::string(100, 'a'))); ++i) {
    }
    r.EndChunked();
  });
  ASSERT_TRUE(server.ok());
  OpenAiLlmConfig c = Config(**server);
  c.max_response_bytes = 16 << 10;
  auto lm = Make(c);
  LmRun run = Gen(*lm, Ask());
  EXPECT_EQ(run.stats.status().code(), StatusCode::kResourceExhausted) << run.stats.status();
}

TEST(OpenAiLlm, ChunkParserAndConfig) {
  auto c = ParseChatCompletionChunk(
      R"({"choices":[{"index":0,"delta":{"content":null},"finish_reason":"length"}]})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->content, "");
  EXPECT_EQ(c->finish_reason, "length");
  EXPECT_EQ(ParseChatCompletionChunk(R"({"choices":[{"finish_reason":3}]})").status().code(),
            StatusCode::kDataLoss);
  EXPECT_EQ(ParseChatCompletionChunk(R"({"error":{"message":"boom"}})").status().code(),
            StatusCode::kUnavailable);

  OpenAiLlmConfig cfg;
  EXPECT_TRUE(cfg.Validate().ok());
  cfg.base_url = "ftp://x";
  EXPECT_FALSE(cfg.Validate().ok());
  cfg = {};
  cfg.base_url = "https://llm.example.com/v1";
  EXPECT_TRUE(cfg.Validate().ok());
  cfg.ca_file = "/nonexistent/hotline-ca.pem";  // named when the configuration is checked
  EXPECT_NE(cfg.Validate().message().find("ca_file: '/nonexistent/hotline-ca.pem'"),
            std::string::npos)
      << cfg.Validate();
  cfg = {};
  cfg.first_token_timeout_ms = 0;
  EXPECT_FALSE(cfg.Validate().ok());
  cfg = {};
  cfg.breaker_failures = -1;
  EXPECT_NE(cfg.Validate().message().find("breaker_failures"), std::string::npos);
  cfg = {};
  cfg.breaker_open_ms = 0;
  EXPECT_NE(cfg.Validate().message().find("breaker_open_ms"), std::string::npos);
  cfg = {};
  cfg.api_key_env = "HOTLINE_LLM_TEST_UNSET_" + std::to_string(::getpid());
  EXPECT_EQ(OpenAiLanguageModel::Create(cfg).status().code(), StatusCode::kFailedPrecondition);

  LlmConfig root;
  root.backend = "openai";
  auto lm = CreateLanguageModel(root);
  ASSERT_TRUE(lm.ok()) << lm.status();
  EXPECT_EQ((*lm)->CountTokens("twelve bytes"), 3);
  GenerateRequest empty;
  EXPECT_EQ((*lm)->Generate(empty, nullptr).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hotline::llm
