#include "engine/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/quant.h"

namespace hotline::engine {
namespace {

// Naive reference: materializes every score, softmax in double.
void NaiveAttention(const std::vector<std::vector<float>>& K, const std::vector<std::vector<float>>& V,
                    const float* q, int n_ctx, int n_head, int n_head_kv, int hd, float scale,
                    float* out) {
  const int group = n_head / n_head_kv;
  for (int h = 0; h < n_head; ++h) {
    const int kh = h / group;
    std::vector<double> s(static_cast<size_t>(n_ctx));
    double mx = -1e300;
    for (int j = 0; j < n_ctx; ++j) {
      double d = 0;
      for (int i = 0; i < hd; ++i) d += double(q[h * hd + i]) * K[size_t(j)][size_t(kh * hd + i)];
      s[size_t(j)] = d * scale;
      mx = std::max(mx, s[size_t(j)]);
    }
    double sum = 0;
    for (double& x : s) sum += (x = std::exp(x - mx));
    for (int i = 0; i < hd; ++i) {
      double acc = 0;
      for (int j = 0; j < n_ctx; ++j) acc += s[size_t(j)] / sum * V[size_t(j)][size_t(kh * hd + i)];
      out[h * hd + i] = float(acc);
    }
  }
}

struct Shape {
  int n_head, n_head_kv, hd, block;
  KvType type;
  double tol;
};

TEST(Attention, EqualsNaiveSoftmaxReference) {
  // Block sizes smaller than, equal to and larger than the softmax chunk; GQA and MHA; every
  // cache type (tolerance = the cache type's rounding of K/V).
  const Shape setups[] = {{4, 2, 32, 16, KvType::kF32, 1e-5}, {8, 8, 16, 64, KvType::kF32, 1e-5},
                          {6, 1, 64, 7, KvType::kF32, 1e-5},  {4, 2, 32, 16, KvType::kF16, 3e-3},
                          {4, 4, 64, 32, KvType::kQ8_0, 3e-2}};
  ComputePool pool(2);
  std::mt19937 rng(1);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (const Shape& su : setups) {
    KvLayout layout{2, su.n_head_kv, su.hd, su.type};
    auto kv = PerSequenceKvCache::Create(layout, su.block, 1024);
    ASSERT_TRUE(kv.ok()) << kv.status();
    const int kv_dim = su.n_head_kv * su.hd;
    const int q_dim = su.n_head * su.hd;
    // Two sequences with different lengths; the values stored are what the reference sees.
    const int lens[2] = {37, 150};
    std::vector<std::vector<float>> K[2], V[2];
    for (int s = 0; s < 2; ++s) {
      ASSERT_TRUE((*kv)->EnsureCapacity(s, lens[s]).ok());
      for (int p = 0; p < lens[s]; ++p) {
        std::vector<float> k(static_cast<size_t>(kv_dim)), v(static_cast<size_t>(kv_dim));
        for (float& x : k) x = nd(rng) * 2.f;
        for (float& x : v) x = nd(rng);
        ASSERT_TRUE(QuantizeRow(KvGgmlType(su.type), k.data(), (*kv)->KRow(1, s, p), kv_dim).ok());
        ASSERT_TRUE(QuantizeRow(KvGgmlType(su.type), v.data(), (*kv)->VRow(1, s, p), kv_dim).ok());
        K[s].push_back(k);
        V[s].push_back(v);
      }
    }
    // Queries: several positions of each sequence in one call (as a batch would have them).
    std::vector<int> seqs = {0, 1, 1, 0, 1};
    std::vector<int> n_ctx = {1, 150, 33, 37, 2};
    std::vector<float> q(seqs.size() * size_t(q_dim)), out(q.size()), want(q.size());
    for (float& x : q) x = nd(rng);
    const float scale = 1.0f / std::sqrt(float(su.hd));
    AttentionArgs a;
    a.kv = kv->get();
    a.layer = 1;
    a.n_head = su.n_head;
    a.scale = scale;
    a.seqs = seqs;
    a.n_ctx = n_ctx;
    a.q = q.data();
    a.out = out.data();
    Attention(a, pool);
    std::vector<float> plain(q.size());
    a.out = plain.data();
    PlainAttention(a, pool);
    for (size_t t = 0; t < seqs.size(); ++t) {
      NaiveAttention(K[seqs[t]], V[seqs[t]], &q[t * size_t(q_dim)], n_ctx[t], su.n_head,
                     su.n_head_kv, su.hd, scale, &want[t * size_t(q_dim)]);
    }
    double max_diff = 0;
    for (size_t i = 0; i < out.size(); ++i) max_diff = std::max(max_diff, double(std::fabs(out[i] - want[i])));
    EXPECT_LT(max_diff, su.tol) << "heads " << su.n_head << "/" << su.n_head_kv << " hd " << su.hd
                                << " block " << su.block << " " << KvTypeName(su.type);
    double plain_diff = 0;
    for (size_t i = 0; i < plain.size(); ++i) {
      plain_diff = std::max(plain_diff, double(std::fabs(plain[i] - want[i])));
    }
    EXPECT_LT(plain_diff, su.tol) << "plain: heads " << su.n_head << "/" << su.n_head_kv;
  }
}

TEST(Attention, PromptChunkEqualsEachTokenAloneBitForBit) {
  // 40 consecutive positions of one sequence in one call (split into query blocks that share
  // each converted K/V chunk), next to a token of another sequence: every output must be exactly
  // what the token computes alone.
  KvLayout layout{1, 2, 32, KvType::kF16};
  auto kv = PerSequenceKvCache::Create(layout, 16, 256);
  ASSERT_TRUE(kv.ok());
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.f, 1.f);
  const int kv_dim = 64, q_dim = 4 * 32;
  for (int s = 0; s < 2; ++s) {
    ASSERT_TRUE((*kv)->EnsureCapacity(s, 100).ok());
    for (int p = 0; p < 100; ++p) {
      std::vector<float> k(kv_dim), v(kv_dim);
      for (float& x : k) x = nd(rng);
      for (float& x : v) x = nd(rng);
      ASSERT_TRUE(QuantizeRow(GgmlType::F16, k.data(), (*kv)->KRow(0, s, p), kv_dim).ok());
      ASSERT_TRUE(QuantizeRow(GgmlType::F16, v.data(), (*kv)->VRow(0, s, p), kv_dim).ok());
    }
  }
  std::vector<int> seqs, n_ctx;
  for (int p = 50; p < 90; ++p) {
    seqs.push_back(0);
    n_ctx.push_back(p + 1);
  }
  seqs.push_back(1);
  n_ctx.push_back(77);
  std::vector<float> q(seqs.size() * q_dim), out(q.size());
  for (float& x : q) x = nd(rng);
  ComputePool pool(2);
  AttentionArgs a{kv->get(), 0, 4, 0.17f, seqs, n_ctx, q.data(), out.data(), {}, {}};
  Attention(a, pool);
  for (size_t t = 0; t < seqs.size(); ++t) {
    std::vector<float> alone(q_dim);
    AttentionArgs b{kv->get(), 0, 4, 0.17f, std::span<const int>(&seqs[t], 1),
                    std::span<const int>(&n_ctx[t], 1), &q[t * q_dim], alone.data(), {}, {}};
    Attention(b, pool);
    for (int i = 0; i < q_dim; ++i) ASSERT_EQ(out[t * q_dim + size_t(i)], alone[size_t(i)]) << t;
  }
}

TEST(Attention, LargeScoresDoNotOverflow) {
  // Scores of +-1000 would overflow exp() without the running maximum.
  KvLayout layout{1, 1, 32, KvType::kF32};
  auto kv = PerSequenceKvCache::Create(layout, 8, 64);
  ASSERT_TRUE(kv.ok());
  ASSERT_TRUE((*kv)->EnsureCapacity(0, 40).ok());
  std::vector<float> k(32), v(32);
  for (int p = 0; p < 40; ++p) {
    for (int i = 0; i < 32; ++i) {
      k[size_t(i)] = (p == 25 ? 100.f : -100.f) * (i % 2 ? 1.f : -1.f);
      v[size_t(i)] = float(p);
    }
    ASSERT_TRUE(QuantizeRow(GgmlType::F32, k.data(), (*kv)->KRow(0, 0, p), 32).ok());
    ASSERT_TRUE(QuantizeRow(GgmlType::F32, v.data(), (*kv)->VRow(0, 0, p), 32).ok());
  }
  std::vector<float> q(32), out(32);
  for (int i = 0; i < 32; ++i) q[size_t(i)] = i % 2 ? 1.f : -1.f;
  ComputePool pool(1);
  std::vector<int> seqs = {0}, n_ctx = {40};
  AttentionArgs a{kv->get(), 0, 1, 1.0f, seqs, n_ctx, q.data(), out.data(), {}, {}};
  Attention(a, pool);
  for (float x : out) {
    ASSERT_TRUE(std::isfinite(x));
    EXPECT_NEAR(x, 25.f, 1e-4);  // all weight on position 25
  }
  PlainAttention(a, pool);
  for (float x : out) {
    ASSERT_TRUE(std::isfinite(x));
    EXPECT_NEAR(x, 25.f, 1e-4);
  }
}

}  // namespace
}  // namespace hotline::engine
