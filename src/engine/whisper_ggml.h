// Import of whisper.cpp's ggml `.bin` model files (the format of ggml-tiny.bin ...
// ggml-large-v3.bin) into the engine's Whisper GGUF layout (engine/whisper_format.h).
//
// The `.bin` layout (little-endian, no alignment padding anywhere):
//   u32 magic 0x67676d6c ("lmgg" on disk);
//   11 x i32 hparams: n_vocab, n_audio_ctx, n_audio_state, n_audio_head, n_audio_layer,
//     n_text_ctx, n_text_state, n_text_head, n_text_layer, n_mels, ftype (quantized files store
//     1000 * quantization_version + ftype);
//   i32 n_mel, i32 n_fft (201), then n_mel * n_fft f32: the mel filterbank, row per mel band;
//   i32 n_tokens, then per token: u32 length + the token's raw bytes (not GPT-2 byte-to-unicode);
//   tensors until the end of the file, each: i32 n_dims (1..4), i32 name_len, i32 ggml type id,
//     n_dims x i32 dims (ggml order: dims[0] is the contiguous one), the name, the data.
//
// Conversion to GGUF (WhisperGgmlToGguf):
//   - the hparams through WriteWhisperHparams (ftype is not carried: each tensor keeps its type);
//   - tokenizer.ggml.model = "whisper" and tokenizer.ggml.tokens = the text tokens in GPT-2
//     byte-to-unicode form. Only ids below the end-of-text id are written (the `.bin` of an
//     English-only model also lists "<|endoftext|>" as token 50256; the GGUF computes every
//     special token from whisper.vocab_size instead, engine/whisper_tokenizer.h);
//   - lossy vocabularies: some `.bin` files (whisper.cpp's for-tests-ggml-*.bin, made by an early
//     converter from Hugging Face vocab.json) stored every token whose bytes are not valid UTF-8
//     as U+FFFD ("\xEF\xBF\xBD"): 128 of the 256 single-byte tokens and hundreds of partial
//     CJK/emoji tokens. The single-byte tokens are restored (ids 0..255 of both Whisper
//     vocabularies are the 256 bytes in GPT-2's byte-to-unicode order); the others cannot be, so
//     they are counted (WhisperGgmlImportSummary::lossy_tokens) and kept as stored. Text still
//     round-trips through such a vocabulary, but non-ASCII text may encode into more tokens than
//     Whisper's, and a model emitting one of those tokens decodes it as U+FFFD. Current
//     whisper.cpp converters write the tiktoken bytes unchanged (no loss);
//   - `mel_filters`: F32, ggml dims {n_fft, n_mels} (n_mels rows of 201 columns);
//   - every tensor by its name, type and bytes unchanged (whisper.cpp's converter writes 1-D
//     tensors, the conv biases and both positional embeddings as F32, the rest as F16 when
//     ftype is 1; quantized files use Q4_0/Q5_0/Q8_0/...). One reshape: whisper.cpp stores the
//     convolution biases `encoder.conv1.bias` / `encoder.conv2.bias` with dims {1, n_state} (it
//     adds them to a [time x state] activation by broadcasting); the GGUF holds them as
//     {n_state}. Any other tensor keeps its dims.
//
// Validation: every count and length is checked against the bytes left in the file before
// anything is allocated for it, hparams go through WhisperHparams::Validate, tensor types must be
// known ggml types whose size the engine computes (F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0,
// K-quants), tensor names must be unique. Errors are DataLoss (truncated/corrupt) or
// InvalidArgument (impossible values), each naming the file, the item and the byte offset.
//
// Ownership: WhisperGgmlFile owns its bytes (a read-only mapping for Open, a copy for FromBuffer);
// tensor views point into them and live as long as the file. Immutable after creation; may be read
// from any thread. Conversion borrows the tensor bytes, so keep the WhisperGgmlFile alive until the
// GgufWriter has written.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "engine/ggml_types.h"
#include "engine/gguf.h"
#include "engine/whisper_format.h"

namespace hotline::engine {

inline constexpr uint32_t kWhisperGgmlMagic = 0x67676d6c;

struct WhisperGgmlTensor {
  std::string name;
  GgmlType type = GgmlType::F32;
  int n_dims = 0;
  std::array<int64_t, 4> ne = {1, 1, 1, 1};  // ggml order, as stored; unused dims are 1
  std::span<const uint8_t> data;             // into the WhisperGgmlFile's bytes
  uint64_t file_offset = 0;                  // of the first data byte, for messages
};

class WhisperGgmlFile {
 public:
  // Maps and validates `path`. NotFound when it cannot be opened.
  static Result<std::unique_ptr<WhisperGgmlFile>> Open(const std::string& path);
  // Validates an in-memory image (tests, fuzzing); the bytes are copied once.
  static Result<std::unique_ptr<WhisperGgmlFile>> FromBuffer(std::span<const uint8_t> bytes,
                                                             std::string name = "<buffer>");
  ~WhisperGgmlFile();
  WhisperGgmlFile(const WhisperGgmlFile&) = delete;
  WhisperGgmlFile& operator=(const WhisperGgmlFile&) = delete;

  const std::string& name() const { return name_; }
  uint64_t file_size() const { return size_; }
  const WhisperHparams& hparams() const { return hparams_; }
  int ftype() const { return ftype_; }  // as stored (1000 * qnt_version + ftype when quantized)

  // The filterbank: n_mels() rows of n_fft_bins() (201) floats, mel-major.
  int n_fft_bins() const { return n_fft_bins_; }
  const std::vector<float>& mel_filters() const { return mel_filters_; }

  // Raw token bytes, id order (the file's count, 50257 for the published models).
  const std::vector<std::string>& tokens() const { return tokens_; }

  const std::vector<WhisperGgmlTensor>& tensors() const { return tensors_; }
  const WhisperGgmlTensor* FindTensor(std::string_view name) const;

 private:
  friend class WhisperGgmlParser;
  WhisperGgmlFile() = default;

  std::string name_;
  const uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  bool mapped_ = false;
  std::vector<uint8_t> owned_;
  WhisperHparams hparams_;
  int ftype_ = 0;
  int n_fft_bins_ = 0;
  std::vector<float> mel_filters_;
  std::vector<std::string> tokens_;
  std::vector<WhisperGgmlTensor> tensors_;
};

// The text tokens (ids 0 .. eot-1) as raw bytes, with lossy single-byte tokens restored (see
// above). InvalidArgument when the file has fewer tokens than the model's text vocabulary or a
// token among ids 0..255 is neither its GPT-2 byte nor U+FFFD.
struct WhisperGgmlVocab {
  std::vector<std::string> tokens;
  int restored_byte_tokens = 0;
  int lossy_tokens = 0;  // other tokens holding U+FFFD, kept as stored
};
Result<WhisperGgmlVocab> WhisperGgmlTextTokens(const WhisperGgmlFile& in);

struct WhisperGgmlImportSummary {
  WhisperHparams hparams;
  bool multilingual = false;
  int n_text_tokens = 0;  // written to tokenizer.ggml.tokens
  int restored_byte_tokens = 0;
  int lossy_tokens = 0;
  int n_tensors = 0;  // written (mel_filters excluded)
  // Tensors of WhisperTensorNames(hparams) the file lacks (the "for-tests" files have no weights).
  std::vector<std::string> missing_tensors;
  // Tensors the file has that WhisperTensorNames does not list (copied anyway).
  std::vector<std::string> extra_tensors;
};

// Fills `out` with the model's metadata, vocabulary, filterbank and tensors. Tensor bytes are
// borrowed from `in` (keep it alive until `out` is written).
Status WhisperGgmlToGguf(const WhisperGgmlFile& in, GgufWriter* out,
                         WhisperGgmlImportSummary* summary = nullptr);

// Open + WhisperGgmlToGguf + write `out_path`.
Status ConvertWhisperGgml(const std::string& in_path, const std::string& out_path,
                          WhisperGgmlImportSummary* summary = nullptr);

}  // namespace hotline::engine
