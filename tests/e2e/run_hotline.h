// Runs the built `hotline` binary the way a user would, for the end-to-end tests of its commands.
//
//   CommandResult r = RunHotline("bench ablation --json --shape tiny");
//   ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
//   auto j = nlohmann::json::parse(r.out);
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/build_paths.h"

namespace hotline::e2e {

inline const std::string kHotlineBinary = std::string(HOTLINE_BINARY_DIR) + "/hotline";

struct CommandResult {
  int exit_code = -1;  // -1: could not run, or killed by a signal
  std::string out;     // stdout
  std::string err;     // stderr
  std::string all() const { return out + err; }
};

// `args`: shell words after the binary's name. stdout and stderr are kept apart (stderr through a
// temporary file), so a command's --json output parses whatever it logs.
inline CommandResult RunHotline(const std::string& args) {
  CommandResult r;
  char err_path[] = "/tmp/hotline_e2e_stderr_XXXXXX";
  const int fd = mkstemp(err_path);
  if (fd < 0) return r;
  close(fd);
  FILE* p = popen((kHotlineBinary + " " + args + " 2>" + err_path).c_str(), "r");
  if (p != nullptr) {
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (FILE* e = fopen(err_path, "r")) {
      while ((n = fread(buf, 1, sizeof buf, e)) > 0) r.err.append(buf, n);
      fclose(e);
    }
  }
  std::remove(err_path);
  return r;
}

}  // namespace hotline::e2e
