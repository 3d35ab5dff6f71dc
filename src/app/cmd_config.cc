// hotline config show|check|describe: the effective configuration, its validation, and the
// reference of every key.
#include <iostream>

#include "app/cli.h"
#include "app/hotline_config.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline config show [--changed] [--config FILE] [--set key.path=value ...]\n"
    "       hotline config check [--config FILE] [--set key.path=value ...]\n"
    "       hotline config describe [--markdown]\n"
    "  show      print the effective configuration (defaults, file, overrides) as YAML;\n"
    "            --changed: only the keys whose values differ from the built-in defaults\n"
    "  check     validate; exit 0 and print 'ok', or name the key and what to fix\n"
    "  describe  list every key with its type, default and meaning\n";

int RunConfig(std::span<const std::string> argv) {
  if (argv.empty()) return UsageError("config needs a subcommand", kUsage);
  std::string sub = argv[0];
  auto parsed = Args::Parse(argv.subspan(1), {"--config", "--set"});
  if (!parsed.ok()) return UsageError(parsed.status().message(), kUsage);
  Args& args = *parsed;
  if (sub == "describe") {
    bool markdown = args.Has("--markdown");
    if (Status s = args.Finish(); !s.ok()) return UsageError(s.message(), kUsage);
    if (markdown) std::cout << "| key | type | default | meaning |\n|---|---|---|---|\n";
    for (const std::string& line : DescribeConfig(HotlineConfig{})) {
      if (!markdown) {
        std::cout << line << "\n";
        continue;
      }
      std::string cells = "| `";
      int column = 0;
      for (char c : line) {
        if (c == '\t') {
          cells += (column == 0 || column == 2) ? "` | " : " | ";
          if (column == 1) cells += "`";
          ++column;
        } else if (c == '|') {
          cells += "\\|";
        } else {
          cells += c;
        }
      }
      std::cout << cells << " |\n";
    }
    return 0;
  }
  if (sub != "show" && sub != "check") return UsageError("unknown config subcommand " + sub, kUsage);
  std::string path = args.GetOr("--config", "");
  std::vector<std::string> overrides = args.GetAll("--set");
  const bool only_changed = args.Has("--changed");
  if (Status s = args.Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (!args.positional().empty()) return UsageError("unexpected " + args.positional()[0], kUsage);
  if (only_changed && sub != "show") return UsageError("--changed is an option of show", kUsage);
  auto cfg = LoadHotlineConfig(path, overrides);
  if (!cfg.ok()) return Fail(cfg.status());
  if (sub == "show") {
    std::cout << DumpConfigYaml(*cfg, {.only_changed = only_changed});
  } else {
    std::cout << "ok\n";
  }
  return 0;
}

const CommandRegistrar kConfig({"config", "show, check or describe the configuration", kUsage,
                                RunConfig});

}  // namespace
}  // namespace hotline::cli
