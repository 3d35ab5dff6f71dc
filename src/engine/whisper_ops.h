// Row operations of the Whisper forward pass (whisper_forward.h): LayerNorm, exact GELU, bias
// and residual adds, head splitting and multi-head attention over head-major K/V.
//
// Internal to the engine's Whisper code. Activations are row-major: n_rows rows of `n` floats.
// Threads: every function that takes a ComputePool runs on it (call from the pool's owner thread;
// small inputs run on the caller alone) and blocks until done. No allocation.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/compute_pool.h"
#include "engine/whisper_model.h"

namespace hotline::engine::whisper {

// y = LayerNorm(x) * weight + bias per row (eps kWhisperLayerNormEps). y may equal x.
void LayerNormRows(const float* x, const WhisperLayerNorm& ln, float* y, int n_rows, int n,
                   ComputePool& pool);

// x[r][i] += b[i].
void AddBias(float* x, const std::vector<float>& b, int n_rows, int n);

// x[r][i] = gelu(x[r][i] + b[i]), the exact erf GELU: 0.5 v (1 + erf(v / sqrt(2))).
void AddBiasGelu(float* x, const std::vector<float>& b, int n_rows, int n, ComputePool& pool);

// x[r][i] += y[r][i] + b[i] (a projection's output and bias added to the residual stream).
void AddResidual(float* x, const float* y, const std::vector<float>& b, int n_rows, int n);

// Scatters rows of n_head * head_dim floats into head-major storage: row t's head h goes to
// dst[((h * capacity) + pos0 + t) * head_dim]. REQUIRES: pos0 + n_rows <= capacity.
void SplitHeads(const float* x, int n_rows, int n_head, int head_dim, float* dst, int capacity,
                int pos0);

// Multi-head attention of n_q query rows (n_head * head_dim floats each) over keys and values
// stored head-major (as SplitHeads writes them, `capacity` rows per head).
//   causal: query row i sees positions [0, pos0 + i + 1) (decoder self-attention);
//   else:   every query sees positions [0, n_kv).
// out rows like q; scale = 1 / sqrt(head_dim). `scratch` holds pool.num_threads() rows of
// `scratch_stride` floats, scratch_stride >= the longest visible context.
struct AttentionSpec {
  const float* q = nullptr;
  const float* k = nullptr;
  const float* v = nullptr;
  float* out = nullptr;
  int n_q = 0;
  int n_head = 0;
  int head_dim = 0;
  int capacity = 0;
  bool causal = false;
  int pos0 = 0;  // causal only
  int n_kv = 0;  // non-causal only
  float* scratch = nullptr;
  int scratch_stride = 0;
};
void MultiHeadAttention(const AttentionSpec& a, ComputePool& pool);

}  // namespace hotline::engine::whisper
