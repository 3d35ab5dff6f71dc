// `hotline engine convert-whisper IN.bin -o OUT.gguf`
// Converts a whisper.cpp ggml model (ggml-tiny.bin ... ggml-large-v3.bin) into the engine's
// Whisper GGUF layout (engine/whisper_ggml.h, engine/whisper_format.h).
#include <iostream>

#include "app/cli.h"
#include "engine/whisper_ggml.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline engine convert-whisper IN.bin -o OUT.gguf\n"
    "  Converts a whisper.cpp ggml model (.bin) into a Whisper GGUF: hyper-parameters,\n"
    "  vocabulary, mel filterbank and every tensor by name, types unchanged.\n"
    "  -o, --output FILE   GGUF file to write\n";

int RunConvert(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"-o", "--output"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  std::optional<std::string> out = args->Get("-o");
  if (!out) out = args->Get("--output");
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (!out) return UsageError("missing -o OUT.gguf", kUsage);
  if (args->positional().size() != 1) return UsageError("expected one IN.bin", kUsage);
  engine::WhisperGgmlImportSummary sum;
  Status s = engine::ConvertWhisperGgml(args->positional()[0], *out, &sum);
  if (!s.ok()) return Fail(s);
  const engine::WhisperHparams& hp = sum.hparams;
  std::cerr << "wrote " << *out << ": " << (sum.multilingual ? "multilingual" : "English-only")
            << ", vocab " << hp.n_vocab << " (" << sum.n_text_tokens << " text tokens), "
            << hp.n_mels << " mels, encoder " << hp.n_audio_layer << " x " << hp.n_audio_state
            << ", decoder " << hp.n_text_layer << " x " << hp.n_text_state << ", " << sum.n_tensors
            << " tensors\n";
  if (sum.restored_byte_tokens > 0 || sum.lossy_tokens > 0) {
    std::cerr << "note: the file stored tokens that are not valid UTF-8 as U+FFFD; restored "
              << sum.restored_byte_tokens << " single-byte tokens, " << sum.lossy_tokens
              << " others stay lossy (non-ASCII text may tokenize differently from Whisper's)\n";
  }
  if (!sum.missing_tensors.empty()) {
    std::cerr << "warning: " << sum.missing_tensors.size()
              << " of the model's tensors are missing (first: " << sum.missing_tensors[0]
              << "); the GGUF holds the vocabulary and filterbank only\n";
  }
  if (!sum.extra_tensors.empty()) {
    std::cerr << "note: " << sum.extra_tensors.size()
              << " tensors beyond Whisper's usual set were copied (first: " << sum.extra_tensors[0]
              << ")\n";
  }
  return 0;
}

const CommandRegistrar kConvert({"engine convert-whisper",
                                 "convert a whisper.cpp ggml model (.bin) to GGUF", kUsage,
                                 RunConvert});

}  // namespace
}  // namespace hotline::cli
