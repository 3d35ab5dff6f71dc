// `hotline bench calls` against a real `hotline serve` on loopback: two concurrent synthetic
// Twilio callers for ten seconds, the JSON report carries latency percentiles, per-tier answer
// counts and the server's CPU and memory, and no call failed. And the errors an operator meets
// first: nothing listening, a URL that is not ws://, a concurrency out of range.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include "run_hotline.h"

namespace hotline {
namespace {

const std::string& kBinary = e2e::kHotlineBinary;

// `hotline serve --port 0`; its port from the "answering calls at ws://..." line.
class Server {
 public:
  Server() {
    int err_pipe[2];
    if (pipe(err_pipe) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(err_pipe[1], STDERR_FILENO);
      close(err_pipe[0]);
      execl(kBinary.c_str(), kBinary.c_str(), "serve", "--port", "0", "--set", "log_level=warn",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(err_pipe[1]);
    err_fd_ = err_pipe[0];
    std::string err;
    std::smatch m;
    const std::regex url_re("ws://127\\.0\\.0\\.1:([0-9]+)/twilio");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!std::regex_search(err, m, url_re) && std::chrono::steady_clock::now() < deadline) {
      pollfd p{err_fd_, POLLIN, 0};
      if (poll(&p, 1, 1000) <= 0) continue;
      char buf[4096];
      ssize_t n = read(err_fd_, buf, sizeof buf);
      if (n <= 0) break;
      err.append(buf, static_cast<size_t>(n));
    }
    if (std::regex_search(err, m, url_re)) port_ = std::stoi(m[1].str());
    log_ = err;
  }
  ~Server() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    if (err_fd_ >= 0) close(err_fd_);
  }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  const std::string& log() const { return log_; }

 private:
  pid_t pid_ = -1;
  int err_fd_ = -1;
  int port_ = 0;
  std::string log_;
};

TEST(BenchCallsCli, TwoConcurrentCallsReportLatencyTiersAndServerFigures) {
  Server server;
  ASSERT_GT(server.port(), 0) << server.log();
  const std::string url = "ws://127.0.0.1:" + std::to_string(server.port()) + "/twilio";
  e2e::CommandResult r = e2e::RunHotline("bench calls --url " + url +
                               " --concurrency 2 --duration 10 --json --ramp 2 --sample-s 1 --warmup 3"
                               " --rss-slope-max 1000000 --server-pid " +
                               std::to_string(server.pid()));
  ASSERT_EQ(r.exit_code, 0) << r.all();
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.all();

  EXPECT_EQ(j["concurrency"], 2);
  EXPECT_EQ(j["calls"]["failed"], 0) << j["failures"].dump();
  EXPECT_EQ(j["calls"]["connect_failed"], 0);
  EXPECT_TRUE(j["failures"].empty());
  EXPECT_EQ(j["missing_replies"], 0);
  EXPECT_GE(j["calls"]["started"].get<int>(), 2);
  EXPECT_EQ(j["calls"]["peak_active"], 2);
  const int turns = j["turns"].get<int>();
  EXPECT_GE(turns, 2);  // each call asks at least its first question within 10 s

  const auto& lat = j["latency_ms"];
  ASSERT_TRUE(lat["p50"].is_number() && lat["p90"].is_number() && lat["p95"].is_number() &&
              lat["p99"].is_number())
      << lat.dump();
  const double p50 = lat["p50"], p90 = lat["p90"], p95 = lat["p95"], p99 = lat["p99"];
  EXPECT_GT(p50, 0);
  EXPECT_LE(p50, p90);
  EXPECT_LE(p90, p95);
  EXPECT_LE(p95, p99);
  // The figure after the warm-up counts a subset of the turns (none when no question ended
  // after it: its percentiles are then null).
  const auto& steady = j["latency_after_warmup_ms"];
  ASSERT_TRUE(steady.is_object()) << j.dump(2);
  EXPECT_LE(steady["turns"].get<int>(), turns);
  if (steady["turns"].get<int>() > 0) {
    EXPECT_TRUE(steady["p50"].is_number()) << steady.dump();
  }
  EXPECT_LT(p99, 10000);  // a reply within ten seconds of the question's end

  ASSERT_TRUE(j["answers_by_tier"].is_object()) << j.dump(2);
  double answers = 0;
  for (const auto& [tier, count] : j["answers_by_tier"].items()) answers += count.get<double>();
  EXPECT_GE(answers, turns) << j["answers_by_tier"].dump();
  // The server's side of the same turns: end of turn -> first audio, by tier.
  ASSERT_TRUE(j["after_endpoint_ms_by_tier"].is_object()) << j.dump(2);
  double timed = 0;
  for (const auto& [tier, h] : j["after_endpoint_ms_by_tier"].items()) {
    timed += h["turns"].get<double>();
    EXPECT_GE(h["p50"].get<double>(), 0) << tier;
    EXPECT_LE(h["p50"].get<double>(), h["p99"].get<double>()) << tier;
  }
  EXPECT_GE(timed, 1) << j["after_endpoint_ms_by_tier"].dump();

  ASSERT_TRUE(j["server"].is_object()) << j.dump(2);
  EXPECT_EQ(j["server"]["pid"], server.pid());
  EXPECT_GT(j["server"]["cpu_cores"].get<double>(), 0);
  EXPECT_GT(j["server"]["rss_mb_before"].get<double>(), 1);
  EXPECT_GE(j["server"]["rss_mb_peak"].get<double>(), j["server"]["rss_mb_before"].get<double>());
  EXPECT_EQ(j["server"]["source"], "proc");
  EXPECT_GE(j["wall_s"].get<double>(), 10);

  // The memory timeline of a soak, here in seconds: a sample a second, then the trend over the
  // samples from --warmup on, and the verdict against --rss-slope-max.
  const auto& mem = j["memory"];
  ASSERT_TRUE(mem.is_object()) << j.dump(2);
  EXPECT_EQ(mem["sample_s"], 1.0);
  EXPECT_EQ(mem["warmup_s"], 3.0);
  const auto& timeline = mem["timeline"];
  ASSERT_TRUE(timeline.is_array());
  EXPECT_GE(timeline.size(), 8u) << timeline.dump();
  // One a second over the whole run (turns in progress finish after --duration).
  EXPECT_LE(timeline.size(), j["wall_s"].get<double>() + 2) << timeline.dump();
  double last_t = -1;
  int max_active = 0;
  for (const auto& sample : timeline) {
    const double t = sample["t_s"], rss = sample["rss_mb"];
    EXPECT_GT(t, last_t);
    last_t = t;
    EXPECT_GT(rss, 1);
    EXPECT_LE(rss, j["server"]["rss_mb_peak"].get<double>());
    // With --server-pid the anonymous part comes from /proc too.
    ASSERT_TRUE(sample["rss_anon_mb"].is_number()) << sample.dump();
    EXPECT_GT(sample["rss_anon_mb"].get<double>(), 0);
    EXPECT_LE(sample["rss_anon_mb"].get<double>(), rss);
    max_active = std::max(max_active, sample["active_calls"].get<int>());
  }
  EXPECT_EQ(max_active, 2);
  const auto& trend = mem["trend"];
  ASSERT_TRUE(trend.is_object()) << mem.dump(2);
  EXPECT_EQ(mem["trend_of"], "rss_anon");
  EXPECT_EQ(mem["trend_rss_anon"], trend);
  ASSERT_TRUE(mem["trend_rss"].is_object());
  EXPECT_GE(trend["window_start_s"].get<double>(), 3);
  EXPECT_GE(trend["samples"].get<int>(), 4);
  EXPECT_NEAR(trend["growth_mb"].get<double>(),
              trend["last_quartile_mb"].get<double>() - trend["first_quartile_mb"].get<double>(),
              1e-9);
  ASSERT_TRUE(trend["slope_mb_per_min"].is_number());
  EXPECT_EQ(mem["flat"], true);  // the bound given is far above anything two calls do

  // Without --server-pid the server's own figures come from its /metrics (a remote server too).
  e2e::CommandResult remote =
      e2e::RunHotline("bench calls --url " + url + " --concurrency 1 --duration 4 --json --ramp 0");
  ASSERT_EQ(remote.exit_code, 0) << remote.all();
  auto m = nlohmann::json::parse(remote.out, nullptr, false);
  ASSERT_FALSE(m.is_discarded()) << remote.all();
  ASSERT_TRUE(m["server"].is_object()) << m.dump(2);
  EXPECT_EQ(m["server"]["source"], "metrics");
  EXPECT_GT(m["server"]["cpu_cores"].get<double>(), 0);
  EXPECT_GT(m["server"]["rss_mb_before"].get<double>(), 1);
  EXPECT_GE(m["server"]["rss_mb_peak"].get<double>(), m["server"]["rss_mb_before"].get<double>());
}

TEST(BenchCallsCli, ClearErrors) {
  // A port nothing listens on: bind one, then close it.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const int closed_port = ntohs(addr.sin_port);
  close(fd);

  e2e::CommandResult refused =
      e2e::RunHotline("bench calls --url ws://127.0.0.1:" + std::to_string(closed_port) +
                 "/twilio --concurrency 2 --duration 5");
  EXPECT_EQ(refused.exit_code, 1) << refused.all();
  EXPECT_NE(refused.all().find("cannot reach the server"), std::string::npos) << refused.all();

  e2e::CommandResult bad_url =
      e2e::RunHotline("bench calls --url http://127.0.0.1:1/twilio --concurrency 2 --duration 5");
  EXPECT_EQ(bad_url.exit_code, 2) << bad_url.all();
  EXPECT_NE(bad_url.all().find("expected ws://HOST:PORT/twilio"), std::string::npos);

  e2e::CommandResult bad_n =
      e2e::RunHotline("bench calls --url ws://127.0.0.1:1/twilio --concurrency 0 --duration 5");
  EXPECT_EQ(bad_n.exit_code, 2) << bad_n.all();
  EXPECT_NE(bad_n.all().find("--concurrency"), std::string::npos) << bad_n.all();

  e2e::CommandResult bad_ramp =
      e2e::RunHotline("bench calls --url ws://127.0.0.1:1/twilio --concurrency 2 --duration 5 --ramp 6");
  EXPECT_EQ(bad_ramp.exit_code, 2) << bad_ramp.all();
  EXPECT_NE(bad_ramp.all().find("--ramp"), std::string::npos) << bad_ramp.all();

  e2e::CommandResult bad_s =
      e2e::RunHotline("bench calls --url ws://127.0.0.1:1/twilio --concurrency 2 --duration 100000");
  EXPECT_EQ(bad_s.exit_code, 2) << bad_s.all();
  EXPECT_NE(bad_s.all().find("--duration"), std::string::npos) << bad_s.all();
}

}  // namespace
}  // namespace hotline
