// Whisper forward passes: WhisperEncoder (log-mel frames -> audio features) and WhisperDecoder
// (tokens -> logits, attending to one utterance's audio features), over a WhisperModel.
//
// Encoder: runs on the actual audio length. Input: frame-major log-mel, mel[t * n_mels + m] for
// frames t < n_frames (what the front end produces), n_frames even and in [2, 2 * n_audio_ctx].
// conv1 (kernel 3, stride 1, padding 1) + GELU, conv2 (kernel 3, stride 2, padding 1) + GELU,
// + encoder.positional_embedding[0 : n_frames / 2], the encoder blocks, ln_post. Output:
// n_frames / 2 rows of n_audio_state floats. A 3 s question (300 frames) costs a 150-position
// pass, not a 1500-position one. (Whisper was trained on 30 s windows; whisper.cpp's
// `audio_ctx` option runs shortened ones the same way.)
//
// Decoder: token embedding + decoder.positional_embedding[pos], per block causal self-attention
// (KV cache), cross-attention over the utterance's audio features (keys/values computed once by
// SetAudio), GELU MLP; then decoder.ln and logits = x . token_embedding^T. Attention scale is
// 1 / sqrt(head_dim); LayerNorm eps 1e-5; GELU is the exact erf form.
//
// Ownership and threads: both borrow the WhisperModel and the ComputePool (which must outlive
// them) and own their workspaces, which grow to the largest input seen and are then reused: no
// allocation per token in steady state (Decode allocates only when a call has more tokens than
// any earlier one, or `logits` must grow). One thread at a time calls a given encoder/decoder (the
// pool's owner thread); any number of them may share one model, each with its own pool.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "engine/compute_pool.h"
#include "engine/whisper_model.h"

namespace hotline::engine {

class WhisperEncoder {
 public:
  WhisperEncoder(const WhisperModel& model, ComputePool& pool);

  // Encodes n_frames frames of `mel` (frame-major, see above; mel.size() == n_frames * n_mels)
  // into n_frames / 2 rows of n_audio_state floats in *out (resized). Errors: InvalidArgument
  // for an odd, zero or too large n_frames, or a size mismatch; nothing is computed then.
  Status Encode(std::span<const float> mel, int n_frames, std::vector<float>* out);

  // Audio positions the encoder makes of n_frames frames.
  static int PositionsForFrames(int n_frames) { return n_frames / 2; }

 private:
  void Grow(int n_frames);
  void Layer(const WhisperEncoderLayer& L, int n);

  const WhisperModel& model_;
  ComputePool& pool_;
  // Workspaces: conv windows, conv1 output, then n positions x width activations.
  std::vector<float> cols_, h1_, x_, xn_, q_, k_, v_, att_, tmp_, mlp_;
  std::vector<float> kh_, vh_;  // head-major keys / values of the current layer
  std::vector<float> scratch_;  // attention scores, one row per pool thread
};

enum class WhisperLogits : uint8_t {
  kLast,  // the last token's n_vocab logits
  kAll,   // every token's, n_tokens x n_vocab (tests, scoring a whole prompt)
};

class WhisperDecoder {
 public:
  // Allocates the self-attention cache: n_text_layer x max_tokens x n_text_state floats for keys
  // and as many for values (tiny: 5.5 MB at 448 tokens). max_tokens <= 0 or > n_text_ctx means
  // n_text_ctx.
  WhisperDecoder(const WhisperModel& model, ComputePool& pool, int max_tokens = 0);

  // Starts an utterance: computes every layer's cross-attention keys and values from
  // `encoder_output` (n_positions rows of n_audio_state floats, WhisperEncoder's output) and
  // clears the token history. The cross cache grows to the longest utterance seen.
  // Errors: InvalidArgument for n_positions outside [1, n_audio_ctx] or a size mismatch (the
  // decoder then has no audio).
  Status SetAudio(std::span<const float> encoder_output, int n_positions);

  // Clears the token history but keeps the audio: decoding the same utterance again (another
  // prompt, or a temperature fallback) costs no cross-attention work.
  void Reset() { n_past_ = 0; }

  // Appends `tokens` at positions n_past() .. n_past() + n - 1 and writes logits (see
  // WhisperLogits) into *logits (resized). Errors (nothing changes): FailedPrecondition without
  // audio; InvalidArgument for no tokens or an id outside [0, n_vocab); OutOfRange when the
  // history would pass max_tokens().
  Status Decode(std::span<const int32_t> tokens, std::vector<float>* logits,
                WhisperLogits which = WhisperLogits::kLast);

  int n_past() const { return n_past_; }
  int max_tokens() const { return capacity_; }
  bool has_audio() const { return n_audio_ > 0; }
  int n_audio_positions() const { return n_audio_; }
  int n_vocab() const { return model_.hparams().n_vocab; }

 private:
  void Grow(int n);
  void Layer(int l, int n);

  const WhisperModel& model_;
  ComputePool& pool_;
  const int capacity_;
  int n_past_ = 0;
  int n_audio_ = 0;
  // Self-attention cache, [layer][head][capacity_][head_dim], keys and values.
  std::vector<float> self_k_, self_v_;
  // Cross-attention keys/values, [layer][head][n_audio_][head_dim].
  std::vector<float> cross_k_, cross_v_;
  // Activations, n tokens x width.
  std::vector<float> x_, xn_, q_, k_, v_, att_, tmp_, mlp_;
  std::vector<float> scratch_;  // attention scores, one row per pool thread
  int grown_ = 0;               // tokens the activations hold
};

}  // namespace hotline::engine
