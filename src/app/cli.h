// The `hotline` command line: a registry of command groups and a small argument parser.
//
// Each command lives in its own cmd_<group>[_<name>].cc in this folder and registers itself with a
// static CommandRegistrar under a one- or two-word name ("version", "engine run", "audio convert");
// `hotline engine run ...` finds "engine run" first, then "engine". The executable compiles every
// cmd_*.cc the executable compiles every cmd_*.cc
// directly, so registration cannot be dropped by the linker.
//
// Contract for commands: return 0 on success; on failure print one line "hotline: <reason>" to
// stderr (use Fail()) and return non-zero. Never exit() from inside a command.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace hotline::cli {

// Parsed arguments of one command: positionals, `--flag`, `--key value` and `--key=value`.
// Options must be declared as known (by Get*/Has calls) before Finish() reports unknown ones.
class Args {
 public:
  // `argv` excludes the program and command names. Options that take a value are listed in
  // `value_options` (e.g. {"-o", "--rate"}); everything else starting with '-' is a flag.
  static Result<Args> Parse(std::span<const std::string> argv,
                            const std::vector<std::string>& value_options);

  const std::vector<std::string>& positional() const { return positional_; }

  bool Has(const std::string& name);  // a flag or option was given
  std::optional<std::string> Get(const std::string& name);
  std::string GetOr(const std::string& name, const std::string& fallback);
  Result<long long> GetInt(const std::string& name, long long fallback, long long lo, long long hi);
  Result<double> GetDouble(const std::string& name, double fallback, double lo, double hi);
  // All values of a repeatable option (e.g. --set a=1 --set b=2).
  std::vector<std::string> GetAll(const std::string& name);

  // Error naming any option that no Has/Get call asked about.
  Status Finish() const;

 private:
  std::vector<std::string> positional_;
  std::multimap<std::string, std::string> options_;  // flag -> "" (flags) or value
  std::map<std::string, bool> used_;
};

using CommandFn = std::function<int(std::span<const std::string> args)>;

struct Command {
  std::string name;     // "version" or "engine run"
  std::string summary;  // one line for `hotline help`
  std::string usage;    // full usage text for `hotline <name> --help`
  CommandFn run;
};

class CommandRegistry {
 public:
  static CommandRegistry& Get();
  void Add(Command c);
  const Command* Find(std::string_view name) const;
  const std::map<std::string, Command, std::less<>>& all() const { return commands_; }

 private:
  std::map<std::string, Command, std::less<>> commands_;
};

struct CommandRegistrar {
  explicit CommandRegistrar(Command c) { CommandRegistry::Get().Add(std::move(c)); }
};

// Prints "hotline: <status message>" to stderr and returns 1 (or 2 for usage errors).
int Fail(const Status& s);
int Fail(std::string_view message);
// Prints the usage text and returns 2.
int UsageError(std::string_view message, std::string_view usage);

}  // namespace hotline::cli
