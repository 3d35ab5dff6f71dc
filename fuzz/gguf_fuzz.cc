// GGUF model files (engine/gguf.h): the container parser that validates a whole file before the
// engine touches it, then what reads the validated metadata and tensors: the hyper-parameters,
// the vocabulary (and a tokenizer over it) and the model's tensor checks. Input: a file image.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <string_view>

#include "engine/gguf.h"
#include "engine/model.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"
#include "fuzz/fuzz_input.h"

namespace {

using hotline::engine::GgufFile;
using hotline::engine::GgufValue;

// Reads every accessor of a value; the results must stay within the file.
uint64_t Touch(const GgufValue& v) {
  uint64_t sink = v.array_size();
  if (auto i = v.AsInt(); i.ok()) sink += static_cast<uint64_t>(*i);
  if (auto f = v.AsFloat(); f.ok()) sink += *f > 0;
  if (auto b = v.AsBool(); b.ok()) sink += *b;
  if (auto s = v.AsString(); s.ok()) sink += s->size() + (s->empty() ? 0 : s->front());
  if (auto a = v.AsStringArray(); a.ok()) {
    for (std::string_view s : *a) sink += s.size() + (s.empty() ? 0 : s.back());
  }
  if (auto a = v.AsArray<uint8_t>(); a.ok() && !a->empty()) sink += a->back();
  if (auto a = v.AsArray<int32_t>(); a.ok() && !a->empty()) sink += a->back();
  if (auto a = v.AsArray<uint32_t>(); a.ok() && !a->empty()) sink += a->back();
  if (auto a = v.AsArray<float>(); a.ok() && !a->empty()) sink += a->back() > 0;
  if (auto a = v.AsArray<int64_t>(); a.ok() && !a->empty()) sink += a->back();
  if (auto a = v.AsArray<double>(); a.ok() && !a->empty()) sink += a->back() > 0;
  if (!v.raw().empty()) sink += v.raw().back();
  return sink;
}

// HOTLINE_FUZZ_VERBOSE=1 prints how far each input got (for writing seeds that reach deep).
void Report(const char* stage, const hotline::Status& s) {
  static const bool verbose = std::getenv("HOTLINE_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::fprintf(stderr, "  %s: %s\n", stage, s.ok() ? "ok" : s.message().c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto opened = GgufFile::FromBuffer(std::span<const uint8_t>(data, size), "fuzz.gguf");
  Report("gguf", opened.status());
  if (!opened.ok()) return 0;
  std::shared_ptr<const GgufFile> file = std::move(opened).value();

  volatile uint64_t sink = 0;
  for (const auto& [key, value] : file->metadata()) {
    HOTLINE_FUZZ_CHECK(file->Find(key) == &value);  // keys are unique
    sink = sink + Touch(value);
  }
  const uint64_t data_bytes = file->file_size() - file->data_offset();
  HOTLINE_FUZZ_CHECK(file->data_offset() <= file->file_size());
  for (const auto& t : file->tensors()) {
    HOTLINE_FUZZ_CHECK(file->FindTensor(t.name) == &t);
    HOTLINE_FUZZ_CHECK(t.offset <= data_bytes && t.size_bytes <= data_bytes - t.offset);
    HOTLINE_FUZZ_CHECK(t.num_elements() >= 0);
    if (t.size_bytes > 0) sink = sink + t.data[0] + t.data[t.size_bytes - 1];
  }

  Report("hparams", hotline::engine::ModelHParams::FromGguf(*file).status());
  auto vocab = hotline::engine::Vocabulary::FromGguf(*file);
  Report("vocabulary", vocab.status());
  if (vocab.ok()) {
    auto tok = hotline::engine::Tokenizer::Create(*vocab);
    Report("tokenizer", tok.status());
    if (tok.ok()) {
      const auto ids = (*tok)->Encode("Hello, world! <|im_start|> 42 caf\xc3\xa9");
      for (auto id : ids) HOTLINE_FUZZ_CHECK((*vocab)->IsValid(id));
      sink = sink + (*tok)->Decode(ids).size();
    }
  }
  Report("model", hotline::engine::Model::Load(file).status());
  return 0;
}
