// `hotline kb search QUERY [--db KB.sqlite] [--k N]`: BM25 retrieval from the knowledge base.
#include <iomanip>
#include <iostream>

#include "answer/kb/knowledge_base.h"
#include "app/cli.h"

namespace hotline::cli {
namespace {

constexpr const char* kUsage =
    "usage: hotline kb search QUERY... [--db KB.sqlite] [--k N]\n"
    "  Prints the top N passages for QUERY (BM25 score, higher is better).\n"
    "  --db PATH   knowledge base file (default kb.sqlite)\n"
    "  --k N       passages to print, 1..50 (default 3)\n";

int RunKbSearch(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"--db", "--k"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help")) {
    std::cout << kUsage;
    return 0;
  }
  const std::string db = args->GetOr("--db", answer::KnowledgeBaseConfig{}.path);
  auto k = args->GetInt("--k", 3, 1, 50);
  if (!k.ok()) return UsageError(k.status().message(), kUsage);
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (args->positional().empty()) return UsageError("expected a query", kUsage);
  std::string query;
  for (const auto& p : args->positional()) query += (query.empty() ? "" : " ") + p;
  auto kb = answer::KnowledgeBase::Open(db, /*create=*/false);
  if (!kb.ok()) return Fail(kb.status());
  auto hits = (*kb)->Search(query, static_cast<int>(*k));
  if (!hits.ok()) return Fail(hits.status());
  if (hits->empty()) {
    std::cout << "no passage matches\n";
    return 0;
  }
  int rank = 0;
  for (const auto& p : *hits) {
    std::cout << ++rank << ". [" << std::fixed << std::setprecision(3) << p.score << "] "
              << p.article.id << " (" << (p.article.intent.empty() ? "-" : p.article.intent)
              << ") " << p.article.title << "\n   " << p.article.body << "\n";
  }
  return 0;
}

const CommandRegistrar kKbSearch({"kb search", "search the knowledge base (BM25)", kUsage,
                                  RunKbSearch});

}  // namespace
}  // namespace hotline::cli
