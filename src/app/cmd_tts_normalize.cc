// `hotline tts normalize TEXT... [--chunks]`: show what the speech normalizer (and optionally the
// sentence chunker) makes of a text.
#include <iostream>

#include "app/cli.h"
#include "tts/sentence_chunker.h"
#include "tts/text_normalizer.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline tts normalize TEXT... [--chunks]\n"
    "\n"
    "Prints TEXT as it would be spoken (numbers, currency, dates, codes, abbreviations expanded;\n"
    "markdown, URLs, emoji and {{placeholders}} removed).\n"
    "  --chunks   print the chunks the sentence chunker would synthesize, one per line\n";

int RunNormalize(std::span<const std::string> argv) {
  auto parsed = Args::Parse(argv, {});
  if (!parsed.ok()) return UsageError(parsed.status().message(), kUsage);
  Args& args = *parsed;
  const bool chunks = args.Has("--chunks");
  if (Status s = args.Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (args.positional().empty()) return UsageError("tts normalize needs TEXT", kUsage);
  std::string text;
  for (const auto& word : args.positional()) text += (text.empty() ? "" : " ") + word;
  tts::TextNormalizer normalizer;
  if (!chunks) {
    std::cout << normalizer.Normalize(text) << "\n";
    return 0;
  }
  tts::SentenceChunker chunker;
  for (const auto& c : chunker.Push(text)) std::cout << normalizer.Normalize(c) << "\n";
  for (const auto& c : chunker.Flush()) std::cout << normalizer.Normalize(c) << "\n";
  return 0;
}

const CommandRegistrar kNormalize({"tts normalize", "show text as the synthesizer will speak it",
                                   kUsage, RunNormalize});

}  // namespace
}  // namespace hotline::cli
