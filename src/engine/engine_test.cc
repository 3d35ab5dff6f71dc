#include "engine/engine.h"

#include <unistd.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include "common/build_paths.h"
#include "engine/llama2c.h"

namespace hotline::engine {
namespace {

const std::string kDir = std::string(HOTLINE_SHARED_DATA_DIR) + "/llm/stories260k/";

class EngineTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = std::string(HOTLINE_BINARY_DIR) + "/engine_test_stories260k_" + std::to_string(::getpid()) + ".gguf";
    ASSERT_TRUE(ConvertLlama2c(kDir + "stories260K.bin", kDir + "tok512.bin", path_).ok());
  }
  static void TearDownTestSuite() { std::remove(path_.c_str()); }

  std::unique_ptr<Engine> Load(const std::string& kv_type = "f32", int batch = 512,
                               bool flash_attention = true) {
    EngineConfig c;
    c.model_path = path_;
    c.threads = 2;
    c.kv_type = kv_type;
    c.max_batch_tokens = batch;
    c.flash_attention = flash_attention;
    auto e = Engine::Load(c);
    EXPECT_TRUE(e.ok()) << e.status();
    return e.ok() ? std::move(e).value() : nullptr;
  }
  static std::string path_;
};
std::string EngineTest::path_;

TEST_F(EngineTest, GreedyGenerationIsDeterministicAndTimed) {
  auto e = Load();
  ASSERT_TRUE(e);
  SamplingConfig greedy;
  greedy.max_tokens = 30;
  std::vector<int32_t> streamed;
  int seq = *e->CreateSequence();
  std::vector<int32_t> bos = {1};
  auto r = e->Generate(seq, bos, greedy, [&](int32_t t) {
    streamed.push_back(t);
    return true;
  });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->tokens, streamed);
  EXPECT_EQ(r->tokens.size(), 30u);
  EXPECT_EQ(r->finish, FinishReason::kLength);
  EXPECT_EQ(e->SequenceLength(seq), 30);  // BOS + 29 fed back; the last sampled is not fed
  EXPECT_EQ(r->timings.prompt_tokens, 1);
  EXPECT_GT(r->timings.decode_tokens_per_s(), 0);
  EXPECT_GE(r->timings.first_token_ms, r->timings.prefill_ms);

  // A second sequence gives the same tokens (its own KV cache).
  int seq2 = *e->CreateSequence();
  auto r2 = e->Generate(seq2, bos, greedy, nullptr);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->tokens, r->tokens);
  e->RemoveSequence(seq);
  e->RemoveSequence(seq2);
  EXPECT_EQ(e->kv_cache().bytes_in_use(), 0u);
}

TEST_F(EngineTest, ChunkedPrefillEqualsOnePass) {
  auto a = Load("f32", 512);
  auto b = Load("f32", 3);  // prompt split into passes of 3 tokens
  ASSERT_TRUE(a && b);
  std::vector<int32_t> prompt = {1, 403, 407, 261, 378, 429, 416, 261, 300, 458, 299};
  auto la = a->Feed(*a->CreateSequence(), prompt);
  auto lb = b->Feed(*b->CreateSequence(), prompt);
  ASSERT_TRUE(la.ok() && lb.ok());
  ASSERT_EQ(la->size(), lb->size());
  for (size_t i = 0; i < la->size(); ++i) EXPECT_NEAR((*la)[i], (*lb)[i], 1e-4);
}

TEST_F(EngineTest, PlainAttentionGivesTheFusedKernelsTokens) {
  // engine.flash_attention false: the same logits to rounding and the same greedy tokens.
  auto fused = Load("f32", 512, true);
  auto plain = Load("f32", 512, false);
  ASSERT_TRUE(fused && plain);
  std::vector<int32_t> prompt = {1, 403, 407, 261, 378, 429, 416, 261, 300, 458, 299};
  auto lf = fused->Feed(*fused->CreateSequence(), prompt);
  ASSERT_TRUE(lf.ok()) << lf.status();
  const std::vector<float> fused_logits(lf->begin(), lf->end());  // valid until the next Feed
  auto lp = plain->Feed(*plain->CreateSequence(), prompt);
  ASSERT_TRUE(lp.ok()) << lp.status();
  ASSERT_EQ(fused_logits.size(), lp->size());
  for (size_t i = 0; i < lp->size(); ++i) EXPECT_NEAR(fused_logits[i], (*lp)[i], 1e-4);
  SamplingConfig greedy;
  greedy.max_tokens = 40;
  std::vector<int32_t> bos = {1};
  auto gf = fused->Generate(*fused->CreateSequence(), bos, greedy, nullptr);
  auto gp = plain->Generate(*plain->CreateSequence(), bos, greedy, nullptr);
  ASSERT_TRUE(gf.ok() && gp.ok());
  EXPECT_EQ(gf->tokens, gp->tokens);
}

TEST_F(EngineTest, TruncateSequenceThenContinueEqualsFreshSequence) {
  auto e = Load("f32");
  ASSERT_TRUE(e);
  SamplingConfig greedy;
  greedy.max_tokens = 20;
  const std::vector<int32_t> shared = {1, 403, 407, 261, 378};
  const std::vector<int32_t> tail_a = {429, 416, 261};
  const std::vector<int32_t> tail_b = {300, 458, 299};
  // Fresh: shared + tail_b in one sequence.
  std::vector<int32_t> full_b = shared;
  full_b.insert(full_b.end(), tail_b.begin(), tail_b.end());
  auto fresh = e->Generate(*e->CreateSequence(), full_b, greedy, nullptr);
  ASSERT_TRUE(fresh.ok());

  // Reused: shared + tail_a + generated text, cut back to `shared`, then tail_b.
  const int seq = *e->CreateSequence();
  std::vector<int32_t> full_a = shared;
  full_a.insert(full_a.end(), tail_a.begin(), tail_a.end());
  ASSERT_TRUE(e->Generate(seq, full_a, greedy, nullptr).ok());
  EXPECT_GT(e->SequenceLength(seq), static_cast<int>(full_a.size()));
  ASSERT_TRUE(e->TruncateSequence(seq, static_cast<int>(shared.size())).ok());
  EXPECT_EQ(e->SequenceLength(seq), static_cast<int>(shared.size()));
  auto kept = e->SequenceTokens(seq);
  EXPECT_EQ(std::vector<int32_t>(kept.begin(), kept.end()), shared);
  auto reused = e->Generate(seq, tail_b, greedy, nullptr);
  ASSERT_TRUE(reused.ok());
  EXPECT_EQ(reused->tokens, fresh->tokens);

  EXPECT_TRUE(e->TruncateSequence(seq, 1 << 20).ok());  // longer than held: no-op
  EXPECT_FALSE(e->TruncateSequence(seq, -1).ok());
  EXPECT_FALSE(e->TruncateSequence(12345, 0).ok());
  EXPECT_TRUE(e->SequenceTokens(12345).empty());
}

TEST_F(EngineTest, CallbackCancelAndLimits) {
  auto e = Load("f16");
  ASSERT_TRUE(e);
  SamplingConfig c;
  c.max_tokens = 100;
  std::vector<int32_t> bos = {1};
  int n = 0;
  auto r = e->Generate(*e->CreateSequence(), bos, c, [&](int32_t) { return ++n < 5; });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->finish, FinishReason::kCallback);
  EXPECT_EQ(r->tokens.size(), 5u);

  std::atomic<bool> cancel{true};
  r = e->Generate(*e->CreateSequence(), bos, c, nullptr, &cancel);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->finish, FinishReason::kCancelled);
  EXPECT_TRUE(r->tokens.empty());

  EXPECT_FALSE(e->Generate(12345, bos, c, nullptr).ok());
  std::vector<int32_t> bad = {1, 99999};
  EXPECT_FALSE(e->Feed(*e->CreateSequence(), bad).ok());
  std::vector<int32_t> too_long(600, 5);
  EXPECT_EQ(e->Feed(*e->CreateSequence(), too_long).status().code(),
            StatusCode::kResourceExhausted);
  c.beam_width = 3;
  EXPECT_FALSE(e->Generate(*e->CreateSequence(), bos, c, nullptr).ok());
}

TEST_F(EngineTest, LoadErrorsAreClear) {
  EngineConfig c;
  c.model_path = std::string(HOTLINE_BINARY_DIR) + "/does-not-exist.gguf";
  EXPECT_EQ(Engine::Load(c).status().code(), StatusCode::kNotFound);
  c.model_path = path_;
  c.kv_type = "q4";
  EXPECT_FALSE(Engine::Load(c).ok());
  c.kv_type = "q8_0";  // head_dim 8 cannot hold Q8_0 blocks
  auto r = Engine::Load(c);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("multiple of 32"), std::string::npos);
}

}  // namespace
}  // namespace hotline::engine
