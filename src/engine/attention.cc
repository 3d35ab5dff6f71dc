#include "engine/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/matmul.h"
#include "engine/quant.h"

namespace hotline::engine {
namespace {

// Query tokens of one sequence that share each converted chunk of K/V rows. A prompt chunk of
// n tokens converts the cache rows n / kQueryBlock times instead of n times; 16 keeps enough
// work items for the threads on a short chunk and the scratch small.
constexpr int kQueryBlock = 16;

struct Scratch {
  std::vector<float> k;    // kAttentionChunk x head_dim
  std::vector<float> v;    // kAttentionChunk x head_dim
  std::vector<float> s;    // kAttentionChunk scores of one query head
  std::vector<float> acc;  // tokens x group x head_dim
  std::vector<float> m;    // tokens x group running max
  std::vector<float> l;    // tokens x group running denominator
};

// Work item: batch tokens [t0, t1) (consecutive entries of one sequence) for one KV head.
struct Item {
  int t0, t1, kv_head;
};

// One cached row slice to float: F16 (the default cache type) on the kernels' SIMD path.
void KvRowToFloat(const VectorKernels& vk, GgmlType type, const uint8_t* src, float* dst, int n) {
  if (type == GgmlType::F16) {
    vk.half_to_float(reinterpret_cast<const uint16_t*>(src), dst, n);
  } else {
    DequantizeRow(type, src, dst, n);
  }
}

// Every query head of the KV head's group, for each token of [t0, t1), over the positions each
// token sees. `blocks`: base of each block of the tokens' sequence. Each K/V chunk is converted
// once for all the tokens; per (token, head) the arithmetic is exactly that of one token alone
// (same chunk boundaries, same order), so results do not depend on how tokens are grouped.
void AttendGroup(const AttentionArgs& a, const VectorKernels& vk, const uint8_t* const* blocks,
                 const Item& it, Scratch& sc) {
  const KvLayout& L = a.kv->layout();
  const int hd = L.head_dim;
  const int group = a.n_head / L.n_head_kv;
  const int q_stride = a.n_head * hd;
  const GgmlType type = KvGgmlType(L.type);
  const int64_t row_bytes = L.row_bytes();
  const int64_t head_off = it.kv_head * L.head_bytes();
  const int bt = a.kv->block_tokens();
  const int nq = it.t1 - it.t0;
  int max_n = 0;
  for (int t = it.t0; t < it.t1; ++t) max_n = std::max(max_n, a.n_ctx[static_cast<size_t>(t)]);

  sc.k.resize(static_cast<size_t>(kAttentionChunk) * hd);
  sc.v.resize(static_cast<size_t>(kAttentionChunk) * hd);
  sc.s.resize(static_cast<size_t>(kAttentionChunk));
  sc.acc.assign(static_cast<size_t>(nq) * group * hd, 0.f);
  sc.m.assign(static_cast<size_t>(nq) * group, -std::numeric_limits<float>::infinity());
  sc.l.assign(static_cast<size_t>(nq) * group, 0.f);

  // This layer's K and V rows of a block start at fixed offsets from the block's base.
  const int64_t k_part = a.kv->PartOffset(a.layer, 0) + head_off;
  const int64_t v_part = a.kv->PartOffset(a.layer, 1) + head_off;
  int cur_block = -1;
  const uint8_t* kb = nullptr;
  const uint8_t* vb = nullptr;
  for (int j0 = 0; j0 < max_n; j0 += kAttentionChunk) {
    const int c = std::min(kAttentionChunk, max_n - j0);
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
    for (int ti = 0; ti < nq; ++ti) {
      const int token = it.t0 + ti;
      const int ct = std::min(c, a.n_ctx[static_cast<size_t>(token)] - j0);
      if (ct <= 0) continue;  // this token sees no position of the chunk
      const float* q =
          a.q + static_cast<int64_t>(token) * q_stride + int64_t{it.kv_head} * group * hd;
      for (int g = 0; g < group; ++g) {
        const size_t slot = size_t(ti) * group + size_t(g);
        float* s = sc.s.data();
        vk.dot_rows(q + int64_t{g} * hd, sc.k.data(), ct, hd, a.scale, s);
        float chunk_max = -std::numeric_limits<float>::infinity();
        for (int j = 0; j < ct; ++j) chunk_max = std::max(chunk_max, s[j]);
        const float m_new = std::max(sc.m[slot], chunk_max);
        // Rescale what was accumulated under the old maximum (exp(-inf) = 0 on the first chunk).
        const float corr = std::exp(sc.m[slot] - m_new);
        float* acc = &sc.acc[slot * hd];
        float l = sc.l[slot] * corr;
        if (corr != 1.f) {
          for (int d = 0; d < hd; ++d) acc[d] *= corr;
        }
        l += vk.exp_shifted(s, ct, m_new);  // each score becomes its softmax weight
        vk.weighted_row_sum(s, sc.v.data(), ct, hd, acc);
        sc.m[slot] = m_new;
        sc.l[slot] = l;
      }
    }
  }
  for (int ti = 0; ti < nq; ++ti) {
    float* out =
        a.out + static_cast<int64_t>(it.t0 + ti) * q_stride + int64_t{it.kv_head} * group * hd;
    for (int g = 0; g < group; ++g) {
      const size_t slot = size_t(ti) * group + size_t(g);
      const float inv = sc.l[slot] > 0.f ? 1.f / sc.l[slot] : 0.f;
      const float* acc = &sc.acc[slot * hd];
      float* o = out + int64_t{g} * hd;
      for (int d = 0; d < hd; ++d) o[d] = acc[d] * inv;
    }
  }
}

struct PlainScratch {
  std::vector<float> row;     // head_dim
  std::vector<float> scores;  // n_ctx
};

// One (token, query head): every score, then the softmax, then the value sum.
void AttendHeadPlain(const AttentionArgs& a, const VectorKernels& vk, int token, int head,
                     PlainScratch& sc) {
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
    KvRowToFloat(vk, type, a.kv->KBlock(a.layer, seq, pos / bt) + (pos % bt) * row_bytes + head_off,
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
    KvRowToFloat(vk, type, a.kv->VBlock(a.layer, seq, pos / bt) + (pos % bt) * row_bytes + head_off,
                 sc.row.data(), hd);
    const float w = sc.scores[size_t(pos)] * inv;
    for (int i = 0; i < hd; ++i) out[i] += w * sc.row[size_t(i)];
  }
}

}  // namespace

void PlainAttention(const AttentionArgs& a, ComputePool& pool) {
  const int n_head = a.n_head;
  const int64_t items = static_cast<int64_t>(a.seqs.size()) * n_head;
  const VectorKernels vk = ActiveVectorKernels();
  pool.ParallelFor(items, 1, [&](int64_t begin, int64_t end, int) {
    thread_local PlainScratch sc;
    for (int64_t i = begin; i < end; ++i) {
      AttendHeadPlain(a, vk, static_cast<int>(i / n_head), static_cast<int>(i % n_head), sc);
    }
  });
}

void Attention(const AttentionArgs& a, ComputePool& pool) {
  const int n_kv = a.kv->layout().n_head_kv;
  const int n_tokens = static_cast<int>(a.seqs.size());
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
  // Runs of consecutive tokens of one sequence, at most kQueryBlock long, times KV heads.
  // Called from the pool's owner thread only, so one buffer per thread is reused.
  thread_local std::vector<Item> owner_items;
  std::vector<Item>& items = owner_items;  // the workers must see this thread's buffer
  items.clear();
  for (int t0 = 0; t0 < n_tokens;) {
    int t1 = t0 + 1;
    while (t1 < n_tokens && t1 - t0 < kQueryBlock && a.seqs[size_t(t1)] == a.seqs[size_t(t0)]) {
      ++t1;
    }
    for (int h = 0; h < n_kv; ++h) items.push_back(Item{t0, t1, h});
    t0 = t1;
  }
  const VectorKernels vk = ActiveVectorKernels();
  pool.ParallelFor(static_cast<int64_t>(items.size()), 1, [&](int64_t begin, int64_t end, int) {
    thread_local Scratch sc;
    for (int64_t i = begin; i < end; ++i) {
      const Item& it = items[size_t(i)];
      AttendGroup(a, vk, bases.data() + first[size_t(it.t0)], it, sc);
    }
  });
}

}  // namespace hotline::engine
