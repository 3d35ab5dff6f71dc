// Whisper model files: the hyper-parameters and the GGUF layout the engine's Whisper model reads.
//
// Whisper (Radford et al., 2022) is an encoder-decoder transformer over a log-mel spectrogram:
//   encoder: two 1-D convolutions (kernel 3; stride 1, then 2) with GELU, a sinusoidal position
//            table, n_audio_layer pre-LayerNorm blocks (self-attention, GELU MLP of 4 x state),
//            a final LayerNorm;
//   decoder: token embedding + learned position table, n_text_layer pre-LayerNorm blocks (causal
//            self-attention, cross-attention over the encoder output, GELU MLP), a final
//            LayerNorm, logits = x . token_embedding^T (tied).
//
// GGUF layout (general.architecture = "whisper"). Keys:
//   whisper.vocab_size, whisper.n_mels,
//   whisper.audio.context_length (1500 for 30 s), whisper.audio.embedding_length,
//   whisper.audio.head_count, whisper.audio.block_count,
//   whisper.text.context_length (448), whisper.text.embedding_length, whisper.text.head_count,
//   whisper.text.block_count;
//   tokenizer.ggml.model = "whisper", tokenizer.ggml.tokens: the text tokens (ids 0 ..
//   n_text_tokens-1; special tokens follow and are computed from vocab_size, not stored), each
//   written in GPT-2's byte-to-unicode form so that every string is valid UTF-8.
// Tensors keep the names of the reference PyTorch checkpoint (and of the ggml `.bin` files), so
// an import copies them by name: `encoder.conv1.weight`, `encoder.blocks.0.attn.query.weight`,
// `decoder.token_embedding.weight`, ... (WhisperTensorNames lists every one). `mel_filters`
// (F32, n_mels rows of n_fft/2+1 = 201 columns) carries the filterbank the model was trained
// with, when the file has one.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "engine/gguf.h"

namespace hotline::engine {

inline constexpr char kWhisperArch[] = "whisper";
inline constexpr int kWhisperSampleRateHz = 16000;
inline constexpr int kWhisperFftSize = 400;  // 25 ms window
inline constexpr int kWhisperHopSize = 160;  // 10 ms hop: 100 frames a second
inline constexpr int kWhisperChunkSeconds = 30;

struct WhisperHparams {
  int n_vocab = 0;
  int n_mels = 0;          // 80, or 128 for large-v3-class models
  int n_audio_ctx = 0;     // encoder positions (1500 = 30 s after the stride-2 convolution)
  int n_audio_state = 0;
  int n_audio_head = 0;
  int n_audio_layer = 0;
  int n_text_ctx = 0;      // decoder positions (448)
  int n_text_state = 0;
  int n_text_head = 0;
  int n_text_layer = 0;

  // OK when every field is positive, each state divisible by its head count, n_mels 80 or 128,
  // and every size within the bounds the engine accepts (so a hostile file cannot ask for
  // terabytes). The message names the field.
  Status Validate() const;
};

// Reads the whisper.* keys (and general.architecture == "whisper") and validates them; errors name
// the missing or bad key.
Result<WhisperHparams> ReadWhisperHparams(const GgufFile& file);
// Writes general.architecture and the whisper.* keys.
void WriteWhisperHparams(const WhisperHparams& hp, GgufWriter& out);

// Every tensor a Whisper model with these hyper-parameters holds, by name (mel_filters excluded).
std::vector<std::string> WhisperTensorNames(const WhisperHparams& hp);

}  // namespace hotline::engine
