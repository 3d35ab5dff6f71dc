#include "engine/whisper_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine/matmul.h"

namespace hotline::engine::whisper {
namespace {

// Below this many elements a row operation runs on the caller: waking the pool costs more than
// the work (a decode step's rows are one token wide).
constexpr int64_t kParallelMinElems = 1 << 14;

template <class F>
void ForRows(ComputePool& pool, int n_rows, int n, F&& fn) {
  if (int64_t{n_rows} * n < kParallelMinElems || pool.num_threads() == 1) {
    fn(0, n_rows);
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kParallelMinElems / 4 / std::max(1, n));
  pool.ParallelFor(n_rows, grain, [&](int64_t begin, int64_t end, int) {
    fn(static_cast<int>(begin), static_cast<int>(end));
  });
}

}  // namespace

void LayerNormRows(const float* x, const WhisperLayerNorm& ln, float* y, int n_rows, int n,
                   ComputePool& pool) {
  const float* w = ln.weight.data();
  const float* b = ln.bias.data();
  ForRows(pool, n_rows, n, [&](int r0, int r1) {
    for (int r = r0; r < r1; ++r) {
      const float* xr = x + int64_t{r} * n;
      float* yr = y + int64_t{r} * n;
      // Two passes (mean, then the centred sum of squares): the one-pass form loses digits when
      // the mean is large against the spread, which the residual stream's rows can be.
      float sum = 0.f;
      for (int i = 0; i < n; ++i) sum += xr[i];
      const float mean = sum / static_cast<float>(n);
      float ss = 0.f;
      for (int i = 0; i < n; ++i) {
        const float d = xr[i] - mean;
        ss += d * d;
      }
      const float inv = 1.0f / std::sqrt(ss / static_cast<float>(n) + kWhisperLayerNormEps);
      for (int i = 0; i < n; ++i) yr[i] = (xr[i] - mean) * inv * w[i] + b[i];
    }
  });
}

void AddBias(float* x, const std::vector<float>& b, int n_rows, int n) {
  for (int r = 0; r < n_rows; ++r) {
    float* xr = x + int64_t{r} * n;
    for (int i = 0; i < n; ++i) xr[i] += b[size_t(i)];
  }
}

void AddBiasGelu(float* x, const std::vector<float>& b, int n_rows, int n, ComputePool& pool) {
  // gelu(v) = 0.5 v (1 + erf(v / sqrt 2)) = 0.5 v erfc(z) for v < 0, 0.5 v (2 - erfc(z)) for
  // v >= 0, z = |v| / sqrt 2. erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z / 2), with the
  // Chebyshev fit of Numerical Recipes (6.2): relative error below 1.2e-7 for every z, and the
  // exponential (argument <= 0) runs on the SIMD path. std::erf costs ~7 ns an element, which
  // was a quarter of a short encoder pass.
  constexpr int kChunk = 256;
  const VectorKernels vk = ActiveVectorKernels();
  ForRows(pool, n_rows, n, [&](int r0, int r1) {
    // Whole chunks of fixed length (the tail zero-padded) so that the compiler vectorizes the
    // polynomial loop even at -O2 for baseline x86-64.
    float v[kChunk], t[kChunk], e[kChunk];
    for (int r = r0; r < r1; ++r) {
      float* xr = x + int64_t{r} * n;
      for (int c0 = 0; c0 < n; c0 += kChunk) {
        const int c = std::min(kChunk, n - c0);
        for (int i = 0; i < c; ++i) v[i] = xr[c0 + i] + b[size_t(c0 + i)];
        for (int i = c; i < kChunk; ++i) v[i] = 0.0f;
        for (int i = 0; i < kChunk; ++i) {
          const float z = std::abs(v[i]) * 0.70710678118654752f;
          const float ti = 1.0f / (1.0f + 0.5f * z);
          const float p =
              -1.26551223f +
              ti *
                  (1.00002368f +
                   ti * (0.37409196f +
                         ti * (0.09678418f +
                               ti * (-0.18628806f +
                                     ti * (0.27886807f +
                                           ti * (-1.13520398f +
                                                 ti * (1.48851587f + ti * (-0.82215223f +
                                                                           ti * 0.17087277f))))))));
          t[i] = ti;
          e[i] = std::min(0.0f, p - z * z);  // P(1) rounds to +-1e-8 at z = 0
        }
        vk.exp_shifted(e, kChunk, 0.0f);
        for (int i = 0; i < kChunk; ++i) {
          // erfc for v < 0, 2 - erfc otherwise, without a branch (the signs are random).
          const float erfc = t[i] * e[i];
          const float nonneg = static_cast<float>(v[i] >= 0.0f);
          t[i] = 0.5f * v[i] * (erfc + nonneg * (2.0f - 2.0f * erfc));
        }
        for (int i = 0; i < c; ++i) xr[c0 + i] = t[i];
      }
    }
  });
}

void AddResidual(float* x, const float* y, const std::vector<float>& b, int n_rows, int n) {
  for (int r = 0; r < n_rows; ++r) {
    float* xr = x + int64_t{r} * n;
    const float* yr = y + int64_t{r} * n;
    for (int i = 0; i < n; ++i) xr[i] += yr[i] + b[size_t(i)];
  }
}

void SplitHeads(const float* x, int n_rows, int n_head, int head_dim, float* dst, int capacity,
                int pos0) {
  const size_t row_bytes = sizeof(float) * static_cast<size_t>(head_dim);
  for (int t = 0; t < n_rows; ++t) {
    const float* xr = x + int64_t{t} * n_head * head_dim;
    for (int h = 0; h < n_head; ++h) {
      std::memcpy(dst + (int64_t{h} * capacity + pos0 + t) * head_dim, xr + h * head_dim,
                  row_bytes);
    }
  }
}

void MultiHeadAttention(const AttentionSpec& a, ComputePool& pool) {
  const VectorKernels vk = ActiveVectorKernels();
  const int D = a.head_dim;
  const int E = a.n_head * D;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // One item per (query row, head); a decode step has n_head items, an encoder pass thousands.
  auto run = [&](int64_t begin, int64_t end, int thread) {
    float* s = a.scratch + int64_t{thread} * a.scratch_stride;
    for (int64_t item = begin; item < end; ++item) {
      const int i = static_cast<int>(item / a.n_head);
      const int h = static_cast<int>(item % a.n_head);
      const int c = a.causal ? a.pos0 + i + 1 : a.n_kv;
      const float* q = a.q + int64_t{i} * E + int64_t{h} * D;
      const float* k = a.k + int64_t{h} * a.capacity * D;
      const float* v = a.v + int64_t{h} * a.capacity * D;
      float* out = a.out + int64_t{i} * E + int64_t{h} * D;
      vk.dot_rows(q, k, c, D, scale, s);
      const float m = *std::max_element(s, s + c);
      const float sum = vk.exp_shifted(s, c, m);
      std::fill(out, out + D, 0.f);
      vk.weighted_row_sum(s, v, c, D, out);
      const float inv = 1.0f / sum;
      for (int d = 0; d < D; ++d) out[d] *= inv;
    }
  };
  const int64_t items = int64_t{a.n_q} * a.n_head;
  if (pool.num_threads() == 1) {
    run(0, items, 0);
    return;
  }
  pool.ParallelFor(items, 0, run);
}

}  // namespace hotline::engine::whisper
