// WhisperModel: the weights of a Whisper encoder-decoder read from a GGUF file (whisper_format.h).
//
// Accepted tensors (ggml dims, ne[0] innermost; E_a = n_audio_state, E_t = n_text_state):
//   encoder.conv1.weight           {3, n_mels, E_a}  PyTorch Conv1d [out, in, kernel]  F32/F16
//   encoder.conv2.weight           {3, E_a, E_a}                                       F32/F16
//   encoder.conv{1,2}.bias         {E_a} or {1, E_a} (the ggml .bin layout)            F32/F16
//   encoder.positional_embedding   {E_a, n_audio_ctx}                                  F32/F16
//   decoder.positional_embedding   {E_t, n_text_ctx}                                   F32/F16
//   decoder.token_embedding.weight {E_t, n_vocab}   matrix (also the logits projection)
//   *.attn.{query,key,value,out}.weight   {E, E}    matrices
//   decoder.blocks.N.cross_attn.query/out {E_t, E_t}; cross_attn.key/value {E_a, E_t}: they read
//                                         the encoder output (E_a == E_t in every real model)
//   *.mlp.0.weight {E, 4E}, *.mlp.2.weight {4E, E}  matrices
//   LayerNorm weights/biases and linear biases      vectors of F32/F16
//   mel_filters {201, n_mels} F32/F16, optional (the front end's filterbank; not used here)
// Matrices may be F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 or a K-quant MatMul supports
// (cols a multiple of the block size); they stay in the mapping in their stored type and are
// multiplied by MatMul. Everything else is converted to float at load; conv weights are
// rearranged to rows [out][kernel][in] (see WhisperConv). Any other tensor is refused by name:
// a file whose computation the engine does not implement would run with wrong results.
//
// Ownership and threads: a WhisperModel holds a shared_ptr to its GgufFile and is immutable after
// Load(); any number of WhisperEncoder / WhisperDecoder (whisper_forward.h) may read it at once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "engine/gguf.h"
#include "engine/matmul.h"
#include "engine/whisper_format.h"

namespace hotline::engine {

inline constexpr float kWhisperLayerNormEps = 1e-5f;

struct WhisperLayerNorm {
  std::vector<float> weight;  // n
  std::vector<float> bias;    // n
};

// One attention block's projections. The key projection has no bias.
struct WhisperAttentionWeights {
  WeightMatrix query{}, key{}, value{}, out{};
  std::vector<float> query_bias, value_bias, out_bias;
};

struct WhisperMlpWeights {
  WeightMatrix fc1{}, fc2{};  // mlp.0 (E -> 4E), mlp.2 (4E -> E)
  std::vector<float> fc1_bias, fc2_bias;
};

struct WhisperEncoderLayer {
  WhisperLayerNorm attn_ln;
  WhisperAttentionWeights attn;
  WhisperLayerNorm mlp_ln;
  WhisperMlpWeights mlp;
};

struct WhisperDecoderLayer {
  WhisperLayerNorm attn_ln;
  WhisperAttentionWeights attn;  // causal self-attention
  WhisperLayerNorm cross_attn_ln;
  WhisperAttentionWeights cross_attn;  // key/value read the encoder output
  WhisperLayerNorm mlp_ln;
  WhisperMlpWeights mlp;
};

// A kernel-3 convolution as a float matrix: row o holds weight[o][i][k] at column k * in + i, so
// that an output position's input window (three consecutive frame-major rows of `in` floats) is
// one contiguous row of 3 * in floats multiplied by MatMul.
struct WhisperConv {
  std::vector<float> weight;  // out x (3 * in), rearranged from PyTorch [out][in][k]
  std::vector<float> bias;    // out
  WeightMatrix matrix{};      // F32 view of `weight`
  int in = 0;
  int out = 0;
};

class WhisperModel {
 public:
  // Opens `path` (GgufFile::Open) and loads it.
  static Result<std::unique_ptr<WhisperModel>> Load(const std::string& path);
  // Validates the hyper-parameters, then every tensor's presence, shape and type; errors name the
  // tensor and what was expected. Sizes are checked before anything is allocated.
  static Result<std::unique_ptr<WhisperModel>> Load(std::shared_ptr<const GgufFile> file);

  const WhisperHparams& hparams() const { return hp_; }
  const GgufFile& file() const { return *file_; }

  const WhisperConv& conv1() const { return conv1_; }
  const WhisperConv& conv2() const { return conv2_; }
  // n_audio_ctx rows of n_audio_state floats.
  const std::vector<float>& encoder_positions() const { return enc_pos_; }
  const std::vector<WhisperEncoderLayer>& encoder_layers() const { return enc_layers_; }
  const WhisperLayerNorm& encoder_ln_post() const { return enc_ln_post_; }

  // n_text_ctx rows of n_text_state floats.
  const std::vector<float>& decoder_positions() const { return dec_pos_; }
  const WeightMatrix& token_embedding() const { return token_emb_; }
  const std::vector<WhisperDecoderLayer>& decoder_layers() const { return dec_layers_; }
  const WhisperLayerNorm& decoder_ln() const { return dec_ln_; }

  // `mel_filters`: n_mels rows of 201 (n_fft / 2 + 1) floats; empty when the file has none.
  std::span<const float> mel_filters() const { return mel_filters_; }

  // Bytes of the matrices one decode step streams (decoder layers' self-attention, cross query
  // and out, MLP, and the logits projection).
  uint64_t decode_weights_bytes() const { return decode_bytes_; }
  // Bytes of packed weight copies held (0 unless the active kernel path reads packed weights).
  uint64_t packed_bytes() const { return packed_bytes_; }

  // Writes the float embedding of `token` (n_text_state values). REQUIRES: 0 <= token < n_vocab.
  void EmbedToken(int32_t token, float* out) const;

 private:
  WhisperModel() = default;
  Status PackMatrices();

  std::shared_ptr<const GgufFile> file_;
  WhisperHparams hp_;
  WhisperConv conv1_, conv2_;
  std::vector<float> enc_pos_;
  std::vector<WhisperEncoderLayer> enc_layers_;
  WhisperLayerNorm enc_ln_post_;
  std::vector<float> dec_pos_;
  WeightMatrix token_emb_{};
  int64_t token_row_bytes_ = 0;
  std::vector<WhisperDecoderLayer> dec_layers_;
  WhisperLayerNorm dec_ln_;
  std::vector<float> mel_filters_;
  uint64_t decode_bytes_ = 0;
  std::vector<PackedBytes> packed_;  // owners of the WeightMatrix::packed copies
  uint64_t packed_bytes_ = 0;
};

}  // namespace hotline::engine
