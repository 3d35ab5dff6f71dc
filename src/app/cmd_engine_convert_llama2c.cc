// `hotline engine convert-llama2c CHECKPOINT.bin TOKENIZER.bin -o OUT.gguf`
// Converts a llama2.c checkpoint and its tokenizer.bin into an F32 llama GGUF (engine/llama2c.h).
#include <iostream>

#include "app/cli.h"
#include "engine/llama2c.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline engine convert-llama2c CHECKPOINT.bin TOKENIZER.bin -o OUT.gguf\n"
    "  Converts a llama2.c checkpoint (legacy export) and tokenizer.bin into a GGUF llama model\n"
    "  with F32 weights and a SentencePiece-style vocabulary.\n"
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
  if (args->positional().size() != 2) {
    return UsageError("expected CHECKPOINT.bin and TOKENIZER.bin", kUsage);
  }
  engine::Llama2cHeader h;
  Status s = engine::ConvertLlama2c(args->positional()[0], args->positional()[1], *out, &h);
  if (!s.ok()) return Fail(s);
  std::cerr << "wrote " << *out << ": dim " << h.dim << ", hidden " << h.hidden_dim << ", "
            << h.n_layers << " layers, " << h.n_heads << " heads (" << h.n_kv_heads
            << " KV), vocab " << h.vocab_size << ", context " << h.seq_len
            << (h.shared_classifier ? ", tied classifier" : ", separate classifier") << "\n";
  return 0;
}

const CommandRegistrar kConvert({"engine convert-llama2c",
                                 "convert a llama2.c checkpoint + tokenizer to GGUF", kUsage,
                                 RunConvert});

}  // namespace
}  // namespace hotline::cli
