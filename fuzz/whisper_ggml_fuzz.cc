// whisper.cpp ggml model files (engine/whisper_ggml.h): the `.bin` parser that validates a whole
// file before anything reads it, the text-token repair, and the conversion to GGUF, whose output
// must read back as a Whisper GGUF (hyper-parameters, tokenizer, filterbank). Input: a file image.
#include <cstdint>
#include <memory>
#include <span>

#include "engine/gguf.h"
#include "engine/whisper_format.h"
#include "engine/whisper_ggml.h"
#include "engine/whisper_mel.h"
#include "engine/whisper_tokenizer.h"
#include "fuzz/fuzz_input.h"

using hotline::engine::GgufFile;
using hotline::engine::GgufWriter;
using hotline::engine::WhisperGgmlFile;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto opened = WhisperGgmlFile::FromBuffer(std::span<const uint8_t>(data, size), "fuzz.bin");
  if (!opened.ok()) return 0;
  const WhisperGgmlFile& file = **opened;
  HOTLINE_FUZZ_CHECK(file.hparams().Validate().ok());
  HOTLINE_FUZZ_CHECK(file.mel_filters().size() ==
                     static_cast<size_t>(file.hparams().n_mels) * file.n_fft_bins());
  volatile uint64_t sink = 0;
  for (const auto& t : file.tensors()) {
    HOTLINE_FUZZ_CHECK(file.FindTensor(t.name) != nullptr);
    if (!t.data.empty()) sink = sink + t.data.front() + t.data.back();
  }
  auto vocab = hotline::engine::WhisperGgmlTextTokens(file);
  if (vocab.ok()) sink = sink + vocab->tokens.size();

  GgufWriter writer;
  if (!hotline::engine::WhisperGgmlToGguf(file, &writer).ok()) return 0;
  auto bytes = writer.WriteBuffer();
  HOTLINE_FUZZ_CHECK(bytes.ok());
  // What the converter writes, the engine reads.
  auto gguf = GgufFile::FromBuffer(std::span<const uint8_t>(*bytes), "converted.gguf");
  HOTLINE_FUZZ_CHECK(gguf.ok());
  auto hp = hotline::engine::ReadWhisperHparams(**gguf);
  HOTLINE_FUZZ_CHECK(hp.ok());
  HOTLINE_FUZZ_CHECK(hp->n_vocab == file.hparams().n_vocab);
  auto filters = hotline::engine::WhisperMelFilters::FromGguf(**gguf);
  HOTLINE_FUZZ_CHECK(filters.ok());
  auto tok = hotline::engine::WhisperTokenizer::FromGguf(**gguf);
  if (tok.ok()) {
    const auto ids = (*tok)->Encode(" Hello world \xe8\xaf\x9d");
    sink = sink + (*tok)->Decode(ids).size();
  }
  return 0;
}
