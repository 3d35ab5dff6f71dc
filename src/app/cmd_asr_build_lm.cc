// `hotline asr build-lm TEXTS... -o DOMAIN_LM [--order N] [--dict PATH] [--column NAME]`
#include <cstdio>
#include <fstream>
#include <iostream>

#include "app/cli.h"
#include "asr/asr_config.h"
#include "asr/lm_builder.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline asr build-lm TEXTS... -o DOMAIN_LM [--order N] [--dict PATH] [--column NAME]\n"
    "\n"
    "Builds an n-gram language model (ARPA, Witten-Bell smoothing) for the embedded recognizer\n"
    "from caller phrasing: .csv files contribute one column (default 'instruction', as in the\n"
    "Bitext customer-support corpus), other files one text per line, mixed with the broad\n"
    "customer-service corpus (assets/asr/customer_service.txt). Numbers are spelled as callers\n"
    "say them; words missing from the pronunciation dictionary get letter-to-sound\n"
    "pronunciations when they occur at least twice, rarer ones (typos) are dropped (listed).\n"
    "  -o PATH        output ARPA file (use it with --lm, or asr.pocketsphinx.domain_lm); its\n"
    "                 words' pronunciations go to PATH.dict (asr.pocketsphinx.dictionary)\n"
    "  --order N      n-gram order, 1..5 (default 3)\n"
    "  --dict PATH    pronunciation dictionary (default: the pocketsphinx US English one)\n"
    "  --column NAME  CSV column to read (default instruction)\n"
    "  --broad FILE   broad corpus mixed in (default assets/asr/customer_service.txt; '' none)\n"
    "  --domain-repeat K  times each of TEXTS counts against one broad line (default 3)\n";

int RunBuildLm(std::span<const std::string> argv) {
  auto parsed = Args::Parse(argv, {"-o", "--order", "--dict", "--column", "--broad",
                                   "--domain-repeat"});
  if (!parsed.ok()) return UsageError(parsed.status().message(), kUsage);
  Args& args = *parsed;
  auto order = args.GetInt("--order", 3, 1, 5);
  if (!order.ok()) return UsageError(order.status().message(), kUsage);
  std::string out_path = args.GetOr("-o", "");
  std::string dict_path = args.GetOr("--dict", asr::PocketsphinxConfig{}.dictionary);
  std::string column = args.GetOr("--column", "instruction");
  asr::LmMix mix;
  mix.broad_corpus = args.GetOr("--broad", mix.broad_corpus);
  auto repeat = args.GetInt("--domain-repeat", mix.domain_repeat, 1, 100);
  if (!repeat.ok()) return UsageError(repeat.status().message(), kUsage);
  mix.domain_repeat = static_cast<int>(*repeat);
  if (Status s = args.Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (args.positional().empty()) return UsageError("asr build-lm needs at least one text file", kUsage);
  if (out_path.empty()) return UsageError("asr build-lm needs -o DOMAIN_LM", kUsage);

  std::vector<std::string> texts;
  for (const auto& path : args.positional()) {
    auto read = asr::ReadTrainingTexts(path, column);
    if (!read.ok()) return Fail(read.status());
    texts.insert(texts.end(), read->begin(), read->end());
  }
  auto built = asr::WriteDomainLm(texts, dict_path, out_path, static_cast<int>(*order), mix);
  if (!built.ok()) return Fail(built.status());
  const asr::LmBuildStats& st = *built;
  std::cout << out_path << ": " << st.sentences << " texts, " << st.words << " words, vocabulary "
            << st.vocabulary << ", n-grams";
  for (size_t n = 0; n < st.ngrams.size(); ++n) std::cout << (n ? "/" : " ") << st.ngrams[n];
  std::cout << "; " << st.oov_words << " words not in the dictionary dropped";
  if (!st.top_oov.empty()) {
    std::cout << " (most frequent:";
    for (size_t i = 0; i < st.top_oov.size() && i < 8; ++i) {
      std::cout << " " << st.top_oov[i].first << "×" << st.top_oov[i].second;
    }
    std::cout << ")";
  }
  if (!st.spelled_words.empty()) {
    std::cout << "; " << st.spelled_words.size() << " pronounced by letter-to-sound rules (";
    for (size_t i = 0; i < st.spelled_words.size() && i < 8; ++i) {
      std::cout << (i ? " " : "") << st.spelled_words[i];
    }
    std::cout << (st.spelled_words.size() > 8 ? " ...)" : ")");
  }
  std::cout << "\n" << out_path << ".dict: " << st.vocabulary
            << " words' pronunciations (the dictionary for this model in switched mode)\n";
  return 0;
}

const CommandRegistrar kBuildLm({"asr build-lm", "build a domain language model for the recognizer",
                                 kUsage, RunBuildLm});

}  // namespace
}  // namespace hotline::cli
