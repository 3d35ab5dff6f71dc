#include "engine/model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <vector>

#include "common/build_paths.h"
#include "engine/model_forward.h"
#include "engine/quant.h"

namespace hotline::engine {
namespace {

struct Spec {
  std::string arch = "llama";
  int n_embd = 256;
  int n_layer = 2;
  int n_head = 8;
  int n_head_kv = 2;
  int n_ff = 512;
  int n_vocab = 300;
  bool bias = false;
  bool tied = false;
  bool rope_freqs = false;  // Llama 3.1/3.2 layout: rope_freqs.weight beside rope.freq_base
  uint64_t seed = 7;
  std::function<void(GgufWriter&)> extra;  // more keys or tensors
};

// A random model whose matrices are stored as `type` (norms and biases stay F32). The same spec
// gives the same underlying float weights for every type.
std::shared_ptr<const GgufFile> RandomModel(const Spec& s, GgmlType type) {
  std::mt19937_64 rng(s.seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  GgufWriter w;
  const std::string a = s.arch + ".";
  w.SetString("general.architecture", s.arch);
  w.SetU32(a + "embedding_length", static_cast<uint32_t>(s.n_embd));
  w.SetU32(a + "block_count", static_cast<uint32_t>(s.n_layer));
  w.SetU32(a + "attention.head_count", static_cast<uint32_t>(s.n_head));
  w.SetU32(a + "attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  w.SetU32(a + "feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w.SetU32(a + "context_length", 512);
  w.SetF32(a + "rope.freq_base", s.arch == "qwen2" ? 1000000.f : 10000.f);
  w.SetF32(a + "attention.layer_norm_rms_epsilon", 1e-6f);
  auto matrix = [&](const std::string& name, int cols, int rows, float scale) {
    std::vector<float> f(static_cast<size_t>(cols) * rows);
    for (float& x : f) x = nd(rng) * scale;
    const int64_t rb = *RowBytes(type, cols);
    std::vector<uint8_t> q(size_t(rb) * rows);
    for (int r = 0; r < rows; ++r) {
      EXPECT_TRUE(QuantizeRow(type, f.data() + size_t(r) * cols, q.data() + size_t(r) * rb, cols).ok());
    }
    const int64_t dims[] = {cols, rows};
    EXPECT_TRUE(w.AddTensor(name, type, dims, std::move(q)).ok());
  };
  auto vec = [&](const std::string& name, int n, float mean, float scale) {
    std::vector<float> f(static_cast<size_t>(n));
    for (float& x : f) x = mean + nd(rng) * scale;
    std::vector<uint8_t> b(f.size() * 4);
    std::memcpy(b.data(), f.data(), b.size());
    const int64_t dims[] = {n};
    EXPECT_TRUE(w.AddTensor(name, GgmlType::F32, dims, std::move(b)).ok());
  };
  const int hd = s.n_embd / s.n_head;
  if (s.rope_freqs) {
    // Llama 3's shape of factors: 1 for the fast pairs, up to 8 for the slow ones.
    std::vector<float> f(static_cast<size_t>(hd / 2));
    for (size_t i = 0; i < f.size(); ++i) f[i] = 1.0f + 7.0f * float(i) / float(f.size() - 1);
    std::vector<uint8_t> b(f.size() * 4);
    std::memcpy(b.data(), f.data(), b.size());
    const int64_t dims[] = {static_cast<int64_t>(f.size())};
    EXPECT_TRUE(w.AddTensor("rope_freqs.weight", GgmlType::F32, dims, std::move(b)).ok());
  }
  // Scales keep activations O(1) so logits are neither flat nor saturated.
  matrix("token_embd.weight", s.n_embd, s.n_vocab, 1.0f);
  vec("output_norm.weight", s.n_embd, 1.f, 0.1f);
  if (!s.tied) matrix("output.weight", s.n_embd, s.n_vocab, 2.0f / std::sqrt(float(s.n_embd)));
  for (int l = 0; l < s.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    const float in_scale = 1.0f / std::sqrt(float(s.n_embd));
    vec(b + "attn_norm.weight", s.n_embd, 1.f, 0.1f);
    matrix(b + "attn_q.weight", s.n_embd, s.n_head * hd, in_scale);
    matrix(b + "attn_k.weight", s.n_embd, s.n_head_kv * hd, in_scale);
    matrix(b + "attn_v.weight", s.n_embd, s.n_head_kv * hd, in_scale);
    matrix(b + "attn_output.weight", s.n_head * hd, s.n_embd, in_scale);
    if (s.bias) {
      vec(b + "attn_q.bias", s.n_head * hd, 0.f, 0.5f);
      vec(b + "attn_k.bias", s.n_head_kv * hd, 0.f, 0.5f);
      vec(b + "attn_v.bias", s.n_head_kv * hd, 0.f, 0.5f);
    }
    vec(b + "ffn_norm.weight", s.n_embd, 1.f, 0.1f);
    matrix(b + "ffn_gate.weight", s.n_embd, s.n_ff, in_scale);
    matrix(b + "ffn_up.weight", s.n_embd, s.n_ff, in_scale);
    matrix(b + "ffn_down.weight", s.n_ff, s.n_embd, 1.0f / std::sqrt(float(s.n_ff)));
  }
  if (s.extra) s.extra(w);
  auto buf = w.WriteBuffer();
  EXPECT_TRUE(buf.ok());
  auto f = GgufFile::FromBuffer(*buf, s.arch + "-random-" + TypeName(type));
  EXPECT_TRUE(f.ok()) << f.status();
  return std::shared_ptr<const GgufFile>(std::move(f).value());
}

std::unique_ptr<KvCache> Cache(const Model& m, KvType t = KvType::kF32, int block = 16) {
  const ModelHParams& hp = m.hparams();
  auto kv = PerSequenceKvCache::Create({hp.n_layer, hp.n_head_kv, hp.head_dim, t}, block, 512);
  EXPECT_TRUE(kv.ok()) << kv.status();
  return std::move(kv).value();
}

std::vector<int32_t> Tokens(int n, int vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int32_t& x : t) x = static_cast<int32_t>(rng() % uint64_t(vocab));
  return t;
}

// Logits of every position of one sequence, fed as one batch.
std::vector<float> RunPrompt(const Model& m, const std::vector<int32_t>& toks, ComputePool& pool,
                             KvType kv_type = KvType::kF32) {
  auto kv = Cache(m, kv_type);
  ForwardPass fwd(m, pool);
  std::vector<BatchToken> batch;
  for (size_t i = 0; i < toks.size(); ++i) batch.push_back({toks[i], 0, int(i), true});
  std::vector<float> logits;
  Status s = fwd.Run(batch, *kv, &logits);
  EXPECT_TRUE(s.ok()) << s;
  return logits;
}

// ---- A straightforward float reference: full score matrix, plain loops, its own rope. ----
std::vector<float> Dequant(const GgufFile& f, const std::string& name) {
  const GgufTensorInfo* t = f.FindTensor(name);
  if (t == nullptr) return {};
  std::vector<float> out(size_t(t->num_elements()));
  const int64_t rb = *RowBytes(t->type, t->ne[0]);
  for (int64_t r = 0; r < t->num_rows(); ++r) {
    DequantizeRow(t->type, t->data + r * rb, out.data() + r * t->ne[0], t->ne[0]);
  }
  return out;
}

std::vector<float> MatVec(const std::vector<float>& w, const std::vector<float>& x, size_t rows) {
  std::vector<float> y(rows);
  const size_t cols = x.size();
  for (size_t r = 0; r < rows; ++r) {
    double s = 0;
    for (size_t c = 0; c < cols; ++c) s += double(w[r * cols + c]) * x[c];
    y[r] = float(s);
  }
  return y;
}

std::vector<float> ReferenceForward(const GgufFile& f, const std::vector<int32_t>& toks) {
  auto hp = *ModelHParams::FromGguf(f);
  const size_t E = size_t(hp.n_embd), hd = size_t(hp.head_dim), H = size_t(hp.n_head),
               KV = size_t(hp.n_head_kv), T = toks.size();
  auto emb = Dequant(f, "token_embd.weight");
  auto out_w = f.FindTensor("output.weight") ? Dequant(f, "output.weight") : emb;
  auto rms = [&](const std::vector<float>& x, const std::vector<float>& w) {
    double ss = 0;
    for (float v : x) ss += double(v) * v;
    const double sc = 1.0 / std::sqrt(ss / double(x.size()) + hp.rms_eps);
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = float(x[i] * sc * w[i]);
    return y;
  };
  const std::vector<float> factors =
      f.FindTensor("rope_freqs.weight") ? Dequant(f, "rope_freqs.weight") : std::vector<float>();
  auto rope = [&](float* v, size_t pos) {
    const size_t half = size_t(hp.n_rot) / 2;
    for (size_t i = 0; i < half; ++i) {
      double theta = double(pos) * std::pow(double(hp.rope_freq_base), -2.0 * i / hp.n_rot);
      if (!factors.empty()) theta /= double(factors[i]);
      const size_t a = hp.arch == ModelArch::kLlama ? 2 * i : i;
      const size_t b = hp.arch == ModelArch::kLlama ? 2 * i + 1 : i + half;
      const double x0 = v[a], x1 = v[b];
      v[a] = float(x0 * std::cos(theta) - x1 * std::sin(theta));
      v[b] = float(x0 * std::sin(theta) + x1 * std::cos(theta));
    }
  };
  std::vector<std::vector<float>> x(T);
  for (size_t t = 0; t < T; ++t) x[t].assign(emb.begin() + toks[t] * E, emb.begin() + (toks[t] + 1) * E);
  for (int l = 0; l < hp.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    auto wq = Dequant(f, b + "attn_q.weight"), wk = Dequant(f, b + "attn_k.weight"),
         wv = Dequant(f, b + "attn_v.weight"), wo = Dequant(f, b + "attn_output.weight");
    auto bq = Dequant(f, b + "attn_q.bias"), bk = Dequant(f, b + "attn_k.bias"),
         bv = Dequant(f, b + "attn_v.bias");
    auto an = Dequant(f, b + "attn_norm.weight"), fn = Dequant(f, b + "ffn_norm.weight");
    auto wg = Dequant(f, b + "ffn_gate.weight"), wu = Dequant(f, b + "ffn_up.weight"),
         wd = Dequant(f, b + "ffn_down.weight");
    std::vector<std::vector<float>> Q(T), K(T), V(T);
    for (size_t t = 0; t < T; ++t) {
      auto xn = rms(x[t], an);
      Q[t] = MatVec(wq, xn, H * hd);
      K[t] = MatVec(wk, xn, KV * hd);
      V[t] = MatVec(wv, xn, KV * hd);
      for (size_t i = 0; i < bq.size(); ++i) Q[t][i] += bq[i];
      for (size_t i = 0; i < bk.size(); ++i) K[t][i] += bk[i];
      for (size_t i = 0; i < bv.size(); ++i) V[t][i] += bv[i];
      for (size_t h = 0; h < H; ++h) rope(&Q[t][h * hd], t);
      for (size_t h = 0; h < KV; ++h) rope(&K[t][h * hd], t);
    }
    for (size_t t = 0; t < T; ++t) {
      std::vector<float> att(H * hd, 0.f);
      for (size_t h = 0; h < H; ++h) {
        const size_t kh = h / (H / KV);
        std::vector<double> sc(t + 1);
        double mx = -1e300;
        for (size_t j = 0; j <= t; ++j) {
          double d = 0;
          for (size_t i = 0; i < hd; ++i) d += double(Q[t][h * hd + i]) * K[j][kh * hd + i];
          sc[j] = d / std::sqrt(double(hd));
          mx = std::max(mx, sc[j]);
        }
        double sum = 0;
        for (double& s : sc) sum += (s = std::exp(s - mx));
        for (size_t j = 0; j <= t; ++j) {
          for (size_t i = 0; i < hd; ++i) att[h * hd + i] += float(sc[j] / sum * V[j][kh * hd + i]);
        }
      }
      auto o = MatVec(wo, att, E);
      for (size_t i = 0; i < E; ++i) x[t][i] += o[i];
      auto xn = rms(x[t], fn);
      auto g = MatVec(wg, xn, size_t(hp.n_ff)), u = MatVec(wu, xn, size_t(hp.n_ff));
      for (size_t i = 0; i < g.size(); ++i) g[i] = float(g[i] / (1.0 + std::exp(-double(g[i]))) * u[i]);
      auto d = MatVec(wd, g, E);
      for (size_t i = 0; i < E; ++i) x[t][i] += d[i];
    }
  }
  std::vector<float> logits;
  auto onorm = Dequant(f, "output_norm.weight");
  for (size_t t = 0; t < T; ++t) {
    auto y = MatVec(out_w, rms(x[t], onorm), size_t(hp.n_vocab));
    logits.insert(logits.end(), y.begin(), y.end());
  }
  return logits;
}

double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::fabs(a[i] - b[i])));
  return m;
}

double Cosine(const float* a, const float* b, size_t n) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < n; ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

TEST(Model, LlamaAndQwen2MatchFloatReference) {
  ComputePool pool(1);
  for (const char* arch : {"llama", "qwen2"}) {
    Spec s;
    s.arch = arch;
    s.bias = std::string(arch) == "qwen2";
    s.tied = std::string(arch) == "qwen2";
    auto f = RandomModel(s, GgmlType::F32);
    auto m = Model::Load(f);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ((*m)->tied_output(), s.tied);
    EXPECT_EQ((*m)->hparams().rope_style,
              s.bias ? RopeStyle::kHalfSplit : RopeStyle::kAdjacentPairs);
    const auto toks = Tokens(24, s.n_vocab, 3);
    const auto got = RunPrompt(**m, toks, pool);
    const auto want = ReferenceForward(*f, toks);
    ASSERT_EQ(got.size(), want.size());
    double max_logit = 0;
    for (float v : want) max_logit = std::max(max_logit, double(std::fabs(v)));
    EXPECT_GT(max_logit, 1.0);
    // F32 weights and F32 KV: only float summation order differs from the double reference.
    EXPECT_LT(MaxAbsDiff(got, want), 1e-3 * max_logit) << arch;
  }
}

// Each supported architecture in its exact GGUF layout against the double-precision reference:
// Llama 2 style (untied output), Llama 3.1/3.2 (rope_freqs.weight, tied output as the 1B/3B
// files have it), Qwen2 (Q/K/V biases, half-split rope; tied as the 0.5B/1.5B files, untied as
// the larger ones). Relative tolerance 1e-4 of the largest logit.
TEST(Model, EachArchitectureLayoutMatchesTheDoubleReference) {
  ComputePool pool(1);
  struct Case {
    const char* name;
    const char* arch;
    bool bias, tied, rope_freqs;
  };
  for (const Case& c :
       {Case{"llama2", "llama", false, false, false}, Case{"llama3.2", "llama", false, true, true},
        Case{"qwen2-tied", "qwen2", true, true, false},
        Case{"qwen2-untied", "qwen2", true, false, false}}) {
    Spec s;
    s.arch = c.arch;
    s.bias = c.bias;
    s.tied = c.tied;
    s.rope_freqs = c.rope_freqs;
    s.n_embd = 128;
    s.n_head = 4;
    s.n_head_kv = 2;
    s.n_ff = 256;
    s.n_layer = 3;
    auto f = RandomModel(s, GgmlType::F32);
    auto m = Model::Load(f);
    ASSERT_TRUE(m.ok()) << c.name << ": " << m.status();
    EXPECT_EQ((*m)->tied_output(), c.tied) << c.name;
    EXPECT_EQ((*m)->rope_freq_factors().empty(), !c.rope_freqs) << c.name;
    // Positions far enough that the scaled slow pairs turn visibly differently.
    const auto toks = Tokens(40, s.n_vocab, 5);
    const auto got = RunPrompt(**m, toks, pool);
    const auto want = ReferenceForward(*f, toks);
    ASSERT_EQ(got.size(), want.size());
    double max_logit = 0;
    for (float v : want) max_logit = std::max(max_logit, double(std::fabs(v)));
    EXPECT_GT(max_logit, 1.0) << c.name;
    EXPECT_LT(MaxAbsDiff(got, want), 1e-4 * max_logit) << c.name;
  }
}

// Without its factors a Llama 3 file would run with wrong positions: they change the logits.
TEST(Model, RopeFrequencyFactorsChangeTheResult) {
  ComputePool pool(1);
  Spec s;
  s.rope_freqs = true;
  auto f = RandomModel(s, GgmlType::F32);
  auto m = Model::Load(f);
  ASSERT_TRUE(m.ok()) << m.status();
  const auto toks = Tokens(40, s.n_vocab, 5);
  const auto with = RunPrompt(**m, toks, pool);
  s.rope_freqs = false;
  const auto f2 = RandomModel(s, GgmlType::F32);  // the same weights, without the factors
  auto m2 = Model::Load(f2);
  ASSERT_TRUE(m2.ok());
  const auto without = RunPrompt(**m2, toks, pool);
  EXPECT_GT(MaxAbsDiff(with, without), 1e-2);
}

// A tensor the engine does not use, a wrongly sized factor table, or a rope scaling it does not
// implement: refused at load, never ignored.
TEST(Model, UnknownTensorsAndKeysAreErrorsAtLoad) {
  Spec s;
  s.n_embd = 64;
  s.n_head = 4;
  s.n_ff = 96;
  s.n_layer = 1;
  auto rewrite = [&](std::function<void(GgufWriter&)> edit) {
    Spec e = s;
    e.extra = std::move(edit);
    return Model::Load(RandomModel(e, GgmlType::F32));
  };
  ASSERT_TRUE(rewrite([](GgufWriter&) {}).ok());
  auto extra = rewrite([](GgufWriter& w) {
    const int64_t dims[] = {64};
    EXPECT_TRUE(w.AddTensor("blk.0.attn_q_norm.weight", GgmlType::F32, dims,
                            std::vector<uint8_t>(64 * 4, 0))
                    .ok());
  });
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.status().message().find("blk.0.attn_q_norm.weight"), std::string::npos)
      << extra.status();
  auto short_factors = rewrite([](GgufWriter& w) {
    const int64_t dims[] = {3};
    EXPECT_TRUE(
        w.AddTensor("rope_freqs.weight", GgmlType::F32, dims, std::vector<uint8_t>(3 * 4, 0)).ok());
  });
  ASSERT_FALSE(short_factors.ok());
  EXPECT_NE(short_factors.status().message().find("rope_freqs.weight"), std::string::npos);
  auto yarn = rewrite([](GgufWriter& w) { w.SetString("llama.rope.scaling.type", "yarn"); });
  ASSERT_FALSE(yarn.ok());
  EXPECT_NE(yarn.status().message().find("yarn"), std::string::npos);
}

TEST(Model, BatchedMultiSequenceEqualsOneAtATime) {
  ComputePool pool(2);
  Spec s;
  s.arch = "qwen2";
  s.bias = true;
  auto f = RandomModel(s, GgmlType::Q8_0);
  auto m = Model::Load(f);
  ASSERT_TRUE(m.ok()) << m.status();
  const int kSeqs = 3;
  std::vector<std::vector<int32_t>> prompts = {Tokens(23, s.n_vocab, 11), Tokens(5, s.n_vocab, 12),
                                               Tokens(40, s.n_vocab, 13)};
  // One at a time: each sequence alone, one token per forward pass.
  std::vector<std::vector<float>> single(kSeqs);
  for (int q = 0; q < kSeqs; ++q) {
    auto kv = Cache(**m, KvType::kF16);
    ForwardPass fwd(**m, pool);
    std::vector<float> logits;
    for (size_t i = 0; i < prompts[q].size(); ++i) {
      BatchToken b{prompts[q][i], 42, int(i), true};
      ASSERT_TRUE(fwd.Run(std::span<const BatchToken>(&b, 1), *kv, &logits).ok());
      single[q].insert(single[q].end(), logits.begin(), logits.end());
    }
  }
  // Batched: passes that mix chunks of every sequence (prefill of one next to decode of another).
  auto kv = Cache(**m, KvType::kF16);
  ForwardPass fwd(**m, pool);
  std::vector<std::vector<float>> batched(kSeqs);
  std::vector<size_t> done(kSeqs, 0);
  const size_t chunk[kSeqs] = {7, 1, 16};
  while (done[0] < prompts[0].size() || done[1] < prompts[1].size() || done[2] < prompts[2].size()) {
    std::vector<BatchToken> batch;
    std::vector<int> owner;
    for (int q = 0; q < kSeqs; ++q) {
      for (size_t i = 0; i < chunk[q] && done[q] < prompts[q].size(); ++i, ++done[q]) {
        batch.push_back({prompts[q][done[q]], q, int(done[q]), true});
        owner.push_back(q);
      }
    }
    std::vector<float> logits;
    ASSERT_TRUE(fwd.Run(batch, *kv, &logits).ok());
    const size_t V = size_t(s.n_vocab);
    for (size_t i = 0; i < owner.size(); ++i) {
      batched[owner[i]].insert(batched[owner[i]].end(), logits.begin() + i * V,
                               logits.begin() + (i + 1) * V);
    }
  }
  for (int q = 0; q < kSeqs; ++q) {
    ASSERT_EQ(single[q].size(), batched[q].size());
    // The same kernels on the same rows; batched MatMul may only change float summation order.
    EXPECT_LT(MaxAbsDiff(single[q], batched[q]), 1e-3) << "sequence " << q;
    const size_t V = size_t(s.n_vocab);
    for (size_t t = 0; t < prompts[q].size(); ++t) {
      auto a = std::max_element(single[q].begin() + t * V, single[q].begin() + (t + 1) * V);
      auto b = std::max_element(batched[q].begin() + t * V, batched[q].begin() + (t + 1) * V);
      EXPECT_EQ(a - single[q].begin(), b - batched[q].begin());
    }
  }
}

// Every weight type against the F32 model holding the same underlying weights.
//
// Metrics per type, over 48 positions of a 2-layer random model:
//  - mean logit cosine. Quantizing weights and activations adds noise of relative RMS e per matrix
//    product (measured on Gaussian rows: ~0.1% F16, ~0.4% BF16, ~0.8% Q8_0 incl. the 8-bit
//    activations, ~2% Q6_K, ~4% Q5, ~8% Q4), and a random network amplifies it a few times, so
//    1 - cosine ~ (k e)^2 / 2. Each bound allows twice the measured RMS error of its type on
//    this model (1 - cosine four times the measured value), so it catches a broken block layout
//    or kernel (cosine near 0) as well as a scale or rounding bug that doubles the noise, without
//    being flaky.
//  - top-1 agreement where the F32 answer is decisive: a flip is acceptable only where the F32
//    model's top two logits are closer than the quantization noise of that position (3x the RMS
//    logit error); on every other position the argmax must agree.
struct TypeCase {
  GgmlType type;
  double min_mean_cos;
};

void CheckTypesAgainstF32(std::initializer_list<TypeCase> cases) {
  ComputePool pool(1);
  Spec s;
  auto f32 = RandomModel(s, GgmlType::F32);
  auto m32 = Model::Load(f32);
  ASSERT_TRUE(m32.ok());
  const auto toks = Tokens(48, s.n_vocab, 5);
  const auto ref = RunPrompt(**m32, toks, pool);
  const size_t V = size_t(s.n_vocab);
  for (const TypeCase& c : cases) {
    auto fq = RandomModel(s, c.type);
    auto mq = Model::Load(fq);
    ASSERT_TRUE(mq.ok()) << mq.status();
    const auto got = RunPrompt(**mq, toks, pool);
    double sum_cos = 0;
    int decisive = 0, agree = 0;
    for (size_t t = 0; t < toks.size(); ++t) {
      const float* g = &got[t * V];
      const float* r = &ref[t * V];
      sum_cos += Cosine(g, r, V);
      double err2 = 0;
      for (size_t i = 0; i < V; ++i) err2 += double(g[i] - r[i]) * (g[i] - r[i]);
      const double noise = std::sqrt(err2 / double(V));
      std::vector<float> sorted(r, r + V);
      std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<float>());
      if (sorted[0] - sorted[1] <= 3 * noise) continue;
      ++decisive;
      agree += std::max_element(g, g + V) - g == std::max_element(r, r + V) - r;
    }
    const double mean_cos = sum_cos / double(toks.size());
    std::printf("  %-5s mean logit cosine %.6f, top-1 agreement %d of %d decisive positions\n",
                TypeName(c.type), mean_cos, agree, decisive);
    EXPECT_GE(mean_cos, c.min_mean_cos) << TypeName(c.type);
    EXPECT_EQ(agree, decisive) << TypeName(c.type);
    EXPECT_GE(decisive, 5) << TypeName(c.type) << ": too few decisive positions to judge";
  }
}

// Measured on this model: f16 1.000000, bf16 0.999993, q8_0 0.99987, q6_k 0.9989,
// q5_0/q5_1/q5_k 0.9951-0.9963, q4_0/q4_1/q4_k 0.980-0.985.
TEST(Model, FloatAndEightBitWeightsAgreeWithF32) {
  CheckTypesAgainstF32({{GgmlType::F16, 0.99999}, {GgmlType::BF16, 0.99997},
                        {GgmlType::Q8_0, 0.9995}});
}
TEST(Model, SixAndFiveBitWeightsAgreeWithF32) {
  CheckTypesAgainstF32({{GgmlType::Q6_K, 0.995}, {GgmlType::Q5_0, 0.98}, {GgmlType::Q5_1, 0.98},
                        {GgmlType::Q5_K, 0.98}});
}
TEST(Model, FourBitWeightsAgreeWithF32) {
  CheckTypesAgainstF32({{GgmlType::Q4_0, 0.92}, {GgmlType::Q4_1, 0.92}, {GgmlType::Q4_K, 0.92}});
}

TEST(Model, KvCacheTypesAgreeWithF32) {
  ComputePool pool(1);
  Spec s;
  auto f = RandomModel(s, GgmlType::F32);
  auto m = Model::Load(f);
  ASSERT_TRUE(m.ok());
  const auto toks = Tokens(40, s.n_vocab, 9);
  const auto ref = RunPrompt(**m, toks, pool, KvType::kF32);
  const size_t V = size_t(s.n_vocab);
  for (KvType t : {KvType::kF16, KvType::kQ8_0}) {
    const auto got = RunPrompt(**m, toks, pool, t);
    double min_cos = 1;
    for (size_t i = 0; i < toks.size(); ++i) min_cos = std::min(min_cos, Cosine(&got[i * V], &ref[i * V], V));
    EXPECT_GE(min_cos, t == KvType::kF16 ? 0.99999 : 0.999) << KvTypeName(t);
  }
}

TEST(Model, TinyRandomFromAnotherToolLoadsAndRuns) {
  auto f = GgufFile::Open(std::string(HOTLINE_SHARED_DATA_DIR) +
                          "/llm/tiny-random/llama-2-tiny-random.gguf");
  ASSERT_TRUE(f.ok()) << f.status();
  std::shared_ptr<const GgufFile> file = std::move(f).value();
  auto m = Model::Load(file);
  ASSERT_TRUE(m.ok()) << m.status();
  const ModelHParams& hp = (*m)->hparams();
  EXPECT_EQ(hp.n_embd, 8);
  EXPECT_EQ(hp.n_layer, 1);
  EXPECT_EQ(hp.n_head, 2);
  EXPECT_EQ(hp.n_vocab, 32000);
  ComputePool pool(1);
  const auto logits = RunPrompt(**m, {1, 450, 4996, 17354}, pool, KvType::kF16);
  ASSERT_EQ(logits.size(), 4u * 32000u);
  for (float v : logits) ASSERT_TRUE(std::isfinite(v));
  // Its F16 matrices through our kernels agree with the plain float reference.
  const auto want = ReferenceForward(*file, {1, 450, 4996, 17354});
  double max_logit = 0;
  for (float v : want) max_logit = std::max(max_logit, double(std::fabs(v)));
  EXPECT_LT(MaxAbsDiff(logits, want), 2e-2 * max_logit + 1e-4);
}

TEST(Model, RefusesUnknownArchitectureAndBadShapes) {
  Spec s;
  auto f = RandomModel(s, GgmlType::F32);
  GgufWriter w;
  for (const auto& [k, v] : f->metadata()) w.SetRaw(k, v);
  w.SetString("general.architecture", "gpt2");
  auto g = GgufFile::FromBuffer(*w.WriteBuffer());
  ASSERT_TRUE(g.ok());
  auto m = Model::Load(std::move(g).value());
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(m.status().message().find("'gpt2' is not supported"), std::string::npos);

  // head_count_kv that does not divide head_count.
  GgufWriter w2;
  for (const auto& [k, v] : f->metadata()) w2.SetRaw(k, v);
  w2.SetU32("llama.attention.head_count_kv", 3);
  auto g2 = GgufFile::FromBuffer(*w2.WriteBuffer());
  EXPECT_FALSE(Model::Load(std::move(g2).value()).ok());

  // Metadata without tensors: the first missing tensor is named.
  GgufWriter w3;
  for (const auto& [k, v] : f->metadata()) w3.SetRaw(k, v);
  std::vector<uint8_t> emb(size_t(s.n_embd) * s.n_vocab * 4);
  const int64_t dims[] = {s.n_embd, s.n_vocab};
  ASSERT_TRUE(w3.AddTensor("token_embd.weight", GgmlType::F32, dims, emb).ok());
  auto g3 = GgufFile::FromBuffer(*w3.WriteBuffer());
  auto m3 = Model::Load(std::move(g3).value());
  ASSERT_FALSE(m3.ok());
  EXPECT_NE(m3.status().message().find("output_norm.weight"), std::string::npos) << m3.status();
}

// A sequence that joins a pass in flight (run alone through the layers done, then with the rest)
// gets the logits it gets in a pass of its own, and so do the sequences it joined.
TEST(Model, JoiningAPassInFlightEqualsSeparatePasses) {
  ComputePool pool(2);
  Spec s;
  s.arch = "qwen2";
  s.bias = true;
  s.n_layer = 4;
  auto m = Model::Load(RandomModel(s, GgmlType::Q8_0));
  ASSERT_TRUE(m.ok()) << m.status();
  const auto a = Tokens(9, s.n_vocab, 21);
  const auto b = Tokens(6, s.n_vocab, 22);
  auto chunk = [](const std::vector<int32_t>& t, int seq) {
    std::vector<BatchToken> v;
    for (size_t i = 0; i < t.size(); ++i) v.push_back({t[i], seq, int(i), i + 1 == t.size()});
    return v;
  };
  std::vector<float> ref_a, ref_b;
  {
    auto kv = Cache(**m, KvType::kF16);
    ForwardPass fwd(**m, pool);
    ASSERT_TRUE(fwd.Run(chunk(a, 0), *kv, &ref_a).ok());
    ASSERT_TRUE(fwd.Run(chunk(b, 1), *kv, &ref_b).ok());
  }
  const size_t V = size_t(s.n_vocab);
  for (int at = 0; at <= s.n_layer; ++at) {
    auto kv = Cache(**m, KvType::kF16);
    ForwardPass fwd(**m, pool);
    ASSERT_TRUE(fwd.Begin(chunk(a, 0), *kv).ok());
    ASSERT_TRUE(fwd.Advance(at).ok());
    EXPECT_EQ(fwd.layer(), at);
    ASSERT_TRUE(fwd.Join(chunk(b, 1)).ok());
    EXPECT_EQ(fwd.size(), int(a.size() + b.size()));
    // A sequence already in the pass cannot join it again.
    EXPECT_EQ(fwd.Join(chunk({7}, 1)).code(), StatusCode::kInvalidArgument);
    std::vector<float> got;
    ASSERT_TRUE(fwd.End(&got).ok());
    ASSERT_EQ(got.size(), 2 * V) << "joined at layer " << at;
    const std::vector<float> got_a(got.begin(), got.begin() + std::ptrdiff_t(V));
    const std::vector<float> got_b(got.begin() + std::ptrdiff_t(V), got.end());
    EXPECT_LT(MaxAbsDiff(got_a, ref_a), 1e-4) << "joined at layer " << at;
    EXPECT_LT(MaxAbsDiff(got_b, ref_b), 1e-4) << "joined at layer " << at;
  }
  // No pass in flight: nothing to join.
  auto kv = Cache(**m, KvType::kF16);
  ForwardPass idle(**m, pool);
  EXPECT_EQ(idle.Join(chunk(b, 1)).code(), StatusCode::kFailedPrecondition);
}

TEST(Model, ForwardRejectsBadBatches) {
  Spec s;
  auto m = Model::Load(RandomModel(s, GgmlType::F32));
  ASSERT_TRUE(m.ok());
  ComputePool pool(1);
  auto kv = Cache(**m);
  ForwardPass fwd(**m, pool);
  std::vector<float> logits;
  std::vector<BatchToken> bad_token = {{s.n_vocab, 0, 0, true}};
  EXPECT_FALSE(fwd.Run(bad_token, *kv, &logits).ok());
  std::vector<BatchToken> gap = {{1, 0, 0, true}, {2, 0, 2, true}};
  EXPECT_FALSE(fwd.Run(gap, *kv, &logits).ok());
  std::vector<BatchToken> too_long = {{1, 0, 600, true}};
  EXPECT_EQ(fwd.Run(too_long, *kv, &logits).code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace hotline::engine
