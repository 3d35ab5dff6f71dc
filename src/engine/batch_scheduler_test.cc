#include "engine/batch_scheduler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include "common/build_paths.h"
#include "common/metrics.h"
#include "engine/llama2c.h"

namespace hotline::engine {
namespace {

const std::string kDir = std::string(HOTLINE_SHARED_DATA_DIR) + "/llm/stories260k/";

class BatchSchedulerTest : public ::testing::Test {
 public:
  static void SetUpTestSuite() {
    path_ = std::string(HOTLINE_BINARY_DIR) + "/batch_sched_test_" + std::to_string(::getpid()) +
            ".gguf";
    ASSERT_TRUE(ConvertLlama2c(kDir + "stories260K.bin", kDir + "tok512.bin", path_).ok());
  }
  static void TearDownTestSuite() { std::remove(path_.c_str()); }

  static std::unique_ptr<Engine> Load(int max_seq_len = 256) {
    EngineConfig c;
    c.model_path = path_;
    c.threads = 2;
    c.kv_type = "f32";
    c.max_seq_len = max_seq_len;
    auto e = Engine::Load(c);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? std::move(e).value() : nullptr;
  }

  // Prompts of different lengths sharing a BOS and little else.
  static std::vector<std::vector<int32_t>> Prompts(int n) {
    std::vector<std::vector<int32_t>> p;
    for (int i = 0; i < n; ++i) {
      std::vector<int32_t> v = {1};
      for (int j = 0; j < 3 + 5 * i; ++j) v.push_back(int32_t(260 + (i * 37 + j * 11) % 240));
      p.push_back(v);
    }
    return p;
  }

  static std::vector<std::vector<int32_t>> Reference(const std::vector<std::vector<int32_t>>& ps,
                                                     int max_tokens) {
    auto e = Load();
    std::vector<std::vector<int32_t>> out;
    SamplingConfig greedy;
    greedy.max_tokens = max_tokens;
    for (const auto& p : ps) {
      const int seq = *e->CreateSequence();
      auto r = e->Generate(seq, p, greedy, nullptr);
      EXPECT_TRUE(r.ok()) << r.status();
      out.push_back(r.ok() ? r->tokens : std::vector<int32_t>{});
      e->RemoveSequence(seq);
    }
    return out;
  }

  static std::string path_;
};
std::string BatchSchedulerTest::path_;

BatchRequest Greedy(const std::vector<int32_t>& prompt, int max_tokens) {
  BatchRequest r;
  r.prompt = prompt;
  r.sampling.temperature = 0;
  r.sampling.max_tokens = max_tokens;
  return r;
}

// Every sequence of a batch gets the tokens it gets alone. The KV cache is f32 and the model is
// small, so batched and single matrix products agree to ~1e-6 and no argmax flips.
void ExpectBatchedEqualsSingle(BatchSchedulerConfig cfg, int n, int max_tokens,
                               const std::vector<std::vector<int32_t>>& prompts,
                               const std::vector<std::vector<int32_t>>& want,
                               SchedulerStats* stats_out) {
  auto e = BatchSchedulerTest::Load();
  ASSERT_TRUE(e);
  auto s = BatchScheduler::Create(*e, cfg);
  ASSERT_TRUE(s.ok()) << s.status();
  int max_seqs = 0;
  (*s)->set_step_observer([&](int seqs, int) { max_seqs = std::max(max_seqs, seqs); });
  (*s)->Pause();  // submit everything first, so the steps really batch
  std::vector<std::shared_ptr<RequestHandle>> handles;
  std::vector<std::vector<int32_t>> streamed(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    BatchRequest r = Greedy(prompts[size_t(i)], max_tokens);
    r.on_token = [&streamed, i](int32_t t) {
      streamed[size_t(i)].push_back(t);
      return true;
    };
    auto h = (*s)->Submit(std::move(r));
    ASSERT_TRUE(h.ok()) << h.status();
    handles.push_back(*h);
  }
  (*s)->Resume();
  for (int i = 0; i < n; ++i) {
    BatchResult r = handles[size_t(i)]->Wait();
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_EQ(r.tokens, want[size_t(i)]) << "sequence " << i;
    EXPECT_EQ(r.tokens, streamed[size_t(i)]);
    EXPECT_GT(r.timings.first_token_ms, 0);
    EXPECT_GE(r.timings.total_ms, r.timings.first_token_ms);
  }
  EXPECT_GT(max_seqs, 1);
  EXPECT_LE(max_seqs, cfg.max_batch_size);
  *stats_out = (*s)->stats();
  EXPECT_EQ(stats_out->kv_blocks_in_use, 0);
  EXPECT_EQ(stats_out->running, 0);
}

TEST_F(BatchSchedulerTest, BatchedGreedyEqualsSingleSequence) {
  const int n = 6, max_tokens = 24;
  const auto prompts = Prompts(n);
  const auto want = Reference(prompts, max_tokens);
  BatchSchedulerConfig cfg;
  cfg.max_batch_size = 4;          // two of them wait for a slot
  cfg.max_num_batched_tokens = 8;  // prompts are prefilled in chunks mixed with decodes
  cfg.kv_block_tokens = 4;
  SchedulerStats st;
  ExpectBatchedEqualsSingle(cfg, n, max_tokens, prompts, want, &st);
  EXPECT_EQ(st.preemptions, 0u);
}

TEST_F(BatchSchedulerTest, PreemptionWhenBlocksRunOutKeepsEveryOutput) {
  const int n = 5, max_tokens = 40;
  const auto prompts = Prompts(n);
  const auto want = Reference(prompts, max_tokens);
  auto e = Load();
  ASSERT_TRUE(e);
  const ModelHParams& hp = e->model().hparams();
  const uint64_t block_bytes = uint64_t(hp.n_head_kv) * hp.head_dim * 4 * 4 * 2 * hp.n_layer;
  BatchSchedulerConfig cfg;
  cfg.max_batch_size = 5;
  cfg.kv_block_tokens = 4;
  // 40 blocks of 4 tokens: each sequence needs up to 15, five of them do not fit at once.
  cfg.kv_cache_bytes = 40 * block_bytes;
  SchedulerStats st;
  ExpectBatchedEqualsSingle(cfg, n, max_tokens, prompts, want, &st);
  EXPECT_GT(st.preemptions, 0u);
}

TEST_F(BatchSchedulerTest, PrefixIsSharedWhileAnotherSequenceHoldsIt) {
  auto e = Load();
  ASSERT_TRUE(e);
  BatchSchedulerConfig cfg;
  cfg.kv_block_tokens = 4;
  auto s = BatchScheduler::Create(*e, cfg);
  ASSERT_TRUE(s.ok());
  std::vector<int32_t> system = {1};
  for (int i = 0; i < 40; ++i) system.push_back(int32_t(270 + i * 3));
  std::vector<int32_t> a = system, b = system;
  a.push_back(300);
  b.push_back(301);
  // A holds the system prompt's blocks while it generates; B arrives meanwhile.
  std::atomic<int> a_tokens{0};
  std::shared_ptr<RequestHandle> hb;
  BatchRequest ra = Greedy(a, 200);
  ra.ignore_stop_tokens = true;  // A must still be running when B is done (it is cancelled then)
  ra.on_token = [&](int32_t) {
    ++a_tokens;
    return true;
  };
  auto ha = (*s)->Submit(std::move(ra));
  ASSERT_TRUE(ha.ok());
  while (a_tokens.load() < 5) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const SchedulerStats before = (*s)->stats();
  auto hb_or = (*s)->Submit(Greedy(b, 5));
  ASSERT_TRUE(hb_or.ok());
  BatchResult rb = (*hb_or)->Wait();
  ASSERT_TRUE(rb.status.ok()) << rb.status;
  // 10 full blocks of the 41-token system prompt, shared, and its 41st token's rows, copied from
  // A's partial block.
  EXPECT_EQ(rb.timings.cached_prompt_tokens, 41);
  EXPECT_FALSE((*ha)->done());  // A still held them
  EXPECT_GE((*s)->stats().prefix_hit_tokens, before.prefix_hit_tokens + 40);
  EXPECT_EQ((*s)->stats().copied_prefix_tokens, before.copied_prefix_tokens + 1);
  // Shared and copied rows give B the tokens it gets alone.
  EXPECT_EQ(rb.tokens, Reference({b}, 5)[0]);
  (*ha)->Cancel();
  EXPECT_EQ((*ha)->Wait().finish, FinishReason::kCancelled);
}

TEST_F(BatchSchedulerTest, RequestsArrivingTogetherComputeTheirSystemPromptOnce) {
  std::vector<int32_t> system = {1};
  for (int i = 0; i < 40; ++i) system.push_back(int32_t(280 + i * 5));
  std::vector<std::vector<int32_t>> prompts;
  for (int k = 0; k < 4; ++k) {
    prompts.push_back(system);
    prompts.back().push_back(int32_t(400 + k));
  }
  const auto want = Reference(prompts, 8);
  auto e = Load();
  ASSERT_TRUE(e);
  BatchSchedulerConfig cfg;
  cfg.kv_block_tokens = 4;
  auto s = BatchScheduler::Create(*e, cfg);
  ASSERT_TRUE(s.ok());
  (*s)->Pause();
  std::vector<std::shared_ptr<RequestHandle>> hs;
  for (const auto& p : prompts) hs.push_back(*(*s)->Submit(Greedy(p, 8)));
  (*s)->Resume();
  int cached = 0;
  for (size_t k = 0; k < hs.size(); ++k) {
    BatchResult r = hs[k]->Wait();
    ASSERT_TRUE(r.status.ok()) << r.status;
    EXPECT_EQ(r.tokens, want[k]) << k;
    cached += r.timings.cached_prompt_tokens;
  }
  // The first computed the 41-token system prompt; the others shared its 10 full blocks and
  // copied the 41st token's rows from its partial block.
  EXPECT_EQ(cached, 3 * 41);
}

TEST_F(BatchSchedulerTest, CancelFreesBlocksAndOthersContinue) {
  auto e = Load();
  ASSERT_TRUE(e);
  BatchSchedulerConfig cfg;
  cfg.kv_block_tokens = 4;
  MetricsRegistry metrics;
  auto s = BatchScheduler::Create(*e, cfg, &metrics);
  ASSERT_TRUE(s.ok());
  const auto prompts = Prompts(2);
  const auto want = Reference({prompts[1]}, 30);
  std::atomic<int> n0{0};
  BatchRequest r0 = Greedy(prompts[0], 200);
  r0.on_token = [&](int32_t) {
    ++n0;
    return true;
  };
  auto h0 = (*s)->Submit(std::move(r0));
  auto h1 = (*s)->Submit(Greedy(prompts[1], 30));
  ASSERT_TRUE(h0.ok() && h1.ok());
  while (n0.load() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  (*h0)->Cancel();
  BatchResult r = (*h0)->Wait();
  EXPECT_EQ(r.finish, FinishReason::kCancelled);
  EXPECT_LT(r.tokens.size(), 200u);
  BatchResult r1 = (*h1)->Wait();
  EXPECT_EQ(r1.tokens, want[0]);
  EXPECT_EQ((*s)->stats().kv_blocks_in_use, 0);
  // The same in its registry (published with the stats, before the requests are reported
  // done): 200 blocks' worth of tokens were generated at most, none are held now.
  EXPECT_EQ(metrics.GetGauge("hotline_engine_kv_blocks_in_use", "KV cache blocks held by sequences")
                .value(),
            0.0);
  EXPECT_EQ(metrics.GetCounter("hotline_engine_generated_tokens_total", "Tokens generated").value(),
            r.tokens.size() + r1.tokens.size());
  EXPECT_GT(
      metrics.GetGauge("hotline_engine_kv_blocks_capacity", "KV cache blocks in the pool").value(),
      0.0);
}

TEST_F(BatchSchedulerTest, MaxSeqLenAndBadInputAreClearErrors) {
  auto e = Load(/*max_seq_len=*/32);
  ASSERT_TRUE(e);
  auto s = BatchScheduler::Create(*e);
  ASSERT_TRUE(s.ok());
  std::vector<int32_t> too_long(33, 300);
  auto h = (*s)->Submit(Greedy(too_long, 4));
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(h.status().message().find("max_seq_len"), std::string::npos);
  EXPECT_FALSE((*s)->Submit(Greedy({}, 4)).ok());
  EXPECT_FALSE((*s)->Submit(Greedy({1, 100000}, 4)).ok());
  // A prompt that fits generates until the context is full.
  std::vector<int32_t> near(30, 300);
  near[0] = 1;
  auto h2 = (*s)->Submit(Greedy(near, 100));
  ASSERT_TRUE(h2.ok());
  BatchResult r = (*h2)->Wait();
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(r.finish, FinishReason::kContextFull);
  EXPECT_EQ(r.tokens.size(), 3u);
}

TEST_F(BatchSchedulerTest, CallerWithSoonerDeadlineGoesFirst) {
  auto e = Load();
  ASSERT_TRUE(e);
  BatchSchedulerConfig cfg;
  cfg.max_batch_size = 1;  // one at a time: the order is visible
  cfg.max_num_batched_tokens = 8;
  auto s = BatchScheduler::Create(*e, cfg);
  ASSERT_TRUE(s.ok());
  (*s)->Pause();
  std::vector<int> finished;
  std::mutex mu;
  std::vector<std::shared_ptr<RequestHandle>> hs;
  const int64_t hints[] = {-1, 2000, 0, 500};
  for (int i = 0; i < 4; ++i) {
    BatchRequest r = Greedy({1, 300, 301}, 3);
    r.deadline_hint_ms = hints[i];
    r.on_done = [&, i](const BatchResult&) {
      std::lock_guard<std::mutex> lock(mu);
      finished.push_back(i);
    };
    hs.push_back(*(*s)->Submit(std::move(r)));
  }
  // Background work with a worse priority comes after every caller.
  BatchRequest bg = Greedy({1, 302}, 2);
  bg.priority = 1000;
  bg.deadline_hint_ms = 0;
  bg.on_done = [&](const BatchResult&) {
    std::lock_guard<std::mutex> lock(mu);
    finished.push_back(4);
  };
  hs.push_back(*(*s)->Submit(std::move(bg)));
  (*s)->Resume();
  for (auto& h : hs) h->Wait();
  EXPECT_EQ(finished, (std::vector<int>{2, 3, 1, 0, 4}));
}

// Just in time: a request rescheduled to a deadline beyond the horizon (its caller has seconds of
// audio to hear) sits out every pass while a waiting caller's request has work, then finishes
// alone with the tokens it gets without the pause.
TEST_F(BatchSchedulerTest, AFarDeadlineSitsOutWhileAnUrgentRequestRuns) {
  auto e = Load();
  ASSERT_TRUE(e);
  BatchSchedulerConfig cfg;
  cfg.defer_horizon_ms = 1000;
  auto s = BatchScheduler::Create(*e, cfg);
  ASSERT_TRUE(s.ok());
  const auto prompts = Prompts(2);
  const auto want = Reference({prompts[0], prompts[1]}, 40);
  ASSERT_GT(want[0].size(), 10u);
  std::atomic<int> a_tokens{0};
  std::atomic<bool> b_submitted{false};
  BatchRequest ra = Greedy(prompts[0], 40);
  ra.deadline_hint_ms = 0;
  // A holds the scheduler at its third token until it is rescheduled and B is queued, so the tiny
  // model cannot finish A before the test gets there (it decodes a token in well under 1 ms).
  ra.on_token = [&](int32_t) {
    if (++a_tokens == 3) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!b_submitted.load() && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    return true;
  };
  auto ha = (*s)->Submit(std::move(ra));
  ASSERT_TRUE(ha.ok());
  while (a_tokens.load() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  (*ha)->Reschedule(1, std::chrono::steady_clock::now() + std::chrono::seconds(60));
  int a_at_b_first = -1, a_at_b_done = -1;
  BatchRequest rb = Greedy(prompts[1], 40);
  rb.deadline_hint_ms = 0;
  rb.on_token = [&](int32_t) {
    if (a_at_b_first < 0) a_at_b_first = a_tokens.load();
    return true;
  };
  rb.on_done = [&](const BatchResult&) { a_at_b_done = a_tokens.load(); };
  auto hb = (*s)->Submit(std::move(rb));
  b_submitted = true;
  ASSERT_TRUE(hb.ok());
  BatchResult b = (*hb)->Wait();
  EXPECT_EQ(b.tokens, want[1]);
  EXPECT_GE(a_at_b_first, 3);
  EXPECT_EQ(a_at_b_done, a_at_b_first) << "the relaxed request ran beside the urgent one";
  BatchResult a = (*ha)->Wait();
  EXPECT_EQ(a.tokens, want[0]);  // alone again, it finished; the pause changed nothing
  EXPECT_GT((*s)->stats().deferred, 0u);
}

// A request that arrives while a pass is in flight joins it between layers: its tokens are the
// ones it gets alone, and the running sequence's are unchanged.
TEST_F(BatchSchedulerTest, ArrivalJoinsThePassInFlight) {
  const auto prompts = Prompts(2);
  const auto want = Reference(prompts, 12);
  for (const int join_max : {64, 0}) {
    auto e = Load();
    ASSERT_TRUE(e);
    BatchSchedulerConfig cfg;
    cfg.join_max_tokens = join_max;
    auto s = BatchScheduler::Create(*e, cfg);
    ASSERT_TRUE(s.ok());
    std::atomic<int> a_tokens{0};
    std::shared_ptr<RequestHandle> hb;
    std::atomic<bool> submitted{false};
    std::atomic<int> a_at_b_first{0};
    BatchScheduler* sched = s->get();
    // Submitted from the scheduler thread after the first layer of a pass, once A decodes.
    sched->set_layer_observer([&](int layers_done) {
      if (layers_done != 1 || a_tokens.load() < 2 || submitted.exchange(true)) return;
      BatchRequest rb = Greedy(prompts[1], 12);
      rb.on_token = [&](int32_t) {
        if (a_at_b_first.load() == 0) a_at_b_first = a_tokens.load();
        return true;
      };
      auto h = sched->Submit(std::move(rb));
      ASSERT_TRUE(h.ok()) << h.status();
      hb = *h;
    });
    BatchRequest ra = Greedy(prompts[0], 12);
    ra.on_token = [&](int32_t) {
      ++a_tokens;
      return true;
    };
    auto ha = sched->Submit(std::move(ra));
    ASSERT_TRUE(ha.ok());
    BatchResult r0 = (*ha)->Wait();
    ASSERT_TRUE(submitted.load()) << "A ended before B could arrive mid-pass; A made "
                                  << r0.tokens.size() << " tokens";
    BatchResult r1 = hb->Wait();
    ASSERT_TRUE(r0.status.ok()) << r0.status;
    ASSERT_TRUE(r1.status.ok()) << r1.status;
    EXPECT_EQ(r0.tokens, want[0]) << "join_max_tokens " << join_max;
    EXPECT_EQ(r1.tokens, want[1]) << "join_max_tokens " << join_max;
    EXPECT_EQ(sched->stats().joined, join_max > 0 ? 1u : 0u);
    // Joined, B's first token comes from the pass it arrived in, the one of A's 3rd token;
    // otherwise from the next pass.
    EXPECT_EQ(a_at_b_first.load(), join_max > 0 ? 3 : 4);
  }
}

TEST_F(BatchSchedulerTest, PrefillOnlyFillsThePrefixCache) {
  auto e = Load();
  ASSERT_TRUE(e);
  BatchSchedulerConfig cfg;
  cfg.kv_block_tokens = 4;
  auto s = BatchScheduler::Create(*e, cfg);
  ASSERT_TRUE(s.ok());
  std::vector<int32_t> p = {1, 300, 301, 302, 303, 304, 305, 306, 307, 308};
  BatchRequest pre;
  pre.prompt = p;
  pre.prefill_only = true;
  auto h = (*s)->Submit(std::move(pre));
  ASSERT_TRUE(h.ok());
  BatchResult r = (*h)->Wait();
  EXPECT_TRUE(r.status.ok());
  EXPECT_TRUE(r.tokens.empty());
  p.push_back(309);
  auto h2 = (*s)->Submit(Greedy(p, 2));
  ASSERT_TRUE(h2.ok());
  EXPECT_EQ((*h2)->Wait().timings.cached_prompt_tokens, 8);
}

}  // namespace
}  // namespace hotline::engine
