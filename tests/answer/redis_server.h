// A real redis-server child process on a free loopback port, for integration tests.
//
// Start() picks a free port (bind to port 0, read it back), runs
// `redis-server --port N --bind 127.0.0.1 --save '' --appendonly no` and waits until it answers
// PING. Kill() sends SIGKILL (a crash, not a clean shutdown); Restart() starts it again on the
// same port; Pause() stops it with SIGSTOP (hung: the kernel still accepts connections, nothing
// answers) until Resume(). The destructor kills it. Not thread-safe; one per test.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace hotline::testing {

class RedisServer {
 public:
  RedisServer() = default;
  ~RedisServer();
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  Status Start();    // on a new free port
  // Extra redis-server arguments for the next Start/Restart ("--requirepass", "pw").
  void SetExtraArgs(std::vector<std::string> args) { extra_args_ = std::move(args); }
  Status Restart();  // on the same port
  void Kill();
  void Pause();   // SIGSTOP
  void Resume();  // SIGCONT
  int port() const { return port_; }
  bool running() const { return pid_ > 0; }

 private:
  Status Launch();
  int port_ = 0;
  pid_t pid_ = -1;
  std::vector<std::string> extra_args_;
};

}  // namespace hotline::testing
