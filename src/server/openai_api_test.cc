// The OpenAI-compatible API over a fake LanguageModel, through real loopback HTTP: request
// validation, buffered and streamed completions (read with net::HttpClient + SseParser, and with
// Hotline's own llm/openai client), backend errors, and cancellation on client disconnect.
#include "server/openai_api.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "engine/context_fit.h"
#include "llm/llm_config.h"
#include "net/http_client.h"
#include "net/sse_parser.h"
#include "server/testing/test_clients.h"

namespace hotline::server {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// Streams `pieces` one by one, `delay_ms` apart, honouring max_tokens and the cancel token.
class FakeLanguageModel : public llm::LanguageModel {
 public:
  std::vector<std::string> pieces = {"Hello", ",", " caller", "!"};
  int delay_ms = 0;
  Status fail_before;          // returned before any text when not OK
  Status fail_after;           // returned after the first piece when not OK
  std::atomic<bool> saw_cancel{false};  // stopped by the request's raised CancelToken
  std::atomic<int> calls{0};

  Result<llm::GenerateStats> Generate(const llm::GenerateRequest& request,
                                      const llm::TextCallback& on_text) override {
    ++calls;
    {
      std::lock_guard lock(mu_);
      last_ = request;
      last_.cancel = nullptr;
    }
    if (!fail_before.ok()) return fail_before;
    llm::GenerateStats stats;
    stats.prompt_tokens = 7;
    for (size_t i = 0;; ++i) {
      if (IsCancelled(request.cancel)) {
        saw_cancel = true;
        stats.finish = llm::FinishReason::kCancelled;
        return stats;
      }
      if (i >= pieces.size()) break;
      if (stats.generated_tokens >= request.max_tokens) {
        stats.finish = llm::FinishReason::kLength;
        return stats;
      }
      if (delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      ++stats.generated_tokens;
      if (!on_text(pieces[i])) {
        if (IsCancelled(request.cancel)) saw_cancel = true;  // the writer saw the disconnect first
        stats.finish = llm::FinishReason::kCallback;
        return stats;
      }
      if (i == 0 && !fail_after.ok()) return fail_after;
    }
    return stats;
  }
  int CountTokens(std::string_view text) const override { return static_cast<int>(text.size()); }
  std::string name() const override { return "fake:test"; }

  llm::GenerateRequest last() {
    std::lock_guard lock(mu_);
    return last_;
  }

 private:
  std::mutex mu_;
  llm::GenerateRequest last_;
};

class OpenAiApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = std::make_shared<FakeLanguageModel>();
    ServerConfig cfg;
    cfg.port = 0;
    cfg.worker_threads = 4;
    cfg.openai.model_id = "hotline-test";
    cfg.openai.max_tokens_limit = 100;
    cfg.openai.default_max_tokens = 50;
    auto s = HttpServer::Create(cfg);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(s).value();
    Status installed = InstallOpenAiApi(*server_, model_, cfg.openai);
    ASSERT_TRUE(installed.ok()) << installed;
    ASSERT_TRUE(server_->Start().ok());
  }

  Result<net::HttpResponse> Post(const std::string& body,
                                 const std::string& path = "/v1/chat/completions") {
    return net::HttpClient().Send(
        net::HttpRequest::Post(server_->Url(path), body, "application/json"));
  }

  // Streams a completion and returns its SSE data payloads in order.
  std::vector<std::string> StreamEvents(const std::string& body, int* status = nullptr,
                                        const std::string& path = "/v1/chat/completions") {
    std::vector<std::string> events;
    net::SseParser parser([&](const net::SseEvent& e) {
      events.push_back(e.data);
      return Status::Ok();
    });
    net::HttpStreamCallbacks cb;
    cb.on_head = [&](const net::HttpResponseHead& h) {
      if (status) *status = h.status;
      if (h.status == 200) {
        EXPECT_EQ(h.Header("Content-Type"), "text/event-stream");
      }
      return Status::Ok();
    };
    cb.on_body = [&](std::string_view b) { return parser.Feed(b); };
    Status s = net::HttpClient().Stream(
        net::HttpRequest::Post(server_->Url(path), body, "application/json"), cb);
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_TRUE(parser.Finish().ok());
    return events;
  }

  std::shared_ptr<FakeLanguageModel> model_;
  std::unique_ptr<HttpServer> server_;
};

const char kHello[] = R"({"model":"x","messages":[{"role":"system","content":"Be brief."},
  {"role":"user","content":"Hi"}]})";

TEST_F(OpenAiApiTest, BufferedCompletion) {
  auto r = Post(R"({"model":"hotline-test","messages":[{"role":"user","content":"Hi"}],
    "max_tokens":50,"temperature":0.7,"top_p":0.9,"stop":["\n\n","END"],"seed":42})");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["model"], "hotline-test");
  EXPECT_EQ(j["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "Hello, caller!");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 7);
  EXPECT_EQ(j["usage"]["completion_tokens"], 4);
  EXPECT_EQ(j["usage"]["total_tokens"], 11);

  llm::GenerateRequest seen = model_->last();
  ASSERT_EQ(seen.messages.size(), 1u);
  EXPECT_EQ(seen.messages[0].role, "user");
  EXPECT_EQ(seen.messages[0].content, "Hi");
  EXPECT_EQ(seen.max_tokens, 50);
  EXPECT_FLOAT_EQ(seen.temperature, 0.7f);
  EXPECT_FLOAT_EQ(seen.top_p, 0.9f);
  EXPECT_EQ(seen.seed, 42u);
  EXPECT_EQ(seen.stop, (std::vector<std::string>{"\n\n", "END"}));
}

TEST_F(OpenAiApiTest, LengthFinishAndDefaults) {
  auto r = Post(R"({"messages":[{"role":"user","content":[{"type":"text","text":"a"},
    {"type":"text","text":"b"}]}],"max_tokens":2,"stop":"STOP"})");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j["choices"][0]["message"]["content"], "Hello,");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  llm::GenerateRequest seen = model_->last();
  EXPECT_EQ(seen.messages[0].content, "ab");
  EXPECT_EQ(seen.stop, (std::vector<std::string>{"STOP"}));
  EXPECT_FLOAT_EQ(seen.temperature, 0.0f);
  // Without max_tokens the configured default applies.
  ASSERT_TRUE(Post(kHello).ok());
  EXPECT_EQ(model_->last().max_tokens, 50);
  EXPECT_EQ(model_->last().messages[0].role, "system");
}

TEST_F(OpenAiApiTest, StreamedCompletionOverSse) {
  int status = 0;
  auto events = StreamEvents(
      R"({"messages":[{"role":"user","content":"Hi"}],"stream":true,
          "stream_options":{"include_usage":true}})",
      &status);
  EXPECT_EQ(status, 200);
  ASSERT_GE(events.size(), 8u);
  EXPECT_EQ(events.back(), "[DONE]");
  json first = json::parse(events[0]);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  std::string text;
  std::string finish;
  std::string id = first["id"];
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    json c = json::parse(events[i]);
    EXPECT_EQ(c["id"], id);  // one id for the whole stream
    if (c.contains("usage")) {
      EXPECT_EQ(c["usage"]["completion_tokens"], 4);
      continue;
    }
    const json& choice = c["choices"][0];
    if (choice["delta"].contains("content")) text += choice["delta"]["content"].get<std::string>();
    if (!choice["finish_reason"].is_null()) finish = choice["finish_reason"];
  }
  EXPECT_EQ(text, "Hello, caller!");
  EXPECT_EQ(finish, "stop");
}

TEST_F(OpenAiApiTest, HotlinesOwnOpenAiClientStreamsFromIt) {
  llm::LlmConfig cfg;
  cfg.backend = "openai";
  cfg.openai.base_url = server_->Url();
  cfg.openai.model = "hotline-test";
  cfg.openai.max_retries = 0;
  auto lm = llm::CreateLanguageModel(cfg);
  ASSERT_TRUE(lm.ok()) << lm.status();
  llm::GenerateRequest req;
  req.messages = {{"user", "Hi"}};
  req.max_tokens = 50;
  std::vector<std::string> deltas;
  auto stats = (*lm)->Generate(req, [&](std::string_view d) {
    deltas.emplace_back(d);
    return true;
  });
  ASSERT_TRUE(stats.ok()) << stats.status();
  std::string text;
  for (const auto& d : deltas) text += d;
  EXPECT_EQ(text, "Hello, caller!");
  EXPECT_GE(deltas.size(), 2u);  // streamed, not in one piece
  EXPECT_EQ(stats->finish, llm::FinishReason::kStop);

  // A backend failure reaches the client as an error, not as text.
  model_->fail_before = UnavailableError("engine is loading");
  auto failed = (*lm)->Generate(req, [](std::string_view) { return true; });
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("engine is loading"), std::string::npos)
      << failed.status();
}

TEST_F(OpenAiApiTest, ModelsListsTheModel) {
  auto r = net::HttpClient().Send(net::HttpRequest::Get(server_->Url("/v1/models")));
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status, 200);
  json j = json::parse(r->body);
  EXPECT_EQ(j["object"], "list");
  ASSERT_EQ(j["data"].size(), 1u);
  EXPECT_EQ(j["data"][0]["id"], "hotline-test");
  EXPECT_EQ(j["data"][0]["object"], "model");
}

TEST_F(OpenAiApiTest, InvalidRequestsGet400WithOpenAiErrors) {
  struct Case {
    std::string body;
    std::string param;  // expected error.param ("" = null)
    std::string message_part;
  } cases[] = {
      {"not json", "", "not valid JSON"},
      {"[1]", "", "must be a JSON object"},
      {R"({})", "messages", "messages is required"},
      {R"({"messages":[]})", "messages", "non-empty array"},
      {R"({"messages":"hi"})", "messages", "non-empty array"},
      {R"({"messages":[{"content":"x"}]})", "messages", "messages[0].role"},
      {R"({"messages":[{"role":"tool","content":"x"}]})", "messages", "system, user or assistant"},
      {R"({"messages":[{"role":"user"}]})", "messages", "messages[0].content is required"},
      {R"({"messages":[{"role":"user","content":5}]})", "messages", "must be a string"},
      {R"({"messages":[{"role":"user","content":[{"type":"image_url"}]}]})", "messages",
       "only {\"type\":\"text\""},
      {R"({"messages":[{"role":"user","content":"x"}],"model":3})", "model", "model must be"},
      {R"({"messages":[{"role":"user","content":"x"}],"stream":"yes"})", "stream", "true or false"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_tokens":0})", "max_tokens", "[1, 100]"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_tokens":101})", "max_tokens",
       "got 101"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_tokens":1.5})", "max_tokens",
       "must be an integer"},
      {R"({"messages":[{"role":"user","content":"x"}],"max_completion_tokens":-1})",
       "max_completion_tokens", "[1, 100]"},
      {R"({"messages":[{"role":"user","content":"x"}],"temperature":2.5})", "temperature",
       "[0, 2]"},
      {R"({"messages":[{"role":"user","content":"x"}],"temperature":"hot"})", "temperature",
       "must be a number"},
      {R"({"messages":[{"role":"user","content":"x"}],"top_p":0})", "top_p", "(0, 1]"},
      {R"({"messages":[{"role":"user","content":"x"}],"top_p":1.01})", "top_p", "(0, 1]"},
      {R"({"messages":[{"role":"user","content":"x"}],"stop":7})", "stop", "string or an array"},
      {R"({"messages":[{"role":"user","content":"x"}],"stop":["a",1]})", "stop",
       "string or an array"},
      {R"({"messages":[{"role":"user","content":"x"}],"stop":["a","b","c","d","e"]})", "stop",
       "at most 4"},
      {R"({"messages":[{"role":"user","content":"x"}],"stop":""})", "stop", "1-256 bytes"},
      {R"({"messages":[{"role":"user","content":"x"}],"seed":"1"})", "seed", "must be an integer"},
      {R"({"messages":[{"role":"user","content":"x"}],"n":2})", "n", "[1, 1]"},
      {R"({"messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":true}})",
       "stream_options", "only allowed with stream"},
  };
  for (const Case& c : cases) {
    auto r = Post(c.body);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->status, 400) << c.body << " -> " << r->body;
    json j = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << r->body;
    EXPECT_EQ(j["error"]["type"], "invalid_request_error") << c.body;
    if (c.param.empty()) {
      EXPECT_TRUE(j["error"]["param"].is_null()) << c.body;
    } else {
      EXPECT_EQ(j["error"]["param"], c.param) << c.body;
    }
    EXPECT_NE(j["error"]["message"].get<std::string>().find(c.message_part), std::string::npos)
        << c.body << " -> " << j["error"]["message"];
  }
  EXPECT_EQ(model_->calls.load(), 0);  // nothing invalid reached the model
}

TEST_F(OpenAiApiTest, BackendErrors) {
  model_->fail_before = ResourceExhaustedError("queue full");
  auto r = Post(kHello);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 503);
  EXPECT_NE(r->body.find("queue full"), std::string::npos);
  int status = 0;
  auto events =
      StreamEvents(R"({"messages":[{"role":"user","content":"x"}],"stream":true})", &status);
  EXPECT_EQ(status, 503);
  EXPECT_TRUE(events.empty());  // a JSON error body, not an event stream
  model_->fail_before = Status::Ok();
  model_->fail_after = InternalError("kernel exploded");
  events = StreamEvents(R"({"messages":[{"role":"user","content":"x"}],"stream":true})", &status);
  EXPECT_EQ(status, 200);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back(), "[DONE]");
  json err = json::parse(events[events.size() - 2]);
  EXPECT_EQ(err["error"]["message"], "kernel exploded");
}

TEST_F(OpenAiApiTest, RawPromptCompletionsBufferedAndStreamed) {
  auto r = Post(R"({"model":"x","prompt":"Once upon a time","max_tokens":3})", "/v1/completions");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("cmpl-", 0), 0u);
  EXPECT_EQ(j["choices"][0]["text"], "Hello, caller");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);
  EXPECT_EQ(model_->last().prompt, "Once upon a time");
  EXPECT_TRUE(model_->last().messages.empty());

  int status = 0;
  auto events = StreamEvents(R"({"prompt":["Once"],"stream":true})", &status, "/v1/completions");
  EXPECT_EQ(status, 200);
  ASSERT_EQ(events.size(), 6u);  // 4 pieces, the finish chunk, [DONE]
  std::string text;
  for (size_t i = 0; i + 2 < events.size(); ++i) {
    json c = json::parse(events[i]);
    EXPECT_EQ(c["object"], "text_completion");
    EXPECT_TRUE(c["choices"][0]["finish_reason"].is_null());
    text += c["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(text, "Hello, caller!");
  EXPECT_EQ(json::parse(events[4])["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(events[5], "[DONE]");
  EXPECT_EQ(model_->last().prompt, "Once");

  for (const char* bad : {R"({"max_tokens":3})", R"({"prompt":5})", R"({"prompt":""})",
                          R"({"prompt":["a","b"]})", R"({"prompt":"a","echo":true})",
                          R"({"prompt":"a","logprobs":1})", R"({"prompt":"a","best_of":2})",
                          R"({"prompt":"a","max_tokens":0})"}) {
    auto e = Post(bad, "/v1/completions");
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->status, 400) << bad;
    EXPECT_EQ(json::parse(e->body)["error"]["type"], "invalid_request_error") << bad;
  }
}

TEST_F(OpenAiApiTest, ContextLengthExceededIs400WithItsCode) {
  // What the engine backend returns when the system prompt and the last turn (or a raw prompt)
  // leave no room for an answer.
  model_->fail_before = engine::CheckPromptFits(4000, {4096, 256, 100});
  ASSERT_TRUE(engine::IsContextLengthExceeded(model_->fail_before));
  for (bool chat : {true, false}) {
    const std::string path = chat ? "/v1/chat/completions" : "/v1/completions";
    for (bool stream : {false, true}) {
      std::string body = chat ? R"({"messages":[{"role":"user","content":"x"}])"
                              : R"({"prompt":"x")";
      body += stream ? R"(,"stream":true})" : "}";
      auto r = Post(body, path);
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(r->status, 400) << path << " " << stream;
      json e = json::parse(r->body)["error"];
      EXPECT_EQ(e["code"], "context_length_exceeded");
      EXPECT_EQ(e["type"], "invalid_request_error");
      EXPECT_EQ(e["param"], chat ? "messages" : "prompt");
      const std::string msg = e["message"];
      EXPECT_EQ(msg.rfind("the prompt has 4000 tokens", 0), 0u) << msg;
    }
  }
  // Other errors keep a null code.
  model_->fail_before = ResourceExhaustedError("queue full");
  auto r = Post(kHello);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(json::parse(r->body)["error"]["code"].is_null());
}

TEST_F(OpenAiApiTest, ClientDisconnectCancelsTheGeneration) {
  model_->pieces.assign(2000, " word");
  model_->delay_ms = 2;
  for (bool stream : {true, false}) {
    model_->saw_cancel = false;
    testing::RawClient c(server_->port());
    std::string body = std::string(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":100)") +
                       (stream ? R"(,"stream":true})" : "}");
    // 100 pieces at 2 ms: about 200 ms uncancelled. saw_cancel is only set by a cancellation.
    ASSERT_TRUE(c.Send("POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: "
                       "application/json\r\nContent-Length: " +
                       std::to_string(body.size()) + "\r\n\r\n" + body));
    if (stream) {
      std::string got = c.ReadUntil(
          [](const std::string& b) { return b.find(" word") != std::string::npos; });
      ASSERT_NE(got.find("text/event-stream"), std::string::npos) << got;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    auto t0 = Clock::now();
    c.Abort();
    ASSERT_TRUE([&] {
      while (Clock::now() - t0 < std::chrono::seconds(2)) {
        if (model_->saw_cancel) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      return false;
    }()) << (stream ? "stream" : "buffered") << " running=" << model_->calls.load();
    EXPECT_LT(Clock::now() - t0, std::chrono::milliseconds(150));
  }
}

}  // namespace
}  // namespace hotline::server
