// The embedded backend on real models: stories260K (converted from its llama2.c checkpoint) and a
// tiny random llama GGUF. Greedy outputs are compared with direct Engine::Generate runs.
#include "llm/engine/engine_language_model.h"

#include <unistd.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "common/build_paths.h"
#include "engine/llama2c.h"

namespace hotline::llm {
namespace {

const std::string kStoriesDir = std::string(HOTLINE_SHARED_DATA_DIR) + "/llm/stories260k/";
const std::string kTinyRandom =
    std::string(HOTLINE_SHARED_DATA_DIR) + "/llm/tiny-random/llama-2-tiny-random.gguf";

// True when `s` is a whole number of valid UTF-8 code points.
bool IsWholeUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += n;
  }
  return true;
}

struct LmRun {
  Result<GenerateStats> stats = InternalError("not run");
  std::string text;
  std::vector<std::string> deltas;
};

LmRun Gen(LanguageModel& lm, GenerateRequest req) {
  LmRun r;
  r.stats = lm.Generate(req, [&](std::string_view d) {
    r.deltas.emplace_back(d);
    r.text += d;
    return true;
  });
  return r;
}

class EngineLmTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    stories_ = std::string(HOTLINE_BINARY_DIR) + "/llm_engine_test_stories260k_" +
               std::to_string(::getpid()) + ".gguf";
    ASSERT_TRUE(engine::ConvertLlama2c(kStoriesDir + "stories260K.bin", kStoriesDir + "tok512.bin",
                                       stories_)
                    .ok());
  }
  static void TearDownTestSuite() { std::remove(stories_.c_str()); }

  static LlmEngineConfig Config(const std::string& path) {
    LlmEngineConfig c;
    c.engine.model_path = path;
    c.engine.threads = 1;
    c.engine.kv_type = "f32";
    c.chat_template = "llama2";  // neither file carries a chat template
    return c;
  }
  static std::unique_ptr<EngineLanguageModel> Make(const LlmEngineConfig& c) {
    auto m = EngineLanguageModel::Create(c);
    EXPECT_TRUE(m.ok()) << m.status();
    return m.ok() ? std::move(m).value() : nullptr;
  }
  static GenerateRequest Ask(const std::string& user, int max_tokens = 40) {
    GenerateRequest r;
    r.messages = {{"system", "You tell short stories."}, {"user", user}};
    r.max_tokens = max_tokens;
    return r;
  }
  // What a direct greedy Engine::Generate on the same prompt tokens decodes to.
  static std::string DirectGreedy(const std::string& path, EngineLanguageModel& lm,
                                  const GenerateRequest& req, int* n_tokens) {
    auto prompt = lm.EncodeMessages(req.messages, true);
    EXPECT_TRUE(prompt.ok());
    engine::EngineConfig ec;
    ec.model_path = path;
    ec.threads = 1;
    ec.kv_type = "f32";
    auto e = engine::Engine::Load(ec);
    EXPECT_TRUE(e.ok()) << e.status();
    engine::SamplingConfig greedy;
    greedy.temperature = 0;
    greedy.max_tokens = req.max_tokens;
    auto r = (*e)->Generate(*(*e)->CreateSequence(), *prompt, greedy, nullptr);
    EXPECT_TRUE(r.ok()) << r.status();
    *n_tokens = static_cast<int>(r->tokens.size());
    return lm.tokenizer().Decode(r->tokens);
  }

  static std::string stories_;
};
std::string EngineLmTest::stories_;

TEST_F(EngineLmTest, StreamedDeltasEqualDirectGreedyOnBothModels) {
  for (const std::string& path : {stories_, kTinyRandom}) {
    SCOPED_TRACE(path);
    auto lm = Make(Config(path));
    ASSERT_TRUE(lm);
    EXPECT_EQ(lm->name(), "engine:" + path);
    GenerateRequest req = Ask("Tell me about a cat named Lily.", 60);
    LmRun run = Gen(*lm, req);
    ASSERT_TRUE(run.stats.ok()) << run.stats.status();
    int n_tokens = 0;
    const std::string direct = DirectGreedy(path, *lm, req, &n_tokens);
    EXPECT_FALSE(direct.empty());
    EXPECT_GT(run.deltas.size(), 5u);
    EXPECT_EQ(run.text, direct);
    EXPECT_EQ(run.stats->generated_tokens, n_tokens);
    EXPECT_EQ(run.stats->prompt_tokens, static_cast<int>(lm->EncodeMessages(req.messages, true)->size()));
    EXPECT_EQ(run.stats->cached_prompt_tokens, 0);
    EXPECT_GT(run.stats->first_token_ms, 0);
    EXPECT_GE(run.stats->total_ms, run.stats->first_token_ms);
    for (const std::string& d : run.deltas) {
      EXPECT_FALSE(d.empty());
      EXPECT_TRUE(IsWholeUtf8(d)) << "delta is not whole UTF-8 code points";
    }
    if (n_tokens == req.max_tokens) {
      EXPECT_EQ(run.stats->finish, FinishReason::kLength);
    }
    EXPECT_GT(lm->CountTokens("Once upon a time"), 0);
  }
}

TEST_F(EngineLmTest, StopStringsEndTheAnswerAndAreNotStreamed) {
  auto lm = Make(Config(stories_));
  ASSERT_TRUE(lm);
  GenerateRequest req = Ask("Tell me about a dog.", 80);
  LmRun full = Gen(*lm, req);
  ASSERT_TRUE(full.stats.ok());
  ASSERT_GT(full.text.size(), 40u) << full.text;
  // A stop string taken from the middle of the free-running answer.
  const std::string stop = full.text.substr(full.text.size() / 2, 5);
  const std::string expected = full.text.substr(0, full.text.find(stop));
  req.stop = {"never appears in a story 12345", stop};
  LmRun cut = Gen(*lm, req);
  ASSERT_TRUE(cut.stats.ok());
  EXPECT_EQ(cut.text, expected);
  EXPECT_EQ(cut.stats->finish, FinishReason::kStop);
  EXPECT_LT(cut.stats->generated_tokens, full.stats->generated_tokens);

  // A callback returning false ends generation too.
  int calls = 0;
  auto stopped = lm->Generate(Ask("Tell me about a dog.", 80), [&](std::string_view) {
    return ++calls < 3;
  });
  ASSERT_TRUE(stopped.ok());
  EXPECT_EQ(stopped->finish, FinishReason::kCallback);
  EXPECT_EQ(calls, 3);
}

TEST_F(EngineLmTest, CancelFromAnotherThreadMidGeneration) {
  auto lm = Make(Config(stories_));
  ASSERT_TRUE(lm);
  GenerateRequest req = Ask("Tell me a long story about a big red ball.", 400);
  LmRun full = Gen(*lm, req);
  ASSERT_TRUE(full.stats.ok());
  ASSERT_GT(full.stats->generated_tokens, 30) << "the free-running answer is too short to cancel";

  CancelToken cancel;
  req.cancel = &cancel;
  std::atomic<int> deltas{0};
  std::thread canceller([&] {
    while (deltas.load() < 3) std::this_thread::sleep_for(std::chrono::microseconds(50));
    cancel.Cancel();
  });
  std::string text;
  auto r = lm->Generate(req, [&](std::string_view d) {
    text += d;
    deltas.fetch_add(1);
    return true;
  });
  canceller.join();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->finish, FinishReason::kCancelled);
  EXPECT_LT(r->generated_tokens, full.stats->generated_tokens);
  EXPECT_EQ(full.text.substr(0, text.size()), text);  // what was streamed is the same answer

  // A request cancelled before it starts does no work.
  GenerateRequest pre = Ask("Hello");
  pre.cancel = &cancel;
  auto r2 = lm->Generate(pre, nullptr);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->finish, FinishReason::kCancelled);
  EXPECT_EQ(r2->generated_tokens, 0);
}

TEST_F(EngineLmTest, CancelledQueuedRequestLeavesTheQueue) {
  auto lm = Make(Config(stories_));
  ASSERT_TRUE(lm);
  lm->Pause();
  CancelToken cancel;
  GenerateRequest req = Ask("Hello");
  req.cancel = &cancel;
  Result<GenerateStats> r = InternalError("not run");
  std::thread caller([&] { r = lm->Generate(req, nullptr); });
  for (int i = 0; i < 2000 && lm->queue_depth() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(lm->queue_depth(), 1);
  cancel.Cancel();
  caller.join();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->finish, FinishReason::kCancelled);
  EXPECT_EQ(r->generated_tokens, 0);
  EXPECT_EQ(lm->queue_depth(), 0);
  lm->Resume();
  EXPECT_TRUE(lm->Generate(Ask("Hello", 5), nullptr).ok());
}

TEST_F(EngineLmTest, QueueOrderIsPriorityThenDeadlineThenArrival) {
  auto lm = Make(Config(stories_));
  ASSERT_TRUE(lm);
  lm->Pause();
  const MonoTime now = std::chrono::steady_clock::now();
  struct Spec {
    int priority;
    int deadline_ms;  // 0 = none
  };
  // Expected start order: index 3 (p0, deadline 100), 1 (p0, deadline 500), 4 (p0, none),
  // 2 (p1), 0 (p5).
  const std::vector<Spec> specs = {{5, 0}, {0, 500}, {1, 0}, {0, 100}, {0, 0}};
  const std::vector<int> expected = {3, 1, 4, 2, 0};
  std::vector<double> start_ms(specs.size(), 0);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < specs.size(); ++i) {
    threads.emplace_back([&, i] {
      GenerateRequest req = Ask("Request " + std::to_string(i), 20);
      req.priority = specs[i].priority;
      if (specs[i].deadline_ms > 0) req.deadline = now + std::chrono::milliseconds(specs[i].deadline_ms);
      const MonoTime t_call = std::chrono::steady_clock::now();
      auto r = lm->Generate(req, nullptr);
      ASSERT_TRUE(r.ok()) << r.status();
      start_ms[i] = std::chrono::duration<double, std::milli>(t_call - now).count() + r->queue_ms;
    });
    // Distinct arrivals, one at a time.
    for (int k = 0; k < 2000 && lm->queue_depth() < static_cast<int>(i + 1); ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ASSERT_EQ(lm->queue_depth(), static_cast<int>(specs.size()));
  lm->Resume();
  for (auto& t : threads) t.join();
  for (size_t k = 1; k < expected.size(); ++k) {
    EXPECT_LT(start_ms[static_cast<size_t>(expected[k - 1])], start_ms[static_cast<size_t>(expected[k])])
        << "request " << expected[k - 1] << " should start before request " << expected[k];
  }
}

// Just in time: a request whose schedule moves to "playing, seconds of audio left" sits out the
// scheduler's passes while an urgent request runs, and still produces its whole answer.
TEST_F(EngineLmTest, AMovedScheduleLetsAnUrgentRequestRunAlone) {
  auto lm = Make(Config(stories_));
  ASSERT_TRUE(lm);
  // Long enough that the urgent request (about a hundred scheduler steps) overlaps it.
  const LmRun alone = Gen(*lm, Ask("Tell me about a dog.", 200));
  ASSERT_TRUE(alone.stats.ok());
  ASSERT_GE(alone.deltas.size(), 60u);
  GenerationSchedule schedule;
  schedule.Waiting(std::chrono::steady_clock::now());
  GenerateRequest a = Ask("Tell me about a dog.", 200);
  a.schedule = &schedule;
  std::thread urgent;
  LmRun b;
  std::string text;
  int deltas = 0;
  auto stats = lm->Generate(a, [&](std::string_view d) {
    text += d;
    if (++deltas == 3) {
      // The first sentence is playing with a minute of audio left; another caller asks.
      const MonoTime now = std::chrono::steady_clock::now();
      schedule.Playing(now + std::chrono::seconds(60), now);
      urgent = std::thread([&] { b = Gen(*lm, Ask("Tell me about a cat.", 100)); });
    }
    return true;
  });
  if (urgent.joinable()) urgent.join();
  ASSERT_TRUE(stats.ok()) << stats.status();
  ASSERT_TRUE(b.stats.ok()) << b.stats.status();
  EXPECT_EQ(text, alone.text);  // sitting out changes when, not what
  EXPECT_EQ(schedule.Get().priority, GenerationSchedule::kPlayingPriority);
  EXPECT_GT(lm->scheduler_stats().deferred, 0u);
}

TEST_F(EngineLmTest, PrefixReuseMatchesColdRunAndReportsCachedTokens) {
  auto warm = Make(Config(stories_));
  ASSERT_TRUE(warm);
  GenerateRequest turn1 = Ask("Tell me about a girl named Sue.", 30);
  LmRun a = Gen(*warm, turn1);
  ASSERT_TRUE(a.stats.ok());
  EXPECT_EQ(a.stats->cached_prompt_tokens, 0);

  // The same request again: every whole KV block before the last prompt token is reused (the
  // prefix cache shares blocks of kv_block_tokens).
  const int bt = Config(stories_).engine.kv_block_tokens;
  auto whole_blocks = [bt](int n) { return n / bt * bt; };
  LmRun again = Gen(*warm, turn1);
  ASSERT_TRUE(again.stats.ok());
  EXPECT_EQ(again.text, a.text);
  EXPECT_EQ(again.stats->cached_prompt_tokens, whole_blocks(again.stats->prompt_tokens - 1));

  // The conversation's next turn: the first turn's tokens are reused.
  GenerateRequest turn2 = turn1;
  turn2.messages.push_back({"assistant", a.text});
  turn2.messages.push_back({"user", "What did she do next?"});
  LmRun b = Gen(*warm, turn2);
  ASSERT_TRUE(b.stats.ok());
  const int turn1_tokens = a.stats->prompt_tokens;
  EXPECT_GE(b.stats->cached_prompt_tokens, whole_blocks(turn1_tokens - 1));
  EXPECT_LT(b.stats->cached_prompt_tokens, b.stats->prompt_tokens);

  auto cold = Make(Config(stories_));
  ASSERT_TRUE(cold);
  LmRun b_cold = Gen(*cold, turn2);
  ASSERT_TRUE(b_cold.stats.ok());
  EXPECT_EQ(b_cold.stats->cached_prompt_tokens, 0);
  EXPECT_EQ(b.text, b_cold.text);
  EXPECT_GT(warm->counters().cached_tokens, 0u);
}

TEST_F(EngineLmTest, PrefetchFeedsThePrefixTheFinalRequestReuses) {
  auto lm = Make(Config(stories_));
  ASSERT_TRUE(lm);
  GenerateRequest req = Ask("Tell me about a little bird who could not fly.", 30);
  // While the caller is still talking: the system prompt and the words so far.
  std::vector<Message> partial = {req.messages[0], {"user", "Tell me about a little bird"}};
  auto wait_prefetches = [&](uint64_t n) {
    for (int i = 0; i < 5000 && (lm->counters().prefetches_run < n || lm->queue_depth() > 0); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    // The job counts itself when done, so the scheduler is idle now.
    ASSERT_GE(lm->counters().prefetches_run, n);
  };
  // A newer prefetch that extends a queued one replaces it.
  lm->Pause();
  ASSERT_TRUE(lm->Prefetch(partial, 30).ok());
  ASSERT_TRUE(lm->Prefetch(req.messages, 30).ok());
  EXPECT_EQ(lm->queue_depth(), 1);
  lm->Resume();
  wait_prefetches(1);
  // Growing transcript: the second prefetch feeds only what the first did not.
  auto lm2 = Make(Config(stories_));
  ASSERT_TRUE(lm2);
  ASSERT_TRUE(lm2->Prefetch(partial, 30).ok());
  for (int i = 0; i < 5000 && lm2->counters().prefetches_run < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const uint64_t fed_partial = lm2->counters().prefilled_tokens;
  ASSERT_TRUE(lm2->Prefetch(req.messages, 30).ok());
  for (int i = 0; i < 5000 && lm2->counters().prefetches_run < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(lm2->counters().prefetches_run, 2u);
  EXPECT_LT(lm2->counters().prefilled_tokens - fed_partial, fed_partial);
  LmRun warm = Gen(*lm, req);
  ASSERT_TRUE(warm.stats.ok());
  const int prefix = static_cast<int>(lm->EncodeMessages(req.messages, false)->size());
  const int bt = Config(stories_).engine.kv_block_tokens;  // whole blocks are shared
  EXPECT_GE(warm.stats->cached_prompt_tokens,
            std::min(prefix, warm.stats->prompt_tokens - 1) / bt * bt);
  EXPECT_GT(warm.stats->cached_prompt_tokens, 0);

  auto cold = Make(Config(stories_));
  ASSERT_TRUE(cold);
  LmRun c = Gen(*cold, req);
  ASSERT_TRUE(c.stats.ok());
  EXPECT_EQ(warm.text, c.text);
  EXPECT_TRUE(lm->Prefetch({}, 30).ok());
}

TEST_F(EngineLmTest, ItsSeriesGoToTheRegistryItWasGiven) {
  MetricsRegistry mine;
  auto created = EngineLanguageModel::Create(Config(stories_), &mine);
  ASSERT_TRUE(created.ok()) << created.status();
  const Labels engine = {{"backend", "engine"}};
  Counter& global_requests =
      MetricsRegistry::Global().GetCounter("hotline_llm_requests_total", "LLM requests", engine);
  const uint64_t global_before = global_requests.value();
  LmRun r = Gen(**created, Ask("Tell me about a frog.", 8));
  ASSERT_TRUE(r.stats.ok()) << r.stats.status();
  EXPECT_EQ(mine.GetCounter("hotline_llm_requests_total", "LLM requests", engine).value(), 1u);
  EXPECT_EQ(
      mine.GetCounter("hotline_llm_generated_tokens_total", "Tokens generated", engine).value(),
      static_cast<uint64_t>(r.stats->generated_tokens));
  EXPECT_NE(mine.ExposeText().find("hotline_llm_first_token_seconds_count{backend=\"engine\"} 1"),
            std::string::npos)
      << mine.ExposeText();
  EXPECT_EQ(global_requests.value(), global_before);
  // Its batch scheduler's series too.
  EXPECT_GE(mine.GetCounter("hotline_engine_generated_tokens_total", "Tokens generated").value(),
            static_cast<uint64_t>(r.stats->generated_tokens));
  EXPECT_GE(mine.GetCounter("hotline_engine_steps_total", "Batched forward passes").value(), 1u);
}

TEST_F(EngineLmTest, ConcurrentCallsFromFourThreadsAllComplete) {
  auto lm = Make(Config(stories_));
  ASSERT_TRUE(lm);
  auto reference = Make(Config(stories_));
  ASSERT_TRUE(reference);
  const std::vector<std::string> topics = {"a frog", "a tree", "the moon", "a fish"};
  std::vector<std::string> expected;
  for (const std::string& t : topics) {
    auto warm_ref = Make(Config(stories_));
    LmRun r = Gen(*warm_ref, Ask("Tell me about " + t + ".", 25));
    ASSERT_TRUE(r.stats.ok());
    expected.push_back(r.text);
  }
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < topics.size(); ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 3; ++k) {
        LmRun r = Gen(*lm, Ask("Tell me about " + topics[i] + ".", 25));
        if (!r.stats.ok()) {
          ADD_FAILURE() << r.stats.status();
          continue;
        }
        EXPECT_EQ(r.text, expected[i]) << "thread " << i << " call " << k;
        ok.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 12);
  EXPECT_EQ(lm->counters().requests, 12u);
  // The calls shared forward passes (continuous batching), and left no KV blocks held.
  const engine::SchedulerStats st = lm->scheduler_stats();
  EXPECT_GE(st.max_batch_sequences, 2);
  EXPECT_EQ(st.kv_blocks_in_use, 0);
}

TEST_F(EngineLmTest, IdleCachedConversationsGiveWayWhenTheKvBudgetIsFull) {
  // stories260K in f32: 5 layers x 4 KV heads x 8 dims x 4 bytes x (K + V) = 1280 bytes per
  // token; blocks of 16 tokens = 20480 bytes. Room for one conversation, not two.
  GenerateRequest a = Ask("Tell me about a cat.", 30);
  GenerateRequest b = Ask("Tell me about a big blue boat on the sea.", 30);
  b.messages[0].content = "You are a kind storyteller for children.";
  auto blocks = [&](const GenerateRequest& r) {
    auto m = Make(Config(stories_));
    return (static_cast<int>(m->EncodeMessages(r.messages, true)->size()) + r.max_tokens + 15) / 16;
  };
  const int need_a = blocks(a), need_b = blocks(b);
  LlmEngineConfig cfg = Config(stories_);
  cfg.engine.kv_block_tokens = 16;
  cfg.engine.kv_cache_bytes = static_cast<uint64_t>(std::max(need_a, need_b) + 1) * 20480;
  ASSERT_GT(need_a + need_b, std::max(need_a, need_b) + 1) << "both would fit: no test";
  auto lm = Make(cfg);
  ASSERT_TRUE(lm);
  LmRun ra = Gen(*lm, a);
  ASSERT_TRUE(ra.stats.ok()) << ra.stats.status();
  LmRun rb = Gen(*lm, b);
  ASSERT_TRUE(rb.stats.ok()) << rb.stats.status();
  auto cold = Make(Config(stories_));
  LmRun rb_cold = Gen(*cold, b);
  EXPECT_EQ(rb.text, rb_cold.text);
}

TEST_F(EngineLmTest, BadRequestsAndConfigsAreClearErrors) {
  auto lm = Make(Config(stories_));
  ASSERT_TRUE(lm);
  GenerateRequest none;
  EXPECT_EQ(lm->Generate(none, nullptr).status().code(), StatusCode::kInvalidArgument);
  GenerateRequest zero = Ask("Hi");
  zero.max_tokens = 0;
  EXPECT_EQ(lm->Generate(zero, nullptr).status().code(), StatusCode::kInvalidArgument);
  GenerateRequest empty_stop = Ask("Hi");
  empty_stop.stop = {""};
  EXPECT_EQ(lm->Generate(empty_stop, nullptr).status().code(), StatusCode::kInvalidArgument);
  GenerateRequest bad_role = Ask("Hi");
  bad_role.messages[0].role = "narrator";
  EXPECT_EQ(lm->Generate(bad_role, nullptr).status().code(), StatusCode::kInvalidArgument);
  GenerateRequest huge = Ask(std::string(20000, 'a'));
  auto r = lm->Generate(huge, nullptr);
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(engine::IsContextLengthExceeded(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("max_seq_len"), std::string::npos) << r.status();
  GenerateRequest both = Ask("Hi");
  both.prompt = "Once";
  EXPECT_EQ(lm->Generate(both, nullptr).status().code(), StatusCode::kInvalidArgument);

  LlmEngineConfig c = Config(stories_);
  c.chat_template = "auto";  // the file has no template and no control tokens to detect
  EXPECT_FALSE(EngineLanguageModel::Create(c).ok());
  c = Config(stories_);
  c.min_reply_tokens = 0;
  EXPECT_EQ(EngineLanguageModel::Create(c).status().code(), StatusCode::kInvalidArgument);
  c = Config(std::string(HOTLINE_BINARY_DIR) + "/no-such-model.gguf");
  EXPECT_EQ(EngineLanguageModel::Create(c).status().code(), StatusCode::kNotFound);
}

// Twelve old turns and a new question: more than a 128-token context holds.
GenerateRequest LongChat(int max_tokens) {
  GenerateRequest req;
  req.max_tokens = max_tokens;
  req.messages = {{"system", "You tell short stories."}};
  for (int i = 0; i < 12; ++i) {
    req.messages.push_back({"user", "Tell me about the cat number " + std::to_string(i) + "."});
    req.messages.push_back({"assistant", "The cat " + std::to_string(i) + " sat in the sun."});
  }
  req.messages.push_back({"user", "And the dog?"});
  return req;
}

// A long conversation is prefetched with the answer room its request will ask for, so the
// prefetch keeps the same turns and the request finds its whole prompt but the last block cached.
TEST_F(EngineLmTest, PrefetchOfALongConversationKeepsTheTurnsItsRequestWill) {
  LlmEngineConfig c = Config(stories_);
  c.engine.max_seq_len = 128;
  c.min_reply_tokens = 8;
  auto lm = Make(c);
  ASSERT_TRUE(lm);
  const GenerateRequest req = LongChat(48);
  // The case that matters: a 48-token answer drops more turns than the least answer room.
  auto fit_long = lm->FitMessages(req.messages, false, {128, 48, 8});
  auto fit_least = lm->FitMessages(req.messages, false, {128, 8, 8});
  ASSERT_TRUE(fit_long.ok() && fit_least.ok());
  ASSERT_GT(fit_long->dropped_messages, fit_least->dropped_messages);

  ASSERT_TRUE(lm->Prefetch(req.messages, 48).ok());
  for (int i = 0; i < 5000 && (lm->counters().prefetches_run < 1 || lm->queue_depth() > 0); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(lm->counters().prefetches_run, 1u);
  LmRun run = Gen(*lm, req);
  ASSERT_TRUE(run.stats.ok()) << run.stats.status();
  const int bt = c.engine.kv_block_tokens;
  EXPECT_GE(run.stats->cached_prompt_tokens,
            static_cast<int>(fit_long->tokens.size()) / bt * bt);
}

TEST_F(EngineLmTest, LongConversationKeepsTheSystemPromptAndTheLatestTurns) {
  LlmEngineConfig c = Config(stories_);
  c.engine.max_seq_len = 128;
  c.min_reply_tokens = 8;
  auto lm = Make(c);
  ASSERT_TRUE(lm);
  const GenerateRequest req = LongChat(16);
  ASSERT_GT(lm->EncodeMessages(req.messages, true)->size(), 128u);
  // What the policy keeps: the system prompt and the latest whole turns that leave 16 tokens.
  auto fit = lm->FitMessages(req.messages, true, {128, 16, 8});
  ASSERT_TRUE(fit.ok()) << fit.status();
  ASSERT_GT(fit->dropped_messages, 0);
  EXPECT_EQ(fit->dropped_messages % 2, 0);  // whole user + assistant turns
  EXPECT_LE(fit->tokens.size() + 16, 128u);
  GenerateRequest kept = req;
  kept.messages.erase(kept.messages.begin() + 1, kept.messages.begin() + 1 + fit->dropped_messages);
  EXPECT_EQ(*lm->EncodeMessages(kept.messages, true), fit->tokens);
  // One more turn would not leave room for the answer (no more was dropped than needed).
  GenerateRequest one_more = req;
  one_more.messages.erase(one_more.messages.begin() + 1,
                          one_more.messages.begin() + 1 + fit->dropped_messages - 2);
  EXPECT_GT(lm->EncodeMessages(one_more.messages, true)->size() + 16, 128u);

  LmRun run = Gen(*lm, req);
  ASSERT_TRUE(run.stats.ok()) << run.stats.status();
  EXPECT_EQ(run.stats->prompt_tokens, static_cast<int>(fit->tokens.size()));
  int n = 0;
  EXPECT_EQ(run.text, DirectGreedy(stories_, *lm, kept, &n));

  // A system prompt that alone leaves fewer than min_reply_tokens: a clear error, nothing run.
  GenerateRequest too_long = req;
  too_long.messages[0].content = std::string(400, 'x');
  auto r = lm->Generate(too_long, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(engine::IsContextLengthExceeded(r.status())) << r.status();
}

TEST_F(EngineLmTest, RawPromptIsNeverCut) {
  LlmEngineConfig c = Config(stories_);
  c.engine.max_seq_len = 64;
  c.min_reply_tokens = 8;
  auto lm = Make(c);
  ASSERT_TRUE(lm);
  GenerateRequest req;
  req.prompt = "Once upon a time";
  req.max_tokens = 12;
  LmRun run = Gen(*lm, req);
  ASSERT_TRUE(run.stats.ok()) << run.stats.status();
  EXPECT_GT(run.stats->generated_tokens, 0);
  // Greedy continuation of exactly the prompt's tokens.
  engine::EncodeOptions o;
  const std::vector<int32_t> tokens = lm->tokenizer().Encode(req.prompt, o);
  EXPECT_EQ(run.stats->prompt_tokens, static_cast<int>(tokens.size()));
  engine::EngineConfig ec;
  ec.model_path = stories_;
  ec.threads = 1;
  ec.kv_type = "f32";
  auto e = engine::Engine::Load(ec);
  ASSERT_TRUE(e.ok());
  engine::SamplingConfig greedy;
  greedy.temperature = 0;
  greedy.max_tokens = 12;
  auto direct = (*e)->Generate(*(*e)->CreateSequence(), tokens, greedy, nullptr);
  ASSERT_TRUE(direct.ok());
  engine::DecodeOptions d;
  d.strip_leading_space = true;
  EXPECT_EQ(run.text, lm->tokenizer().Decode(direct->tokens, d));

  // 60 prompt tokens leave 4 of the 8 answer tokens needed: refused, not cut.
  req.prompt.clear();
  for (int i = 0; i < 200 && lm->CountTokens(req.prompt) < 59; ++i) req.prompt += " the";
  auto r = lm->Generate(req, nullptr);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(engine::IsContextLengthExceeded(r.status())) << r.status();
}

TEST_F(EngineLmTest, FactoryPicksTheBackend) {
  LlmConfig c;
  auto none = CreateLanguageModel(c);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, nullptr);
  c.backend = "engine";
  EXPECT_EQ(CreateLanguageModel(c).status().code(), StatusCode::kInvalidArgument);  // no model
  c.engine = Config(stories_);
  auto lm = CreateLanguageModel(c);
  ASSERT_TRUE(lm.ok()) << lm.status();
  EXPECT_EQ((*lm)->name(), "engine:" + stories_);
  c.backend = "gpt";
  EXPECT_EQ(CreateLanguageModel(c).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hotline::llm
