// `hotline kb import FILE.{csv,jsonl} [--db KB.sqlite]`: all-or-nothing knowledge-base import.
#include <iostream>

#include "answer/kb/knowledge_base.h"
#include "app/cli.h"
#include "app/hotline_config.h"

namespace hotline::cli {
namespace {

constexpr const char* kUsage =
    "usage: hotline kb import FILE.csv|FILE.jsonl [--db KB.sqlite] [--config FILE] [--set k=v]\n"
    "  Imports knowledge-base articles (columns/keys: id,title,body and optionally\n"
    "  intent,template,questions) into the SQLite knowledge base, creating it when absent.\n"
    "  Articles are upserted by id; a malformed record aborts the import with its line and\n"
    "  nothing is changed. Company facts written {{key}} ({{phone}}, {{website}}, ...) are\n"
    "  filled from answer.company of the configuration; an unknown {{name}} aborts the import.\n"
    "  --db PATH   knowledge base file (default kb.sqlite)\n";

int RunKbImport(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"--db", "--config", "--set"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help")) {
    std::cout << kUsage;
    return 0;
  }
  const std::string db = args->GetOr("--db", answer::KnowledgeBaseConfig{}.path);
  const std::string config_path = args->GetOr("--config", "");
  const std::vector<std::string> overrides = args->GetAll("--set");
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (args->positional().size() != 1) return UsageError("expected one input file", kUsage);
  auto cfg = LoadHotlineConfig(config_path, overrides);
  if (!cfg.ok()) return Fail(cfg.status());
  auto kb = answer::KnowledgeBase::Open(db, /*create=*/true);
  if (!kb.ok()) return Fail(kb.status());
  (*kb)->SetCompany(cfg->answer.company);
  auto report = (*kb)->ImportFile(args->positional()[0]);
  if (!report.ok()) {
    return Fail(Status(report.status().code(),
                       report.status().message() + " (nothing was imported)"));
  }
  std::cout << "imported " << report->records << " articles into " << db << ": " << report->added
            << " added, " << report->updated << " updated, " << report->unchanged
            << " unchanged (generation " << report->generation << ")\n";
  return 0;
}

const CommandRegistrar kKbImport({"kb import", "import articles into the knowledge base", kUsage,
                                  RunKbImport});

}  // namespace
}  // namespace hotline::cli
