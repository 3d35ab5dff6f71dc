#include "engine/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/matmul.h"
#include "engine/quant.h"

namespace hotline::engine {
namespace {

struct Scratch {
  std::vector<float> k;    // kAttentionChunk x head_dim
  std::vector<float> v;    // kAttentionChunk x head_dim
  std::vector<float> s;    // group x kAttentionChunk scores
  std::vector<float> acc;  // group x head_dim
  std::vector<float> m;    // group running max
  std::vector<float> l;    // group running denominator
};

// One cached row slice to float: F16 (the default cache type) on the kernels' SIMD path.
void KvRowToFloat(GgmlType type, const uint8_t* src, float* dst, int n) {
  if (type == GgmlType::F16) {
    HalfRowToFloat(reinterpret_cast<const uint16_t*>(src), dst, n);
  } else {
    DequantizeRow(type, src, dst, n);
  }
}

// One (token, KV head) pair: every query head of the group over all visible positions.
void AttendGroup(const AttentionArgs& a, int token, int kv_head, Scratch& sc) {
  const KvLayout& L = a.kv->layout();
  const int hd = L.head_dim;
  const int group = a.n_head / L.n_head_kv;
  const int q_stride = a.n_head * hd;
  const GgmlType type = KvGgmlType(L.type);
  const int64_t row_bytes = L.row_bytes();
  const int64_t head_off = kv_head * L.head_bytes();
  const int bt = a.kv->block_tokens();
  const int seq = a.seqs[static_cast<size_t>(token)];
  const int n = a.n_ctx[static_cast<size_t>(token)];
  const float* q = a.q + static_cast<int64_t>(token) * q_stride + int64_t{kv_head} * group * hd;
  float* out = a.out + static_cast<int64_t>(token) * q_stride + int64_t{kv_head} * group * hd;

  sc.k.resize(static_cast<size_t>(kAttentionChunk) * hd);
  sc.v.resize(static_cast<size_t>(kAttentionChunk) * hd);
  sc.s.resize(static_cast<size_t>(group) * kAttentionChunk);
  sc.acc.assign(static_cast<size_t>(group) * hd, 0.f);
  sc.m.assign(static_cast<size_t>(group), -std::numeric_limits<float>::infinity());
  sc.l.assign(static_cast<size_t>(group), 0.f);

  // Block pointers are looked up once per block (a paged cache resolves them through a block
  // table), not once per position.
  int cur_block = -1;
  const uint8_t* kb = nullptr;
  const uint8_t* vb = nullptr;
  for (int j0 = 0; j0 < n; j0 += kAttentionChunk) {
    const int c = std::min(kAttentionChunk, n - j0);
    for (int j = 0; j < c; ++j) {
      const int pos = j0 + j;
      if (pos / bt != cur_block) {
        cur_block = pos / bt;
        kb = a.kv->KBlock(a.layer, seq, cur_block);
        vb = a.kv->VBlock(a.layer, seq, cur_block);
      }
      const int64_t off = (pos % bt) * row_bytes + head_off;
      KvRowToFloat(type, kb + off, &sc.k[size_t(j) * hd], hd);
      KvRowToFloat(type, vb + off, &sc.v[size_t(j) * hd], hd);
    }
    for (int g = 0; g < group; ++g) {
      const float* qg = q + int64_t{g} * hd;
      float* s = &sc.s[size_t(g) * kAttentionChunk];
      DotRows(qg, sc.k.data(), c, hd, a.scale, s);
      float chunk_max = -std::numeric_limits<float>::infinity();
      for (int j = 0; j < c; ++j) chunk_max = std::max(chunk_max, s[j]);
      const float m_new = std::max(sc.m[size_t(g)], chunk_max);
      // Rescale what was accumulated under the old maximum (exp(-inf) = 0 on the first chunk).
      const float corr = std::exp(sc.m[size_t(g)] - m_new);
      float* acc = &sc.acc[size_t(g) * hd];
      float l = sc.l[size_t(g)] * corr;
      if (corr != 1.f) {
        for (int d = 0; d < hd; ++d) acc[d] *= corr;
      }
      l += ExpShifted(s, c, m_new);  // each score becomes its softmax weight
      WeightedRowSum(s, sc.v.data(), c, hd, acc);
      sc.m[size_t(g)] = m_new;
      sc.l[size_t(g)] = l;
    }
  }
  for (int g = 0; g < group; ++g) {
    const float inv = sc.l[size_t(g)] > 0.f ? 1.f / sc.l[size_t(g)] : 0.f;
    const float* acc = &sc.acc[size_t(g) * hd];
    float* o = out + int64_t{g} * hd;
    for (int d = 0; d < hd; ++d) o[d] = acc[d] * inv;
  }
}

struct PlainScratch {
  std::vector<float> row;     // head_dim
  std::vector<float> scores;  // n_ctx
};

// One (token, query head): every score, then the softmax, then the value sum.
void AttendHeadPlain(const AttentionArgs& a, int token, int head, PlainScratch& sc) {
  const KvLayout& L = a.kv->layout();
  const int hd = L.head_dim;
  const int kv_head = head / (a.n_head / L.n_head_kv);
  const GgmlType type = KvGgmlType(L.type);
  const int64_t row_bytes = L.row_bytes();
  const int64_t head_off = kv_head * L.head_bytes();
  const int bt = a.kv->block_tokens();
  const int seq = a.seqs[static_cast<size_t>(token)];
  const int n = a.n_ctx[static_cast<size_t>(token)];
  const int64_t q_stride = int64_t{a.n_head} * hd;
  const float* q = a.q + token * q_stride + int64_t{head} * hd;
  float* out = a.out + token * q_stride + int64_t{head} * hd;
  sc.row.resize(static_cast<size_t>(hd));
  sc.scores.resize(static_cast<size_t>(n));
  float mx = -std::numeric_limits<float>::infinity();
  for (int pos = 0; pos < n; ++pos) {
    KvRowToFloat(type, a.kv->KBlock(a.layer, seq, pos / bt) + (pos % bt) * row_bytes + head_off,
                 sc.row.data(), hd);
    float d = 0;
    for (int i = 0; i < hd; ++i) d += q[i] * sc.row[size_t(i)];
    sc.scores[size_t(pos)] = d * a.scale;
    mx = std::max(mx, sc.scores[size_t(pos)]);
  }
  float sum = 0;
  for (float& x : sc.scores) sum += (x = std::exp(x - mx));
  const float inv = sum > 0.f ? 1.f / sum : 0.f;
  for (int i = 0; i < hd; ++i) out[i] = 0.f;
  for (int pos = 0; pos < n; ++pos) {
    KvRowToFloat(type, a.kv->VBlock(a.layer, seq, pos / bt) + (pos % bt) * row_bytes + head_off,
                 sc.row.data(), hd);
    const float w = sc.scores[size_t(pos)] * inv;
    for (int i = 0; i < hd; ++i) out[i] += w * sc.row[size_t(i)];
  }
}

}  // namespace

void PlainAttention(const AttentionArgs& a, ComputePool& pool) {
  const int n_head = a.n_head;
  const int64_t items = static_cast<int64_t>(a.seqs.size()) * n_head;
  pool.ParallelFor(items, 1, [&](int64_t begin, int64_t end, int) {
    thread_local PlainScratch sc;
    for (int64_t i = begin; i < end; ++i) {
      AttendHeadPlain(a, static_cast<int>(i / n_head), static_cast<int>(i % n_head), sc);
    }
  });
}

void Attention(const AttentionArgs& a, ComputePool& pool) {
  const int n_kv = a.kv->layout().n_head_kv;
  const int64_t n_tokens = static_cast<int64_t>(a.seqs.size());
  const int64_t items = n_tokens * n_kv;
  pool.ParallelFor(items, 1, [&](int64_t begin, int64_t end, int) {
    thread_local Scratch sc;
    for (int64_t i = begin; i < end; ++i) {
      AttendGroup(a, static_cast<int>(i / n_kv), static_cast<int>(i % n_kv), sc);
    }
  });
}

}  // namespace hotline::engine
