// TrainModel: the fp32 training form of the engine's llama architecture — token embedding,
// per layer RMSNorm -> attention (rotary embedding on adjacent pairs, causal mask, grouped-query
// heads) -> residual, RMSNorm -> SwiGLU feed-forward -> residual, then a final RMSNorm and the
// output projection (its own matrix, or the embedding when tied).
//
// The conventions are exactly those of engine::ForwardPass for a `llama` GGUF file, so the
// exported weights (train/export.h) need no permutation: every matrix is stored row-major as
// (out x in) and multiplies a column vector (y = W x), rope rotates (x[2i], x[2i+1]) by
// pos * base^(-2i/head_dim), attention scores are scaled by 1/sqrt(head_dim).
//
// Parameters live in one flat float vector (so the optimizer and checkpoints treat them as one
// array); ParamLayout names each tensor's slice.
//
// Forward/Backward run a batch of B sequences of T tokens, each sequence starting at position 0
// (one training example per row, padded to T; padding is excluded by zero loss weights).
// Work is split over a ComputePool so that every output element is computed by exactly one
// thread in a fixed order: results are bit-identical whatever the thread count.
//
// Ownership and threads: a TrainModel borrows the pool (which must outlive it) and owns its
// activation buffers, reused across steps. One thread at a time calls its methods.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "engine/compute_pool.h"

namespace hotline::train {

struct ModelShape {
  int n_vocab = 0;
  int dim = 0;
  int n_layer = 0;
  int n_head = 0;
  int n_head_kv = 0;
  int n_ff = 0;
  int seq_len = 0;  // context length the model is trained (and exported) for
  bool tied = false;
  float rope_base = 10000.0f;
  float rms_eps = 1e-5f;

  int head_dim() const { return n_head > 0 ? dim / n_head : 0; }
  int kv_dim() const { return n_head_kv * head_dim(); }
  // Ranges, divisibility (dim by heads, heads by kv heads), even head_dim.
  Status Validate() const;
};

struct TensorSlice {
  std::string name;           // GGUF tensor name ("blk.0.attn_q.weight")
  std::vector<int64_t> dims;  // ggml order: dims[0] = columns (input width)
  size_t offset = 0;          // into the flat parameter vector
  size_t size = 0;
};

struct LayerOffsets {
  size_t attn_norm, wq, wk, wv, wo, ffn_norm, w_gate, w_up, w_down;
};

class ParamLayout {
 public:
  explicit ParamLayout(const ModelShape& s);
  size_t total() const { return total_; }
  const std::vector<TensorSlice>& tensors() const { return tensors_; }
  size_t token_embd() const { return token_embd_; }
  size_t output_norm() const { return output_norm_; }
  size_t output() const { return output_; }  // == token_embd() when tied
  const LayerOffsets& layer(int l) const { return layers_[size_t(l)]; }

 private:
  size_t Add(const std::string& name, std::vector<int64_t> dims);
  std::vector<TensorSlice> tensors_;
  std::vector<LayerOffsets> layers_;
  size_t token_embd_ = 0, output_norm_ = 0, output_ = 0, total_ = 0;
};

// Norm gains 1, matrices N(0, 0.02), the two residual output matrices (attn_output, ffn_down)
// scaled by 1/sqrt(2 * n_layer) — the usual GPT-2 initialisation. Same seed, same weights.
std::vector<float> InitParams(const ModelShape& s, uint64_t seed);

// One batch: B rows of T tokens. targets[i] is the token that should follow tokens[i];
// weights[i] its loss weight (0 for padding and prompt tokens).
struct Batch {
  int B = 0;
  int T = 0;
  std::vector<int32_t> tokens, targets;
  std::vector<float> weights;
};

class TrainModel {
 public:
  TrainModel(const ModelShape& shape, engine::ComputePool& pool);

  const ModelShape& shape() const { return shape_; }
  const ParamLayout& layout() const { return layout_; }

  // Mean weighted cross-entropy (nats per weighted token; sum(w * nll) / sum(w)), keeping the
  // activations for Backward(). `logits`, when set, receives B*T*n_vocab values.
  // Errors: a token or target outside the vocabulary, T > seq_len, sizes that do not match.
  Result<double> Forward(std::span<const float> params, const Batch& batch,
                         std::vector<float>* logits = nullptr);
  // Gradient of the last Forward's loss, written to `grads` (params.size(), overwritten).
  // REQUIRES: Forward() succeeded with the same params and batch just before.
  void Backward(std::span<const float> params, const Batch& batch, std::span<float> grads);

 private:
  void Resize(int B, int T);
  // Forward's steps. The batch checked against the model (shapes, ids, weights); returns the sum
  // of its loss weights.
  Result<double> CheckBatch(std::span<const float> params, const Batch& batch) const;
  // Causal attention of layer `l` over the saved q/k/v: the probabilities and the heads' output.
  void AttentionForward(int l, int B, int T);
  // Weighted cross-entropy of the saved logits; they become d(loss)/d(logits) for Backward.
  double CrossEntropy(const Batch& batch, double weight_sum);
  // Backward's steps. RMS norm: the gain's gradient into grads[g_off...], d/d(x) into `dx`.
  void NormBackward(const float* params, float* grads, const float* x, const float* rs,
                    size_t g_off, const float* dy, float* dx, size_t N);
  // Attention of layer `l`: from d/d(its output) (datt_) to dq_, dk_, dv_ (before RoPE's inverse).
  void AttentionBackward(int l, int B, int T);

  ModelShape shape_;
  ParamLayout layout_;
  engine::ComputePool& pool_;
  int B_ = 0, T_ = 0;
  double weight_sum_ = 0;
  // Saved activations; per layer arrays are n_layer x (N x width), N = B*T.
  std::vector<float> x_;  // residual stream entering each layer, plus the final one
  std::vector<float> xn1_, rs1_, q_, k_, v_, probs_, att_, xmid_, xn2_, rs2_, gate_, up_, hid_;
  std::vector<float> xf_, rsf_, logits_;
  std::vector<float> rope_cos_, rope_sin_;  // T x head_dim/2
  // Backward scratch.
  std::vector<float> dx_, dxn_, dq_, dk_, dv_, datt_, dgate_, dup_, dhid_, dlogits_, dxf_;
};

}  // namespace hotline::train
