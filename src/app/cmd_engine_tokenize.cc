// `hotline engine tokenize -m MODEL.gguf [--no-bos] [--no-parse-special] TEXT`
// Prints the token ids of TEXT, space-separated, on one line (BOS included when the model's
// vocabulary adds one, unless --no-bos).
#include <iostream>

#include "app/cli.h"
#include "engine/gguf.h"
#include "engine/tokenizer.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline engine tokenize -m MODEL.gguf [--no-bos] [--no-parse-special] TEXT\n"
    "  Prints the token ids of TEXT on one line, separated by spaces.\n"
    "  -m, --model FILE     GGUF model (or vocabulary-only GGUF) whose tokenizer to use\n"
    "  --no-bos             do not add the BOS/EOS tokens the vocabulary asks for\n"
    "  --no-parse-special   treat control-token text like <|im_start|> as plain text\n";

int RunTokenize(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"-m", "--model"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  std::optional<std::string> model = args->Get("-m");
  if (!model) model = args->Get("--model");
  const bool no_bos = args->Has("--no-bos");
  const bool no_parse_special = args->Has("--no-parse-special");
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (!model) return UsageError("missing -m MODEL.gguf", kUsage);
  if (args->positional().size() != 1) {
    return UsageError("expected exactly one TEXT argument (quote it)", kUsage);
  }

  auto file = engine::GgufFile::Open(*model);
  if (!file.ok()) return Fail(file.status());
  auto vocab = engine::Vocabulary::FromGguf(**file);
  if (!vocab.ok()) return Fail(vocab.status());
  auto tokenizer = engine::Tokenizer::Create(*vocab);
  if (!tokenizer.ok()) return Fail(tokenizer.status());

  engine::EncodeOptions options;
  options.add_special = !no_bos;
  options.parse_special = !no_parse_special;
  const std::vector<engine::TokenId> ids = (*tokenizer)->Encode(args->positional()[0], options);
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) line.push_back(' ');
    line += std::to_string(ids[i]);
  }
  std::cout << line << "\n";
  return 0;
}

const CommandRegistrar kTokenize({"engine tokenize", "print the token ids of a text", kUsage,
                                  RunTokenize});

}  // namespace
}  // namespace hotline::cli
