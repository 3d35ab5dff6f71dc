// `hotline kb bitext [--in customer_support.csv] [--out FILE.csv] [--clinc data_full.json]`:
// derives the demo knowledge base (voice-length answers and templates) from the Bitext
// customer-support corpus, with everyday example questions from CLINC150's train split.
#include <fstream>
#include <iostream>
#include <sstream>

#include "answer/eval/eval_data.h"
#include "answer/kb/kb_bitext.h"
#include "app/cli.h"

namespace hotline::cli {
namespace {

constexpr const char* kUsage =
    "usage: hotline kb bitext --in customer_support.csv [--out FILE.csv] [--per-intent N]\n"
    "                         [--clinc data_full.json]\n"
    "  Derives voice-length knowledge-base articles (1-2 sentences, {slot} templates, example\n"
    "  questions) from the Bitext customer-support corpus (CDLA-Sharing-1.0) and writes them as\n"
    "  a CSV for `hotline kb import` (to stdout without --out). --clinc adds example questions\n"
    "  from CLINC150's train split (CC BY 3.0) to the Bitext intents they ask about\n"
    "  (order_status -> track_order: \"where's my package\"); its val and test splits stay\n"
    "  unseen.\n";

int RunKbBitext(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"--in", "--out", "--per-intent", "--clinc"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help")) {
    std::cout << kUsage;
    return 0;
  }
  const auto in = args->Get("--in");
  const auto out = args->Get("--out");
  const auto clinc = args->Get("--clinc");
  auto per_intent = args->GetInt("--per-intent", 2, 1, 20);
  if (!per_intent.ok()) return UsageError(per_intent.status().message(), kUsage);
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (!in || !args->positional().empty()) return UsageError("expected --in FILE", kUsage);
  std::ifstream f(*in, std::ios::binary);
  if (!f) return Fail(NotFoundError("cannot read " + *in));
  std::ostringstream text;
  text << f.rdbuf();
  answer::BitextDeriveOptions options;
  options.articles_per_intent = static_cast<int>(*per_intent);
  if (clinc) {
    auto train = answer::LoadLabelledTexts(*clinc, "train");
    if (!train.ok()) return Fail(train.status().WithContext(*clinc));
    for (const answer::LabelledText& q : *train) answer::AddClincQuestion(q.label, q.text, options);
  }
  auto articles = answer::DeriveBitextArticles(text.str(), options);
  if (!articles.ok()) return Fail(articles.status().WithContext(*in));
  const std::string csv = answer::ArticlesToCsv(*articles);
  if (!out) {
    std::cout << csv;
    return 0;
  }
  std::ofstream o(*out, std::ios::binary);
  o << csv;
  if (!o.flush()) return Fail(UnavailableError("cannot write " + *out));
  std::cerr << "wrote " << articles->size() << " articles to " << *out << "\n";
  return 0;
}

const CommandRegistrar kKbBitext({"kb bitext", "derive the demo knowledge base from Bitext",
                                  kUsage, RunKbBitext});

}  // namespace
}  // namespace hotline::cli
