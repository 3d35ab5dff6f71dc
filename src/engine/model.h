// Model: hyper-parameters and weights of a decoder-only transformer read from a GGUF file.
//
// Families: `llama` (Llama 1/2/3, TinyLlama, Mistral-style files, llama2.c imports) and `qwen2`
// (Qwen2/Qwen2.5). Both are RMSNorm -> attention with rotary embeddings and grouped-query heads ->
// RMSNorm -> SwiGLU feed-forward. What differs is fixed per family, not read from the file:
//   llama: rotary embedding on adjacent pairs (x[2i], x[2i+1]) — GGUF llama files store Q/K rows
//          permuted so that this "normal" ggml rope is exact; Q/K/V biases only if present.
//   qwen2: rotary embedding on half-split pairs (x[i], x[i + n_rot/2]) (NEOX style); Q/K/V biases.
// The output projection is `output.weight`, or the token embedding when that is absent (tied).
// Llama 3.1/3.2 files carry their RoPE frequency scaling as `rope_freqs.weight` (n_rot/2 factors,
// one per rotated pair): pair i turns by pos * base^(-2i/n_rot) / factor[i]. Any other
// `general.architecture` is refused, and so is any tensor the engine does not use (a file whose
// computation the engine does not implement would run with wrong results): load errors name it.
//
// Weights are zero-copy views into the GgufFile mapping (matrices stay in their stored type and
// are multiplied by MatMul); norms and biases, which are tiny, are converted to float at load.
// When the active kernel path reads packed weights (KernelIsaUsesPackedWeights), Load also
// builds a packed copy of every matrix a forward pass multiplies whose type has such a layout
// (Q4_0, Q8_0): that memory is held by the Model, and the mapped pages of those matrices are
// then read only at load (the embedding table still serves EmbedToken).
//
// Ownership and threads: a Model holds a shared_ptr to its GgufFile and is immutable after Load();
// any number of forward passes (each with its own KV cache and workspace) may read it at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "engine/gguf.h"
#include "engine/matmul.h"

namespace hotline::engine {

enum class ModelArch : uint8_t { kLlama, kQwen2 };
enum class RopeStyle : uint8_t {
  kAdjacentPairs,  // ggml "normal" rope: rotates (x[2i], x[2i+1])
  kHalfSplit,      // ggml "neox" rope: rotates (x[i], x[i + n_rot/2])
};

// Largest head dimension accepted: attention keeps one head's accumulators on the stack.
inline constexpr int kMaxHeadDim = 512;

struct ModelHParams {
  ModelArch arch = ModelArch::kLlama;
  std::string arch_name;  // general.architecture
  int n_vocab = 0;
  int n_embd = 0;       // <arch>.embedding_length
  int n_layer = 0;      // <arch>.block_count
  int n_head = 0;       // <arch>.attention.head_count
  int n_head_kv = 0;    // <arch>.attention.head_count_kv (default: n_head)
  int n_ff = 0;         // <arch>.feed_forward_length
  int n_ctx_train = 0;  // <arch>.context_length
  int head_dim = 0;     // n_embd / n_head (or <arch>.attention.key_length)
  int n_rot = 0;        // <arch>.rope.dimension_count (default: head_dim)
  float rope_freq_base = 10000.0f;  // <arch>.rope.freq_base
  float rms_eps = 1e-5f;            // <arch>.attention.layer_norm_rms_epsilon
  RopeStyle rope_style = RopeStyle::kAdjacentPairs;

  // Reads and validates the hyper-parameters (ranges, divisibility, GQA ratio).
  static Result<ModelHParams> FromGguf(const GgufFile& file);
};

struct LayerWeights {
  std::vector<float> attn_norm;  // n_embd
  WeightMatrix wq, wk, wv, wo;
  std::vector<float> bq, bk, bv;  // empty when the file has no bias
  std::vector<float> ffn_norm;    // n_embd
  WeightMatrix w_gate, w_up, w_down;
};

class Model {
 public:
  // Validates every tensor's presence, shape and type against the hyper-parameters.
  static Result<std::unique_ptr<Model>> Load(std::shared_ptr<const GgufFile> file);

  const ModelHParams& hparams() const { return hp_; }
  const GgufFile& file() const { return *file_; }
  const std::vector<LayerWeights>& layers() const { return layers_; }
  const WeightMatrix& token_embd() const { return token_embd_; }
  const WeightMatrix& output() const { return output_; }  // == token_embd() when tied
  bool tied_output() const { return tied_; }
  const std::vector<float>& output_norm() const { return output_norm_; }
  // `rope_freqs.weight`: n_rot/2 positive divisors of the rotary frequencies; empty when absent.
  const std::vector<float>& rope_freq_factors() const { return rope_freq_factors_; }
  // Bytes of the matrices one decode step streams (every layer matrix + output projection).
  uint64_t weights_bytes() const { return weights_bytes_; }
  // Bytes of packed weight copies held (0 unless the active kernel path reads packed weights).
  uint64_t packed_bytes() const { return packed_bytes_; }

  // Writes the float embedding of `token` (n_embd values). REQUIRES: 0 <= token < n_vocab.
  void EmbedToken(int32_t token, float* out) const;

 private:
  Model() = default;
  std::shared_ptr<const GgufFile> file_;
  ModelHParams hp_;
  std::vector<LayerWeights> layers_;
  WeightMatrix token_embd_{};
  WeightMatrix output_{};
  bool tied_ = false;
  std::vector<float> output_norm_;
  std::vector<float> rope_freq_factors_;
  uint64_t weights_bytes_ = 0;
  int64_t embd_row_bytes_ = 0;
  std::vector<PackedBytes> packed_;  // owners of the WeightMatrix::packed copies
  uint64_t packed_bytes_ = 0;
};

}  // namespace hotline::engine
