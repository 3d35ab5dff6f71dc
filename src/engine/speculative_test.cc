#include "engine/speculative.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/build_paths.h"
#include "engine/batch_scheduler.h"
#include "engine/llama2c.h"

namespace hotline::engine {
namespace {

using Tokens = std::vector<int32_t>;

Tokens DraftOf(const Tokens& context, int max_tokens, int* matched = nullptr) {
  Tokens out;
  DraftFromContext(context, DraftConfig{}, max_tokens, &out, matched);
  return out;
}

TEST(DraftFromContext, TakesWhatFollowedTheLatestEarlierOccurrence) {
  // "5 6" occurs twice before the suffix; the latest one was followed by 9 10 11.
  const Tokens ctx = {1, 5, 6, 7, 8, 2, 5, 6, 9, 10, 11, 3, 5, 6};
  int matched = 0;
  EXPECT_EQ(DraftOf(ctx, 8, &matched), (Tokens{9, 10, 11, 3, 5, 6}));
  EXPECT_EQ(matched, 2);
  EXPECT_EQ(DraftOf(ctx, 2), (Tokens{9, 10}));
  EXPECT_TRUE(DraftOf(ctx, 0).empty());
}

TEST(DraftFromContext, PrefersTheLongestSuffix) {
  // The 3-gram "4 5 6" occurred once (followed by 7); the 2-gram "5 6" more recently (by 9).
  const Tokens ctx = {4, 5, 6, 7, 1, 5, 6, 9, 2, 4, 5, 6};
  int matched = 0;
  EXPECT_EQ(DraftOf(ctx, 1, &matched), (Tokens{7}));
  EXPECT_EQ(matched, 3);
}

TEST(DraftFromContext, NothingWithoutAnEarlierOccurrence) {
  int matched = 7;
  EXPECT_TRUE(DraftOf({1, 2, 3, 4, 5}, 4, &matched).empty());
  EXPECT_EQ(matched, 0);
  EXPECT_TRUE(DraftOf({}, 4).empty());
  EXPECT_TRUE(DraftOf({3}, 4).empty());
  // One token repeated: the 2-gram "3 3" first occurs at the start, followed by a 3.
  EXPECT_EQ(DraftOf({3, 3, 3}, 4), (Tokens{3}));
}

TEST(AnswerNgramCache, DraftsFromTheMostRecentAnswerHoldingTheSuffix) {
  AnswerNgramCache cache(DraftConfig{}, 1000);
  cache.Add(Tokens{10, 11, 12, 13, 14});
  cache.Add(Tokens{20, 11, 12, 30, 31});
  Tokens out;
  int matched = 0;
  // "11 12": both answers hold it; the later one wins.
  EXPECT_EQ(cache.Draft(Tokens{1, 2, 11, 12}, 4, &out, &matched), 2);
  EXPECT_EQ(out, (Tokens{30, 31}));
  EXPECT_EQ(matched, 2);
  // "10 11 12": only the first answer, and the longer match.
  out.clear();
  EXPECT_EQ(cache.Draft(Tokens{10, 11, 12}, 1, &out, &matched), 1);
  EXPECT_EQ(out, (Tokens{13}));
  EXPECT_EQ(matched, 3);
  // An n-gram at the very end of an answer has nothing after it.
  out.clear();
  EXPECT_EQ(cache.Draft(Tokens{30, 31}, 4, &out), 0);
  EXPECT_EQ(cache.Draft(Tokens{7, 8}, 4, &out), 0);
}

TEST(AnswerNgramCache, ForgetsTheOldestAnswersBeyondItsCapacity) {
  AnswerNgramCache cache(DraftConfig{}, 10);
  cache.Add(Tokens{1, 2, 3, 4, 5, 6});
  cache.Add(Tokens{7, 8, 9, 10, 11, 12});  // 12 tokens > 10: the first answer goes
  EXPECT_EQ(cache.answers(), 1);
  EXPECT_EQ(cache.tokens(), 6);
  Tokens out;
  EXPECT_EQ(cache.Draft(Tokens{1, 2}, 4, &out), 0);
  EXPECT_EQ(cache.Draft(Tokens{7, 8}, 4, &out), 4);
  EXPECT_EQ(out, (Tokens{9, 10, 11, 12}));
  // Too short to draft from, or larger than the whole cache: ignored.
  cache.Add(Tokens{1, 2});
  cache.Add(Tokens(11, 5));
  EXPECT_EQ(cache.answers(), 1);
}

// The scheduler with drafts against the same scheduler without them, on the real (tiny) trained
// stories260K model: its greedy stories repeat whole sentences, so prompt lookup has work.
const std::string kDir = std::string(HOTLINE_SHARED_DATA_DIR) + "/llm/stories260k/";

class SpeculativeSchedulerTest : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    path_ = std::string(HOTLINE_BINARY_DIR) + "/speculative_test_" + std::to_string(::getpid()) +
            ".gguf";
    ASSERT_TRUE(ConvertLlama2c(kDir + "stories260K.bin", kDir + "tok512.bin", path_).ok());
  }
  static void TearDownTestSuite() { std::remove(path_.c_str()); }

  static std::unique_ptr<Engine> Load(const std::string& kv_type = "f32", int max_seq_len = 512) {
    EngineConfig c;
    c.model_path = path_;
    c.threads = 2;
    c.kv_type = kv_type;
    c.max_seq_len = max_seq_len;
    auto e = Engine::Load(c);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? std::move(e).value() : nullptr;
  }

  static BatchSchedulerConfig Config(int draft_tokens) {
    BatchSchedulerConfig c;
    c.kv_block_tokens = 8;
    c.speculative_tokens = draft_tokens;
    c.speculative_adaptive = false;  // drafts in every pass that allows them: deterministic
    return c;
  }

  // Runs `requests` through one scheduler, submitted together (or one after another), and
  // returns each one's tokens (also checking that what was streamed is what was returned).
  static std::vector<Tokens> Run(Engine& e, const BatchSchedulerConfig& cfg,
                                 std::vector<BatchRequest> requests, bool together,
                                 SchedulerStats* stats = nullptr,
                                 std::vector<BatchResult>* results = nullptr) {
    auto s = BatchScheduler::Create(e, cfg);
    EXPECT_TRUE(s.ok()) << s.status();
    if (!s.ok()) return {};
    std::vector<Tokens> streamed(requests.size()), out;
    std::vector<std::shared_ptr<RequestHandle>> handles;
    if (together) (*s)->Pause();
    for (size_t i = 0; i < requests.size(); ++i) {
      requests[i].on_token = [&streamed, i](int32_t t) {
        streamed[i].push_back(t);
        return true;
      };
      auto h = (*s)->Submit(std::move(requests[i]));
      EXPECT_TRUE(h.ok()) << h.status();
      if (!h.ok()) return {};
      if (!together) (*h)->Wait();
      handles.push_back(*h);
    }
    if (together) (*s)->Resume();
    for (size_t i = 0; i < handles.size(); ++i) {
      BatchResult r = handles[i]->Wait();
      EXPECT_TRUE(r.status.ok()) << r.status;
      EXPECT_EQ(r.tokens, streamed[i]) << "request " << i;
      out.push_back(r.tokens);
      if (results != nullptr) results->push_back(r);
    }
    if (stats != nullptr) *stats = (*s)->stats();
    EXPECT_EQ((*s)->stats().kv_blocks_in_use, 0);
    return out;
  }

  // BOS and the first `n` tokens of the model's own greedy story: its continuation repeats
  // sentences of it.
  static Tokens StoryPrompt(Engine& e, int n) {
    SamplingConfig greedy;
    greedy.max_tokens = n;
    const int seq = *e.CreateSequence();
    auto r = e.Generate(seq, Tokens{1}, greedy, nullptr);
    e.RemoveSequence(seq);
    EXPECT_TRUE(r.ok());
    Tokens p = {1};
    if (r.ok()) p.insert(p.end(), r->tokens.begin(), r->tokens.end());
    return p;
  }

  static BatchRequest Request(const Tokens& prompt, int max_tokens, float temperature = 0) {
    BatchRequest r;
    r.prompt = prompt;
    r.sampling.temperature = temperature;
    r.sampling.max_tokens = max_tokens;
    r.sampling.seed = 7;
    if (temperature > 0) r.sampling.repetition_penalty = 1.1f;
    return r;
  }

  static std::string path_;
};
std::string SpeculativeSchedulerTest::path_;

TEST_F(SpeculativeSchedulerTest, GreedyOutputIsUnchangedAndDraftsAreAccepted) {
  auto e = Load();
  ASSERT_TRUE(e);
  const Tokens story = StoryPrompt(*e, 120);
  std::vector<BatchRequest> reqs = {Request(story, 150),
                                    Request(Tokens(story.begin(), story.begin() + 50), 100)};
  const auto want = Run(*e, Config(0), reqs, /*together=*/true);
  SchedulerStats st;
  std::vector<BatchResult> results;
  const auto got = Run(*e, Config(4), reqs, true, &st, &results);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "request " << i;
  EXPECT_GT(st.drafted_tokens, 0u);
  EXPECT_GT(st.accepted_tokens, 0u);
  EXPECT_LE(st.accepted_tokens, st.drafted_tokens);
  int accepted = 0;
  for (const BatchResult& r : results) accepted += r.timings.accepted_tokens;
  EXPECT_EQ(uint64_t(accepted), st.accepted_tokens);
  // Alone, every accepted draft is a token that needed no pass of its own.
  SchedulerStats plain, alone;
  Run(*e, Config(0), {reqs[0]}, true, &plain);
  Run(*e, Config(4), {reqs[0]}, true, &alone);
  EXPECT_GT(alone.accepted_tokens, 0u);
  EXPECT_EQ(alone.steps + alone.accepted_tokens, plain.steps);
}

TEST_F(SpeculativeSchedulerTest, SeededSamplingWithAPenaltyIsUnchanged) {
  auto e = Load("f16");
  ASSERT_TRUE(e);
  const Tokens story = StoryPrompt(*e, 100);
  std::vector<BatchRequest> reqs = {Request(story, 120, 0.8f), Request(story, 120, 0.3f)};
  reqs[1].sampling.seed = 11;
  const auto want = Run(*e, Config(0), reqs, true);
  SchedulerStats st;
  const auto got = Run(*e, Config(6), reqs, true, &st);
  EXPECT_EQ(got, want);
  EXPECT_GT(st.accepted_tokens, 0u);
}

TEST_F(SpeculativeSchedulerTest, RecentAnswersAreDraftedFrom) {
  auto e = Load();
  ASSERT_TRUE(e);
  // A short prompt holds nothing to look up; the same question a second time finds the first
  // answer in the answer cache.
  const Tokens prompt = {1, 365, 301, 280};
  std::vector<BatchRequest> reqs = {Request(prompt, 60), Request(prompt, 60)};
  std::vector<BatchResult> results;
  const auto got = Run(*e, Config(4), reqs, /*together=*/false, nullptr, &results);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], got[1]);
  EXPECT_EQ(got[0], Run(*e, Config(0), {Request(prompt, 60)}, false)[0]);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_GT(results[1].timings.accepted_tokens, results[0].timings.accepted_tokens);
  EXPECT_GE(results[1].timings.accepted_tokens, int(got[1].size()) / 2);

  // Without the cache, only prompt lookup: the repeat gains nothing over the first.
  BatchSchedulerConfig no_cache = Config(4);
  no_cache.speculative_cache_tokens = 0;
  results.clear();
  Run(*e, no_cache, reqs, false, nullptr, &results);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].timings.accepted_tokens, results[0].timings.accepted_tokens);
}

TEST_F(SpeculativeSchedulerTest, LimitsHoldInsideADraft) {
  // max_tokens and the context's end fall inside accepted drafts: the output stops exactly
  // where it does without drafts.
  auto e = Load("f32", 300);
  ASSERT_TRUE(e);
  const Tokens story = StoryPrompt(*e, 120);
  for (int max_tokens : {1, 2, 5, 13}) {
    std::vector<BatchRequest> reqs = {Request(story, max_tokens)};
    std::vector<BatchResult> plain, spec;
    const auto want = Run(*e, Config(0), reqs, true, nullptr, &plain);
    const auto got = Run(*e, Config(8), reqs, true, nullptr, &spec);
    EXPECT_EQ(got, want) << "max_tokens " << max_tokens;
    ASSERT_EQ(spec.size(), 1u);
    EXPECT_EQ(spec[0].finish, plain[0].finish);
  }
  BatchRequest to_the_end = Request(story, 400);
  to_the_end.ignore_stop_tokens = true;
  std::vector<BatchResult> plain, spec;
  const auto want = Run(*e, Config(0), {to_the_end}, true, nullptr, &plain);
  BatchSchedulerConfig eager = Config(8);
  eager.speculative_min_acceptance = 0;
  const auto got = Run(*e, eager, {to_the_end}, true, nullptr, &spec);
  EXPECT_EQ(got, want);
  ASSERT_EQ(spec.size(), 1u);
  EXPECT_EQ(spec[0].finish, FinishReason::kContextFull);
  EXPECT_EQ(plain[0].finish, FinishReason::kContextFull);
  EXPECT_GT(spec[0].timings.accepted_tokens, 0);
}

TEST_F(SpeculativeSchedulerTest, NoDraftsWhenTheRequestOrTheBatchSaysNo) {
  auto e = Load();
  ASSERT_TRUE(e);
  const Tokens story = StoryPrompt(*e, 100);
  BatchRequest off = Request(story, 60);
  off.speculate = false;
  SchedulerStats st;
  Run(*e, Config(4), {off}, true, &st);
  EXPECT_EQ(st.drafted_tokens, 0u);

  // Three sequences decoding in lockstep, drafts only for passes of at most two.
  BatchSchedulerConfig cfg = Config(4);
  cfg.speculative_max_batch = 2;
  std::vector<BatchRequest> three;
  for (int i = 0; i < 3; ++i) {
    three.push_back(Request(story, 40));
    three.back().ignore_stop_tokens = true;
  }
  Run(*e, cfg, three, true, &st);
  EXPECT_EQ(st.drafted_tokens, 0u);
}

TEST_F(SpeculativeSchedulerTest, LowAcceptancePausesDrafting) {
  auto e = Load();
  ASSERT_TRUE(e);
  const Tokens story = StoryPrompt(*e, 120);
  std::vector<BatchRequest> reqs = {Request(story, 250)};
  reqs[0].ignore_stop_tokens = true;
  BatchSchedulerConfig eager = Config(4), strict = Config(4);
  eager.speculative_min_acceptance = 0;
  strict.speculative_min_acceptance = 1;  // any rejection in 16 drafts pauses for 32 tokens
  SchedulerStats a, b;
  const auto want = Run(*e, eager, reqs, true, &a);
  const auto got = Run(*e, strict, reqs, true, &b);
  EXPECT_EQ(got, want);
  ASSERT_LT(a.accepted_tokens, a.drafted_tokens);  // the premise: some drafts were wrong
  EXPECT_LT(b.drafted_tokens, a.drafted_tokens);
}

TEST(SpeculationGovernor, DraftsOnlyWhereTheyPay) {
  SpeculationGovernor g(2);
  // First a few passes of each kind, drafts first.
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(g.Choose(1));
    g.Record(1, true, 3.0, 3);  // 1 ms per token with drafts
  }
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(g.Choose(1));
    g.Record(1, false, 2.0, 1);  // 2 ms per token without
  }
  EXPECT_DOUBLE_EQ(g.draft_ms_per_token(1), 1.0);
  EXPECT_DOUBLE_EQ(g.plain_ms_per_token(1), 2.0);
  // Drafts pay at size 1: chosen, except every 32nd pass, which re-measures the other kind.
  int chosen = 0;
  for (int i = 0; i < 64; ++i) chosen += g.Choose(1);
  EXPECT_EQ(chosen, 62);
  // Drafts cost more than they give at size 2 (a compute-bound pass): not chosen.
  for (int i = 0; i < 4; ++i) {
    g.Choose(2);
    g.Record(2, true, 8.0, 4);
  }
  for (int i = 0; i < 4; ++i) {
    g.Choose(2);
    g.Record(2, false, 1.0, 2);
  }
  chosen = 0;
  for (int i = 0; i < 64; ++i) chosen += g.Choose(2);
  EXPECT_EQ(chosen, 2);
  // The averages follow a change: drafts get cheaper at size 2, and win again.
  for (int i = 0; i < 40; ++i) g.Record(2, true, 0.5, 4);
  EXPECT_LT(g.draft_ms_per_token(2), g.plain_ms_per_token(2));
  EXPECT_TRUE(g.Choose(2));
  // Sizes beyond the limit never draft.
  EXPECT_FALSE(g.Choose(3));
  EXPECT_FALSE(g.Choose(0));
}

TEST(SpeculativeConfig, RangesAreChecked) {
  BatchSchedulerConfig c;
  c.speculative_tokens = 33;
  EXPECT_FALSE(c.Validate().ok());
  c.speculative_tokens = 4;
  c.speculative_min_acceptance = -0.1;
  EXPECT_FALSE(c.Validate().ok());
  c.speculative_min_acceptance = 0.5;
  c.speculative_max_batch = 0;
  EXPECT_FALSE(c.Validate().ok());
  c.speculative_max_batch = 4;
  EXPECT_TRUE(c.Validate().ok());
}

}  // namespace
}  // namespace hotline::engine
