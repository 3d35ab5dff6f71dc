// hotline: the voice agent server's single executable. Subcommands register themselves from
// cmd_*.cc files (see cli.h).
#include <iostream>
#include <string>
#include <vector>

#include "answer/understand/pii.h"
#include "app/cli.h"
#include "common/log.h"

namespace {

void PrintHelp() {
  std::cout << "hotline — a voice agent server for call centres\n\n"
               "usage: hotline <command> [args...]\n\ncommands:\n";
  for (const auto& [name, cmd] : hotline::cli::CommandRegistry::Get().all()) {
    std::cout << "  " << name;
    for (size_t i = name.size(); i < 24; ++i) std::cout << ' ';
    std::cout << cmd.summary << "\n";
  }
  std::cout << "\n`hotline <command> --help` shows a command's usage.\n";
}

}  // namespace

int main(int argc, char** argv) {
  // Logs go to stderr from the start, so a command's stdout (tables, --json) carries only its
  // output; commands may set their own level later.
  hotline::InitLogging("info");
  // Every command's log passes through the personal-data redactor (card numbers, PINs, phone
  // numbers never reach a log line).
  hotline::SetLogRedactor(hotline::answer::MakePiiLogRedactor());
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    PrintHelp();
    return args.empty() ? 2 : 0;
  }
  // Two-word commands ("engine run") are registered under their full name.
  const auto& registry = hotline::cli::CommandRegistry::Get();
  size_t used = 1;
  const hotline::cli::Command* cmd = nullptr;
  if (args.size() >= 2) cmd = registry.Find(args[0] + " " + args[1]);
  if (cmd != nullptr) {
    used = 2;
  } else {
    cmd = registry.Find(args[0]);
  }
  if (cmd == nullptr) {
    std::cerr << "hotline: unknown command '" << args[0] << (args.size() >= 2 ? " " + args[1] : "")
              << "' (try `hotline help`)\n";
    return 2;
  }
  std::vector<std::string> rest(args.begin() + used, args.end());
  if (!rest.empty() && (rest[0] == "--help" || rest[0] == "-h")) {
    std::cout << cmd->usage;
    return 0;
  }
  try {
    return cmd->run(rest);
  } catch (const std::exception& e) {
    std::cerr << "hotline: internal error: " << e.what() << "\n";
    return 1;
  }
}
