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
void KvRowToFloat(const VectorKernels& vk, GgmlType type, const uint8_t* src, float* dst, int n) {
  if (type == GgmlType::F16) {
    vk.half_to_float(reinterpret_cast<const uint16_t*>(src), dst, n);
  } else {
    DequantizeRow(type, src, dst, n);
  }
}

// One (token, KV head) pair: every query head of the group over all visible positions.
// `blocks`: base of each block of the token's sequence.
void AttendGroup(const AttentionArgs& a, const VectorKernels& vk, const uint8_t* const* blocks,
                 int token, int kv_head, Scratch& sc) {
  const KvLayout& L = a.kv->layout();
  const int hd = L.head_dim;
  const int group = a.n_head / L.n_head_kv;
  const int q_stride = a.n_head * hd;
  const GgmlType type = KvGgmlType(L.type);
  const int64_t row_bytes = L.row_bytes();
  const int64_t head_off = kv_head * L.head_bytes();
  const int bt = a.kv->block_tokens();
  const int n = a.n_ctx[static_cast<size_t>(token)];
  const float* q = a.q + static_cast<int64_t>(token) * q_stride + int64_t{kv_head} * group * hd;
  float* out = a.out + static_cast<int64_t>(token) * q_stride + int64_t{kv_head} * group * hd;

  sc.k.resize(static_cast<size_t>(kAttentionChunk) * hd);
  sc.v.resize(static_cast<size_t>(kAttentionChunk) * hd);
  sc.s.resize(static_cast<size_t>(group) * kAttentionChunk);
  sc.acc.assign(static_cast<size_t>(group) * hd, 0.f);
  sc.m.assign(static_cast<size_t>(group), -std::numeric_limits<float>::infinity());
  sc.l.assign(static_cast<size_t>(group), 0.f);

  // This layer's K and V rows of a block start at fixed offsets from the block's base.
  const int64_t k_part = a.kv->PartOffset(a.layer, 0) + head_off;
  const int64_t v_part = a.kv->PartOffset(a.layer, 1) + head_off;
  int cur_block = -1;
  const uint8_t* kb = nullptr;
  const uint8_t* vb = nullptr;
  for (int j0 = 0; j0 < n; j0 += kAttentionChunk) {
    const int c = std::min(kAttentionChunk, n - j0);
    for (int j = 0; j < c; ++j) {
      const int pos = j0 + j;
      if (pos / bt != cur_block) {
        cur_block = pos / bt;
        kb = blocks[cur_block] + k_part;
        vb = blocks[cur_block] + v_part;
      }
      const int64_t off = (pos % bt) * row_bytes;
      KvRowToFloat(vk, type, kb + off, &sc.k[size_t(j) * hd], hd);
      KvRowToFloat(vk, type, vb + off, &sc.v[size_t(j) * hd], hd);
    }
    for (int g = 0; g < group; ++g) {
      const float* qg = q + int64_t{g} * hd;
      float* s = &sc.s[size_t(g) * kAttentionChunk];
      vk.dot_rows(qg, sc.k.data(), c, hd, a.scale, s);
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
      l += vk.exp_shifted(s, c, m_new);  // each score becomes its softmax weight
      vk.weighted_row_sum(s, sc.v.data(), c, hd, acc);
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

}  // namespace

void Attention(const AttentionArgs& a, ComputePool& pool) {
  const int n_kv = a.kv->layout().n_head_kv;
  const int64_t n_tokens = static_cast<int64_t>(a.seqs.size());
  std::span<const uint8_t* const> bases = a.block_bases;
  std::span<const int> first = a.block_first;
  std::vector<const uint8_t*> own_bases;
  std::vector<int> own_first;
  if (first.size() != a.seqs.size()) {  // no tables from the caller: resolve them here
    own_first.reserve(a.seqs.size());
    for (int seq : a.seqs) {
      own_first.push_back(static_cast<int>(own_bases.size()));
      a.kv->AppendBlockBases(seq, &own_bases);
    }
    bases = own_bases;
    first = own_first;
  }
  const VectorKernels vk = ActiveVectorKernels();
  const int64_t items = n_tokens * n_kv;
  pool.ParallelFor(items, 1, [&](int64_t begin, int64_t end, int) {
    thread_local Scratch sc;
    for (int64_t i = begin; i < end; ++i) {
      const int token = static_cast<int>(i / n_kv);
      AttendGroup(a, vk, bases.data() + first[size_t(token)], token, static_cast<int>(i % n_kv),
                  sc);
    }
  });
}

}  // namespace hotline::engine
