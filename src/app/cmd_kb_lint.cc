// `hotline kb lint FILE.csv [--config FILE] [--set key=value]`: what in a knowledge base should
// not be spoken to a caller (answer/kb/kb_lint.h), with line numbers; exits 1 when anything is
// found.
#include <fstream>
#include <iostream>
#include <sstream>

#include "answer/kb/kb_lint.h"
#include "app/cli.h"
#include "app/hotline_config.h"

namespace hotline::cli {
namespace {

constexpr const char* kUsage =
    "usage: hotline kb lint FILE.csv [--config FILE] [--set key=value ...]\n"
    "  Checks every article's spoken body (and template) for what should not be said to a\n"
    "  caller: filler with no concrete step, unfilled or unknown {{placeholders}}, a first\n"
    "  sentence over 25 words, markup, unspeakable tokens (URLs, symbols, emoji). Company facts\n"
    "  ({{phone}}, {{website}}, ...) are filled from answer.company of the configuration.\n"
    "  Prints FILE:LINE: ID: KIND: what is wrong; exits 1 when an issue is found.\n";

int RunKbLint(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"--config", "--set"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help")) {
    std::cout << kUsage;
    return 0;
  }
  const std::string config_path = args->GetOr("--config", "");
  const std::vector<std::string> overrides = args->GetAll("--set");
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (args->positional().size() != 1) return UsageError("expected one FILE.csv", kUsage);
  auto cfg = LoadHotlineConfig(config_path, overrides);
  if (!cfg.ok()) return Fail(cfg.status());
  const std::string& path = args->positional()[0];
  std::ifstream f(path, std::ios::binary);
  if (!f) return Fail(NotFoundError("cannot read " + path));
  std::ostringstream text;
  text << f.rdbuf();
  if (text.str().size() > answer::kMaxImportFileBytes) {
    return Fail(InvalidArgumentError(path + ": larger than 256 MB"));
  }
  auto issues = answer::LintKnowledgeBaseCsv(text.str(), cfg->answer.company);
  if (!issues.ok()) return Fail(issues.status().WithContext(path));
  for (const auto& i : *issues) {
    std::cout << path << ":" << i.line << ": " << i.article_id << ": "
              << answer::LintKindName(i.kind) << ": " << i.message << "\n";
  }
  if (!issues->empty()) {
    std::cerr << path << ": " << issues->size() << " issue(s)\n";
    return 1;
  }
  std::cout << path << ": no issues\n";
  return 0;
}

const CommandRegistrar kKbLint({"kb lint", "flag knowledge-base answers unfit to be spoken", kUsage,
                                RunKbLint});

}  // namespace
}  // namespace hotline::cli
