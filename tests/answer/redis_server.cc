#include "redis_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace hotline::testing {

namespace {

Result<int> FreeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return UnavailableError("socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    return UnavailableError("could not bind a loopback port");
  }
  const int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

bool Pings(int port) {
  timeval tv{0, 200'000};
  redisContext* c = redisConnectWithTimeout("127.0.0.1", port, tv);
  if (!c) return false;
  bool ok = false;
  if (c->err == 0) {
    auto* r = static_cast<redisReply*>(redisCommand(c, "PING"));
    // PONG, or (with --requirepass) NOAUTH: either way the server is up and answering.
    ok = r != nullptr &&
         (r->type == REDIS_REPLY_STATUS ||
          (r->type == REDIS_REPLY_ERROR && std::string(r->str, r->len).rfind("NOAUTH", 0) == 0));
    if (r) freeReplyObject(r);
  }
  redisFree(c);
  return ok;
}

}  // namespace

RedisServer::~RedisServer() { Kill(); }

Status RedisServer::Start() {
  ASSIGN_OR_RETURN(port_, FreeLoopbackPort());
  return Launch();
}

Status RedisServer::Restart() {
  Kill();
  return Launch();
}

Status RedisServer::Launch() {
  const std::string port = std::to_string(port_);
  std::vector<std::string> args{"redis-server", "--port",       port,  "--bind", "127.0.0.1",
                                "--save",       "",             "--appendonly", "no",
                                "--loglevel",   "warning"};
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  const int rc = posix_spawnp(&pid_, "redis-server", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    pid_ = -1;
    return UnavailableError("could not start redis-server (install the redis-server package)");
  }
  for (int i = 0; i < 200; ++i) {
    if (Pings(port_)) return Status::Ok();
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return UnavailableError("redis-server exited at start-up on port " + port);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Kill();
  return DeadlineExceededError("redis-server did not answer PING within 2 s on port " + port);
}

void RedisServer::Pause() {
  if (pid_ > 0) ::kill(pid_, SIGSTOP);
}

void RedisServer::Resume() {
  if (pid_ > 0) ::kill(pid_, SIGCONT);
}

void RedisServer::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

}  // namespace hotline::testing
