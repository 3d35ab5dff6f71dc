#include "train/transformer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "engine/compute_pool.h"
#include "engine/gguf.h"
#include "engine/kv_cache.h"
#include "engine/model.h"
#include "engine/model_forward.h"
#include "engine/vocab.h"
#include "train/export.h"

namespace hotline::train {
namespace {

ModelShape Tiny() {
  ModelShape s;
  s.n_vocab = 11;
  s.dim = 8;
  s.n_layer = 2;
  s.n_head = 2;
  s.n_head_kv = 1;
  s.n_ff = 12;
  s.seq_len = 8;
  return s;
}

// Weights big enough that every path (attention, gates, norms) has gradients well above float
// rounding, unlike the small training initialisation.
std::vector<float> RandomParams(const ModelShape& s, uint64_t seed) {
  ParamLayout layout(s);
  std::vector<float> p(layout.total());
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (const TensorSlice& t : layout.tensors()) {
    for (size_t i = 0; i < t.size; ++i) {
      p[t.offset + i] = t.dims.size() == 1 ? 1.0f + 0.2f * nd(rng) : 0.5f * nd(rng);
    }
  }
  return p;
}

Batch RandomBatch(const ModelShape& s, int B, int T, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Batch b;
  b.B = B;
  b.T = T;
  for (int i = 0; i < B * T; ++i) {
    b.tokens.push_back(static_cast<int32_t>(rng() % uint64_t(s.n_vocab)));
    b.targets.push_back(static_cast<int32_t>(rng() % uint64_t(s.n_vocab)));
    b.weights.push_back(i % 5 == 1 ? 0.0f : 1.0f);  // some positions do not count
  }
  return b;
}

void CheckGradients(const ModelShape& s) {
  engine::ComputePool pool(2);
  TrainModel model(s, pool);
  std::vector<float> p = RandomParams(s, 3);
  const Batch batch = RandomBatch(s, 2, 6, 4);
  ASSERT_TRUE(model.Forward(p, batch).ok());
  std::vector<float> g(p.size());
  model.Backward(p, batch, g);
  for (const TensorSlice& t : model.layout().tensors()) {
    double max_err = 0, max_g = 0;
    for (size_t i = 0; i < t.size; ++i) {
      const size_t j = t.offset + i;
      const float saved = p[j];
      const float eps = 2e-3f;
      p[j] = saved + eps;
      const double up = *model.Forward(p, batch);
      p[j] = saved - eps;
      const double down = *model.Forward(p, batch);
      p[j] = saved;
      const double numeric = (up - down) / (2.0 * eps);
      const double err = std::abs(numeric - double(g[j]));
      EXPECT_LE(err, 3e-4 + 2e-2 * std::abs(numeric))
          << t.name << "[" << i << "] analytic " << g[j] << " numeric " << numeric;
      max_err = std::max(max_err, err);
      max_g = std::max(max_g, std::abs(numeric));
    }
    // Every tensor takes part: a zero gradient everywhere would hide a missing path.
    EXPECT_GT(max_g, 1e-3) << t.name;
  }
}

TEST(TrainModel, GradientsMatchFiniteDifferences) { CheckGradients(Tiny()); }

TEST(TrainModel, GradientsMatchFiniteDifferencesTiedMultiHeadKv) {
  ModelShape s = Tiny();
  s.tied = true;
  s.n_head = 4;
  s.n_head_kv = 2;
  CheckGradients(s);
}

TEST(TrainModel, SameResultForAnyThreadCount) {
  ModelShape s = Tiny();
  s.dim = 64;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.n_ff = 96;
  s.n_vocab = 50;
  const std::vector<float> p = InitParams(s, 9);
  const Batch batch = RandomBatch(s, 3, 8, 5);
  std::vector<std::vector<float>> grads;
  std::vector<double> losses;
  for (int threads : {1, 3}) {
    engine::ComputePool pool(threads);
    TrainModel model(s, pool);
    auto loss = model.Forward(p, batch);
    ASSERT_TRUE(loss.ok());
    losses.push_back(*loss);
    grads.emplace_back(p.size());
    model.Backward(p, batch, grads.back());
  }
  EXPECT_EQ(losses[0], losses[1]);
  EXPECT_EQ(grads[0], grads[1]);
}

TEST(TrainModel, RejectsBadBatches) {
  ModelShape s = Tiny();
  engine::ComputePool pool(1);
  TrainModel model(s, pool);
  const std::vector<float> p = InitParams(s, 1);
  Batch b = RandomBatch(s, 1, 4, 1);
  b.tokens[2] = s.n_vocab;
  EXPECT_FALSE(model.Forward(p, b).ok());
  b = RandomBatch(s, 1, s.seq_len + 1, 1);
  EXPECT_FALSE(model.Forward(p, b).ok());
  b = RandomBatch(s, 1, 4, 1);
  b.weights.pop_back();
  EXPECT_FALSE(model.Forward(p, b).ok());
  EXPECT_FALSE(model.Forward(std::vector<float>(3), RandomBatch(s, 1, 4, 1)).ok());
}

engine::VocabData ByteVocab(int n_vocab) {
  engine::VocabData v;
  v.model = "gpt2";
  v.pre = "gpt2";
  for (int b = 0; b < 256; ++b) v.tokens.emplace_back(engine::ByteToBpeChar(uint8_t(b)));
  v.token_types.assign(256, 1);
  for (const char* sp : {"<|endoftext|>", "<|im_start|>", "<|im_end|>"}) {
    v.tokens.emplace_back(sp);
    v.token_types.push_back(3);
  }
  v.eos_id = 256;
  v.eot_id = 258;
  v.merges.push_back(std::string(engine::ByteToBpeChar('a')) + " " +
                     std::string(engine::ByteToBpeChar('b')));
  v.tokens.emplace_back("ab");
  v.token_types.push_back(1);
  while (int(v.tokens.size()) < n_vocab) {
    v.tokens.push_back("<|unused_" + std::to_string(v.tokens.size()) + "|>");
    v.token_types.push_back(5);
  }
  v.chat_template = kChatMlTemplate;
  return v;
}

std::vector<float> EngineLogits(std::shared_ptr<const engine::GgufFile> file, const ModelShape& s,
                                const Batch& batch, engine::ComputePool& pool) {
  auto m = engine::Model::Load(file);
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return {};
  engine::KvLayout kl{s.n_layer, s.n_head_kv, s.head_dim(), engine::KvType::kF32};
  auto kv = engine::PerSequenceKvCache::Create(kl, 16, s.seq_len);
  EXPECT_TRUE(kv.ok());
  engine::ForwardPass fwd(**m, pool);
  std::vector<engine::BatchToken> bt;
  for (int t = 0; t < batch.T; ++t) bt.push_back({batch.tokens[size_t(t)], 0, t, true});
  std::vector<float> logits;
  EXPECT_TRUE(fwd.Run(bt, **kv, &logits).ok());
  return logits;
}

// The key consistency check: the exported file run through the engine's own forward pass gives
// the trainer's logits.
void CheckEngineMatches(bool tied) {
  ModelShape s;
  s.n_vocab = 300;
  s.dim = 64;
  s.n_layer = 2;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.n_ff = 96;
  s.seq_len = 32;
  s.tied = tied;
  std::vector<float> p = InitParams(s, 11);
  // Trained-looking weights: larger than the initialisation, so attention is not uniform.
  std::mt19937_64 rng(2);
  std::normal_distribution<float> nd(0.f, 0.1f);
  for (float& x : p) x += nd(rng);
  const int T = 20;
  Batch batch = RandomBatch(s, 1, T, 8);
  engine::ComputePool pool(2);
  TrainModel model(s, pool);
  std::vector<float> logits;
  ASSERT_TRUE(model.Forward(p, batch, &logits).ok());

  engine::GgufWriter w;
  ASSERT_TRUE(BuildGguf(s, p, ByteVocab(s.n_vocab), "test", &w).ok());
  auto bytes = w.WriteBuffer();
  ASSERT_TRUE(bytes.ok());
  auto file = engine::GgufFile::FromBuffer(*bytes);
  ASSERT_TRUE(file.ok()) << file.status();
  std::shared_ptr<const engine::GgufFile> shared = std::move(*file);
  auto m = engine::Model::Load(shared);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->tied_output(), tied);
  auto vocab = engine::Vocabulary::FromGguf(*shared);
  ASSERT_TRUE(vocab.ok()) << vocab.status();
  engine::KvLayout kl{s.n_layer, s.n_head_kv, s.head_dim(), engine::KvType::kF32};
  auto kv = engine::PerSequenceKvCache::Create(kl, 16, s.seq_len);
  ASSERT_TRUE(kv.ok());
  engine::ForwardPass fwd(**m, pool);
  std::vector<engine::BatchToken> bt;
  for (int t = 0; t < T; ++t) bt.push_back({batch.tokens[size_t(t)], 0, t, true});
  std::vector<float> engine_logits;
  ASSERT_TRUE(fwd.Run(bt, **kv, &engine_logits).ok());
  ASSERT_EQ(engine_logits.size(), logits.size());
  double max_diff = 0, max_abs = 0;
  for (size_t i = 0; i < logits.size(); ++i) {
    max_diff = std::max(max_diff, double(std::abs(logits[i] - engine_logits[i])));
    max_abs = std::max(max_abs, double(std::abs(logits[i])));
  }
  EXPECT_GT(max_abs, 0.1);
  EXPECT_LT(max_diff, 1e-4 * std::max(1.0, max_abs)) << "max |logit| " << max_abs;
}

TEST(TrainModel, ExportedModelMatchesEngineForward) { CheckEngineMatches(false); }
TEST(TrainModel, ExportedTiedModelMatchesEngineForward) { CheckEngineMatches(true); }

}  // namespace
}  // namespace hotline::train

namespace hotline::train {
namespace {

TEST(TrainModel, Q8ExportStaysCloseToTheTrainer) {
  ModelShape s;
  s.n_vocab = 300;
  s.dim = 64;
  s.n_layer = 2;
  s.n_head = 4;
  s.n_head_kv = 4;
  s.n_ff = 96;
  s.seq_len = 32;
  std::vector<float> p = InitParams(s, 12);
  std::mt19937_64 rng(3);
  std::normal_distribution<float> nd(0.f, 0.1f);
  for (float& x : p) x += nd(rng);
  const Batch batch = RandomBatch(s, 1, 16, 9);
  engine::ComputePool pool(2);
  TrainModel model(s, pool);
  std::vector<float> logits;
  ASSERT_TRUE(model.Forward(p, batch, &logits).ok());
  const std::string f32 = ::testing::TempDir() + "/train_export_f32.gguf";
  const std::string q8 = ::testing::TempDir() + "/train_export_q8.gguf";
  ASSERT_TRUE(ExportGgufF32(s, p, ByteVocab(s.n_vocab), "t", f32).ok());
  ASSERT_TRUE(ExportGgufQ8(f32, q8, pool).ok());
  auto file = engine::GgufFile::Open(q8);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ((*file)->FindTensor("blk.0.attn_q.weight")->type, engine::GgmlType::Q8_0);
  std::shared_ptr<const engine::GgufFile> shared = std::move(*file);
  const std::vector<float> ql = EngineLogits(shared, s, batch, pool);
  ASSERT_EQ(ql.size(), logits.size());
  double max_diff = 0, max_abs = 0;
  for (size_t i = 0; i < ql.size(); ++i) {
    max_diff = std::max(max_diff, double(std::abs(ql[i] - logits[i])));
    max_abs = std::max(max_abs, double(std::abs(logits[i])));
  }
  EXPECT_LT(max_diff, 0.05 * max_abs);
  std::remove(f32.c_str());
  std::remove(q8.c_str());
}

}  // namespace
}  // namespace hotline::train
