#include <iostream>

#include "app/cli.h"

namespace hotline::cli {
namespace {

int RunVersion(std::span<const std::string> args) {
  if (!args.empty()) return UsageError("version takes no arguments", "usage: hotline version\n");
  std::cout << "hotline " << HOTLINE_VERSION << "\n";
  return 0;
}

const CommandRegistrar kVersion({"version", "print the version", "usage: hotline version\n",
                                 RunVersion});

}  // namespace
}  // namespace hotline::cli
