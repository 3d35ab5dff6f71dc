// Chaos tests of a Hotline fleet on real components: `scripts/cluster up` starts `hotline serve`
// nodes, one redis-server, a `hotline engine serve` model server and HAProxy in front, all on
// 127.0.0.1; synthetic Twilio callers (server/testing/call_load.h: flite's voice, real-time
// 8 kHz μ-law, replies timed as played) call through the balancer while a component is killed,
// restarted or drained. Each test prints its figures (calls affected, time to recover) as
// "FIGURE ..." lines and records them as test properties.
//
// The callers are asked which node holds which call through each node's admin API
// (/admin/calls, the cluster's token), so "the calls on the other node" is known, not guessed.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/build_paths.h"
#include "server/testing/call_load.h"
#include "tts/synthesizer.h"

namespace hotline {
namespace {

using server::testing::CallerQuestion;
using server::testing::CallOutcome;
using server::testing::CallScript;
using Clock = std::chrono::steady_clock;

const std::string kSourceDir = HOTLINE_SOURCE_DIR;
const std::string kBinary = std::string(HOTLINE_BINARY_DIR) + "/hotline";

struct ShellResult {
  int rc = -1;
  std::string out;  // stdout and stderr together
};

ShellResult Shell(const std::string& command) {
  ShellResult r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void Figure(const std::string& key, double value) {
  std::printf("FIGURE %s %.3f\n", key.c_str(), value);
  std::fflush(stdout);
  ::testing::Test::RecordProperty(key, std::to_string(value));
}

// The questions, synthesized once for every test of this program.
const std::vector<CallerQuestion>& Questions() {
  static const std::vector<CallerQuestion>* questions = [] {
    auto* out = new std::vector<CallerQuestion>();
    tts::TtsConfig config;
    auto synth = tts::CreateSynthesizer(config);
    if (!synth.ok()) return out;
    for (const char* text : {"how can i cancel my order", "what payment methods do you accept",
                             "i forgot my password"}) {
      auto q = server::testing::SynthesizeCallerQuestion(**synth, text);
      if (q.ok()) out->push_back(std::move(*q));
    }
    return out;
  }();
  return *questions;
}

// One `scripts/cluster` in a state folder of its own; `down` on destruction.
class Cluster {
 public:
  Cluster() {
    char dir[] = "/tmp/hotline-cluster-XXXXXX";
    if (mkdtemp(dir) != nullptr) state_ = dir;
  }
  ~Cluster() {
    if (state_.empty()) return;
    Run("down");
    std::error_code ec;
    std::filesystem::remove_all(state_, ec);
  }

  ShellResult Run(const std::string& args) {
    return Shell("HOTLINE_CLUSTER_DIR=" + state_ + " HOTLINE_BIN=" + kBinary + " " + kSourceDir +
                 "/scripts/cluster " + args);
  }

  // `up ARGS`; false (with the output in log()) when it failed.
  bool Up(const std::string& args) {
    ShellResult r = Run("up " + args);
    log_ = r.out;
    if (r.rc != 0) return false;
    std::ifstream env(state_ + "/cluster.env");
    std::string token;
    while (env >> token) {
      const size_t eq = token.find('=');
      if (eq != std::string::npos) env_[token.substr(0, eq)] = token.substr(eq + 1);
    }
    return Port("BALANCER_PORT") > 0;
  }

  int Port(const std::string& name) const {
    auto it = env_.find(name);
    return it == env_.end() ? 0 : std::atoi(it->second.c_str());
  }
  int NodePort(int i) const { return Port("NODE" + std::to_string(i) + "_PORT"); }
  const std::string& log() const { return log_; }
  std::string Log(const std::string& name) const {
    std::ifstream in(state_ + "/" + name + ".log");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // The call ids node i holds now (its admin API); nullopt-like empty set with ok=false when the
  // node does not answer.
  std::set<std::string> CallsOn(int i, bool* ok = nullptr) const {
    std::set<std::string> ids;
    ShellResult r =
        Shell("curl -sf --max-time 2 -H 'Authorization: Bearer " + env_.at("ADMIN_TOKEN") +
              "' http://127.0.0.1:" + std::to_string(NodePort(i)) + "/admin/calls");
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    const bool good = r.rc == 0 && j.is_object() && j["calls"].is_array();
    if (ok != nullptr) *ok = good;
    if (!good) return ids;
    for (const auto& c : j["calls"]) ids.insert(c["id"].get<std::string>());
    return ids;
  }

  // A counter or gauge of node i's /metrics, summed over the series matching `selector` (a
  // substring of the series line, e.g. `tier="l3"`); -1 when the node does not answer.
  double Metric(int i, const std::string& name, const std::string& selector = "") const {
    ShellResult r =
        Shell("curl -sf --max-time 2 http://127.0.0.1:" + std::to_string(NodePort(i)) + "/metrics");
    if (r.rc != 0) return -1;
    double sum = 0;
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind(name, 0) != 0) continue;
      const char next = line.size() > name.size() ? line[name.size()] : 0;
      if (next != ' ' && next != '{') continue;
      if (!selector.empty() && line.find(selector) == std::string::npos) continue;
      sum += std::atof(line.substr(line.rfind(' ') + 1).c_str());
    }
    return sum;
  }

  // The balancer's view of a server: "UP", "DOWN", ... (HAProxy's statistics).
  std::string BalancerState(const std::string& backend, const std::string& server) const {
    ShellResult r =
        Shell("curl -s --max-time 2 'http://127.0.0.1:" + std::to_string(Port("STATS_PORT")) +
              "/;csv' | awk -F, '$1 == \"" + backend + "\" && $2 == \"" + server +
              "\" { split($18, a, \" \"); print a[1] }'");
    std::string s = r.out;
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
  }

  // POST to node i's admin API; the response body, empty when the request failed.
  std::string AdminPost(int i, const std::string& path) const {
    ShellResult r =
        Shell("curl -sf --max-time 10 -X POST -H 'Authorization: Bearer " + env_.at("ADMIN_TOKEN") +
              "' http://127.0.0.1:" + std::to_string(NodePort(i)) + path);
    return r.rc == 0 ? r.out : std::string();
  }

  // The integer at `key` in the cluster's Redis (0 when absent), -1 when Redis does not answer.
  long long RedisInteger(const std::string& key) const {
    ShellResult r =
        Shell("redis-cli -p " + std::to_string(Port("REDIS_PORT")) + " get '" + key + "'");
    if (r.rc != 0) return -1;
    return std::atoll(r.out.c_str());
  }

  // Connections Redis has from clients other than redis-cli itself.
  int RedisClients() const {
    ShellResult r = Shell("redis-cli -p " + std::to_string(Port("REDIS_PORT")) + " client list");
    if (r.rc != 0) return -1;
    int n = 0;
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.find("id=") == 0 && line.find("cmd=client") == std::string::npos) ++n;
    }
    return n;
  }

 private:
  std::string state_;
  std::string log_;
  std::map<std::string, std::string> env_;
};

// A call through the balancer on a thread of its own.
struct Call {
  std::string sid;
  CallOutcome outcome;
  Clock::time_point ended;
  std::thread thread;
  bool affected() const { return !outcome.failure.empty() || outcome.missing_replies > 0; }
  // A test that fails early still waits for its callers (each bounded by its script's timeouts).
  ~Call() {
    if (thread.joinable()) thread.join();
  }
};

// `rounds`: the question list asked that many times (CallScript::rounds).
std::unique_ptr<Call> StartCall(int port, const std::string& sid, int first_question,
                                int questions, int rounds = 1) {
  auto call = std::make_unique<Call>();
  call->sid = sid;
  Call* c = call.get();
  c->thread = std::thread([c, port, first_question, questions, rounds] {
    CallScript script;
    script.port = port;
    script.call_sid = c->sid;
    script.questions = &Questions();
    script.first_question = first_question;
    script.questions_per_call = questions;
    script.rounds = rounds;
    script.greeting_timeout_ms = 30000;
    script.reply_timeout_ms = 30000;
    c->outcome = server::testing::RunScriptedCall(script);
    c->ended = Clock::now();
  });
  return call;
}

void Join(std::vector<std::unique_ptr<Call>>& calls) {
  for (auto& c : calls) {
    if (c->thread.joinable()) c->thread.join();
  }
}

std::string Describe(const Call& c) {
  return c.sid + ": " + (c.outcome.failure.empty() ? "ok" : c.outcome.failure) + ", " +
         std::to_string(c.outcome.turns.size()) + " turns, " +
         std::to_string(c.outcome.missing_replies) + " missing replies";
}

// Waits until every call in `calls` is on one of the nodes 1..n; fills `where` (sid -> node).
bool WaitPlaced(const Cluster& cluster, int nodes, const std::vector<std::unique_ptr<Call>>& calls,
                std::map<std::string, int>* where, double timeout_s = 30) {
  const auto start = Clock::now();
  while (SecondsSince(start) < timeout_s) {
    where->clear();
    for (int i = 1; i <= nodes; ++i) {
      for (const std::string& id : cluster.CallsOn(i)) (*where)[id] = i;
    }
    bool all = true;
    for (const auto& c : calls) all = all && where->count(c->sid) > 0;
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

// A TCP proxy between the nodes and the model pool that makes the pool sick on demand: it holds
// every response back for delay_ms (a slow model server), or cuts a response off before its Nth
// server-sent event and closes the connection (a model server dying mid-stream). It counts the
// requests it holds: a node that gives up on a request closes its connection, which frees it.
class ModelProxy {
 public:
  ModelProxy() {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(listen_fd_, 64) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      return;
    }
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~ModelProxy() {
    stop_ = true;
    if (acceptor_.joinable()) acceptor_.join();
    std::lock_guard lock(mu_);
    for (auto& t : relays_) t.join();
    if (listen_fd_ >= 0) ::close(listen_fd_);
  }

  int port() const { return port_; }
  void SetUpstream(int port) { upstream_ = port; }
  void SetDelayMs(int ms) { delay_ms_ = ms; }
  // 0: never cut. N: the response is cut off just before its (N+1)th "data:" event.
  void SetCutAfterEvents(int n) { cut_after_events_ = n; }
  int requests() const { return requests_; }
  int in_flight() const { return in_flight_; }
  int max_in_flight() const { return max_in_flight_; }
  int cuts() const { return cuts_; }

 private:
  static bool SendAll(int fd, const char* data, size_t n) {
    while (n > 0) {
      const ssize_t w = ::send(fd, data, n, MSG_NOSIGNAL);
      if (w <= 0) return false;
      data += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }

  void AcceptLoop() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      std::lock_guard lock(mu_);
      relays_.emplace_back([this, fd] { Relay(fd); });
    }
  }

  void Relay(int client) {
    const int up = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(upstream_.load()));
    if (::connect(up, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(up);
      ::close(client);
      return;
    }
    bool awaiting = false;  // a request went upstream; none of its response reached the client
    bool holding = false;   // response bytes held back until `release`
    Clock::time_point release;
    std::string held;
    int events = 0;  // "data:" events of the current response passed on
    bool upstream_done = false;
    char buf[16384];
    while (!stop_) {
      pollfd p[2] = {{client, POLLIN, 0}, {up, upstream_done ? short{0} : short{POLLIN}, 0}};
      if (::poll(p, 2, 20) < 0) break;
      if (p[0].revents != 0) {
        const ssize_t n = ::read(client, buf, sizeof buf);
        if (n <= 0 || !SendAll(up, buf, static_cast<size_t>(n))) break;  // the node gave up
        if (!awaiting) {
          awaiting = true;
          events = 0;
          ++requests_;
          const int now_in_flight = ++in_flight_;
          int seen = max_in_flight_.load();
          while (now_in_flight > seen &&
                 !max_in_flight_.compare_exchange_weak(seen, now_in_flight)) {
          }
        }
      }
      if (p[1].revents != 0) {
        const ssize_t n = ::read(up, buf, sizeof buf);
        if (n <= 0) {
          upstream_done = true;
        } else {
          if (!holding) {
            holding = true;
            release = Clock::now() + std::chrono::milliseconds(delay_ms_.load());
          }
          held.append(buf, static_cast<size_t>(n));
        }
      }
      if (!held.empty() && Clock::now() >= release) {
        size_t pass = held.size();
        bool cut = false;
        if (const int limit = cut_after_events_.load(); limit > 0) {
          for (size_t at = held.find("data:"); at != std::string::npos;
               at = held.find("data:", at + 5)) {
            if (++events > limit) {
              pass = at;
              cut = true;
              break;
            }
          }
        }
        if (awaiting) {
          awaiting = false;
          --in_flight_;
        }
        const bool sent = SendAll(client, held.data(), pass);
        held.clear();
        holding = false;
        if (cut) ++cuts_;
        if (cut || !sent) break;
      }
      if (upstream_done && held.empty()) break;
    }
    if (awaiting) --in_flight_;
    ::close(up);
    ::close(client);
  }

  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> upstream_{0}, delay_ms_{0}, cut_after_events_{0};
  std::atomic<int> requests_{0}, in_flight_{0}, max_in_flight_{0}, cuts_{0};
  std::mutex mu_;
  std::vector<std::thread> relays_;
  std::thread acceptor_;
};

// The tiers before the model off: every turn the model answers (through the pool), or the
// fallback when it does not.
const char* const kModelOnly =
    " --set answer.use_intent_cache=false --set answer.use_semantic_cache=false"
    " --set answer.kb_direct_min_score=1000000000 --set "
    "answer.kb_direct_agreed_min_score=1000000000";

class ClusterChaos : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef HOTLINE_SANITIZE
    // Under the sanitizers every node runs several times slower on the same cores, and these
    // tests time real-time calls across five processes: they run in the normal build only.
    GTEST_SKIP() << "the cluster tests run in the normal build (real-time calls across processes)";
#endif
    ASSERT_EQ(Questions().size(), 3u) << "flite could not synthesize the callers' questions";
    for (const char* tool : {"haproxy", "redis-server", "curl"}) {
      ASSERT_EQ(Shell(std::string("command -v ") + tool).rc, 0)
          << tool << " is missing: run scripts/setup";
    }
  }
};

// A node killed (SIGKILL) with calls on it: the calls on the other node go on untouched, the
// killed node's calls end, and new calls land on the survivor from the moment of the kill.
TEST_F(ClusterChaos, NodeKilledWithCallsOnIt) {
  Cluster cluster;
  ASSERT_TRUE(cluster.Up("--nodes 2 --models 1")) << cluster.log();
  const int lb = cluster.Port("BALANCER_PORT");

  std::vector<std::unique_ptr<Call>> calls;
  for (int i = 0; i < 4; ++i) calls.push_back(StartCall(lb, "CAkill" + std::to_string(i), i, 2));
  std::map<std::string, int> where;
  ASSERT_TRUE(WaitPlaced(cluster, 2, calls, &where)) << "the calls never all reached a node";
  int on_node1 = 0;
  for (const auto& [sid, node] : where) on_node1 += node == 1;
  ASSERT_GE(on_node1, 1) << "least-connections put no call on node1";
  ASSERT_LE(on_node1, 3) << "least-connections put every call on node1";

  const auto killed_at = Clock::now();
  ShellResult kill = cluster.Run("kill node1");
  ASSERT_EQ(kill.rc, 0) << kill.out;
  // New calls from the moment of the kill: the balancer has not noticed yet, so a call sent to
  // node1 is refused there and redispatched.
  std::vector<std::unique_ptr<Call>> after;
  for (int i = 0; i < 2; ++i) after.push_back(StartCall(lb, "CAafter" + std::to_string(i), i, 1));
  double marked_down_s = -1;
  while (SecondsSince(killed_at) < 10) {
    if (cluster.BalancerState("nodes", "node1") == "DOWN") {
      marked_down_s = SecondsSince(killed_at);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::map<std::string, int> after_where;
  const bool placed = WaitPlaced(cluster, 2, after, &after_where, 20);
  Join(calls);
  Join(after);

  int affected = 0, affected_elsewhere = 0;
  for (const auto& c : calls) {
    const int node = where[c->sid];
    if (node == 1) {
      affected += c->affected();
      EXPECT_TRUE(c->affected()) << "a call on the killed node went on: " << Describe(*c);
    } else {
      affected_elsewhere += c->affected();
      EXPECT_FALSE(c->affected()) << "a call on the surviving node was hurt: " << Describe(*c);
    }
  }
  EXPECT_TRUE(placed) << "a call placed after the kill never reached a node\n"
                      << cluster.Log("haproxy");
  for (const auto& c : after) {
    EXPECT_FALSE(c->affected()) << "a call placed after the kill failed: " << Describe(*c);
    EXPECT_EQ(after_where[c->sid], 2) << c->sid << " did not land on the survivor";
  }
  EXPECT_GE(marked_down_s, 0) << "the balancer never marked the killed node down";
  Figure("node_kill.calls", static_cast<double>(calls.size()));
  Figure("node_kill.calls_on_killed_node", on_node1);
  Figure("node_kill.calls_affected", affected + affected_elsewhere);
  Figure("node_kill.calls_affected_on_survivor", affected_elsewhere);
  Figure("node_kill.balancer_marked_down_s", marked_down_s);
  Figure("node_kill.new_calls_failed", [&] {
    int n = 0;
    for (const auto& c : after) n += c->affected();
    return n;
  }());
}

// Redis killed (SIGKILL) and restarted mid-call: every call goes on (each node answers from its
// local store), and the nodes reconnect to Redis by themselves.
TEST_F(ClusterChaos, RedisKilledAndRestartedMidCall) {
  Cluster cluster;
  ASSERT_TRUE(cluster.Up("--nodes 2 --models 1")) << cluster.log();
  const int lb = cluster.Port("BALANCER_PORT");
  std::vector<std::unique_ptr<Call>> calls;
  for (int i = 0; i < 4; ++i) calls.push_back(StartCall(lb, "CAredis" + std::to_string(i), i, 3));
  std::map<std::string, int> where;
  ASSERT_TRUE(WaitPlaced(cluster, 2, calls, &where));
  // The nodes connect to Redis at start-up (health probe) or their first answer-store look-up.
  const auto placed_at = Clock::now();
  while (cluster.RedisClients() <= 0 && SecondsSince(placed_at) < 20) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const int clients_before = cluster.RedisClients();
  ASSERT_GT(clients_before, 0) << "the nodes do not use Redis";

  ShellResult kill = cluster.Run("kill redis");
  ASSERT_EQ(kill.rc, 0) << kill.out;
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const auto restarted_at = Clock::now();
  ShellResult restart = cluster.Run("restart redis");
  ASSERT_EQ(restart.rc, 0) << restart.out;
  // Each node's health probe (store.redis.health_interval_ms, 1 s) reconnects by itself, even
  // when every turn is answered by a tier that needs no look-up; a new call meanwhile is served.
  std::vector<std::unique_ptr<Call>> after;
  after.push_back(StartCall(lb, "CAredisafter", 1, 1));
  double reconnected_s = -1;
  while (SecondsSince(restarted_at) < 20) {
    if (cluster.RedisClients() > 0) {
      reconnected_s = SecondsSince(restarted_at);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  Join(calls);
  Join(after);
  EXPECT_FALSE(after[0]->affected()) << Describe(*after[0]);

  int affected = 0, turns = 0;
  for (const auto& c : calls) {
    affected += c->affected();
    turns += static_cast<int>(c->outcome.turns.size());
    EXPECT_FALSE(c->affected()) << Describe(*c);
  }
  EXPECT_GE(reconnected_s, 0) << "no node reconnected to Redis within 20 s of its restart";
  Figure("redis_kill.calls", static_cast<double>(calls.size()));
  Figure("redis_kill.redis_clients_before", clients_before);
  Figure("redis_kill.turns", turns);
  Figure("redis_kill.calls_affected", affected);
  Figure("redis_kill.nodes_reconnected_s", reconnected_s);
}

// A node stopped with SIGTERM drains: it is taken out of the balancer, its call in progress
// ends normally, it stops only then, and a new call meanwhile lands on the other node.
TEST_F(ClusterChaos, DrainingNodeFinishesItsCallsBeforeItStops) {
  Cluster cluster;
  ASSERT_TRUE(cluster.Up("--nodes 2 --models 1")) << cluster.log();
  const int lb = cluster.Port("BALANCER_PORT");
  std::vector<std::unique_ptr<Call>> calls;
  for (int i = 0; i < 2; ++i) calls.push_back(StartCall(lb, "CAdrain" + std::to_string(i), i, 2));
  std::map<std::string, int> where;
  ASSERT_TRUE(WaitPlaced(cluster, 2, calls, &where));
  std::string on_node1;
  for (const auto& [sid, node] : where) {
    if (node == 1) on_node1 = sid;
  }
  ASSERT_FALSE(on_node1.empty()) << "least-connections put both calls on node2";

  const auto stop_at = Clock::now();
  Clock::time_point stopped;
  std::thread stopper([&] {
    ShellResult r = cluster.Run("stop node1");
    stopped = Clock::now();
    EXPECT_EQ(r.rc, 0) << r.out;
  });
  double out_of_balancer_s = -1;
  while (SecondsSince(stop_at) < 10) {
    const std::string state = cluster.BalancerState("nodes", "node1");
    if (state == "DOWN" || state == "NOLB") {
      out_of_balancer_s = SecondsSince(stop_at);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::vector<std::unique_ptr<Call>> during;
  during.push_back(StartCall(lb, "CAduring", 2, 1));
  std::map<std::string, int> during_where;
  const bool placed = WaitPlaced(cluster, 2, during, &during_where, 20);
  Join(calls);
  Join(during);
  stopper.join();

  for (const auto& c : calls) EXPECT_FALSE(c->affected()) << Describe(*c);
  const Call& drained = *std::find_if(calls.begin(), calls.end(), [&](const auto& c) {
                           return c->sid == on_node1;
                         })->get();
  EXPECT_GE(stopped, drained.ended) << "node1 stopped before its call ended";
  EXPECT_TRUE(placed);
  EXPECT_EQ(during_where["CAduring"], 2) << "a call reached the draining node";
  EXPECT_FALSE(during[0]->affected()) << Describe(*during[0]);
  EXPECT_GE(out_of_balancer_s, 0) << "the balancer kept the draining node";
  EXPECT_NE(cluster.Log("node1").find("draining"), std::string::npos) << cluster.Log("node1");
  Figure("drain.calls_affected", [&] {
    int n = 0;
    for (const auto& c : calls) n += c->affected();
    return n + during[0]->affected();
  }());
  Figure("drain.out_of_balancer_s", out_of_balancer_s);
  Figure("drain.stop_s", std::chrono::duration<double>(stopped - stop_at).count());

  // Back in the fleet.
  ShellResult restart = cluster.Run("restart node1");
  EXPECT_EQ(restart.rc, 0) << restart.out;
  EXPECT_EQ(cluster.BalancerState("nodes", "node1"), "UP");
}

// A cached answer on node A is served by node B from the shared tier (Redis). The tiers before
// the model are off on both nodes, so the first answer is the model's (through the model pool)
// and is stored in L3; node B, asked the same question, answers it from L3 without the model.
TEST_F(ClusterChaos, AnswerCachedOnOneNodeIsServedByAnotherFromRedis) {
  Cluster cluster;
  ASSERT_TRUE(
      cluster.Up("--nodes 2 --models 1 --set answer.use_intent_cache=false"
                 " --set answer.use_semantic_cache=false"
                 " --set answer.kb_direct_min_score=1000000000"
                 " --set answer.kb_direct_agreed_min_score=1000000000"))
      << cluster.log();
  std::vector<std::unique_ptr<Call>> first;
  // "how can i cancel my order": heard right (recognizer confidence ~0.96), so the LLM gate
  // lets the model answer it. "what payment methods do you accept" is heard as "... are you a new
  // accent status" (~0.41), which the gate rightly sends to the fallback.
  first.push_back(StartCall(cluster.NodePort(1), "CAshareA", 0, 1));
  Join(first);
  ASSERT_FALSE(first[0]->affected()) << Describe(*first[0]);
  const double llm_a = cluster.Metric(1, "hotline_pipeline_answers_total", "tier=\"llm\"");
  EXPECT_EQ(llm_a, 1) << "node A's answer did not come from the model";

  std::vector<std::unique_ptr<Call>> second;
  second.push_back(StartCall(cluster.NodePort(2), "CAshareB", 0, 1));
  Join(second);
  ASSERT_FALSE(second[0]->affected()) << Describe(*second[0]);
  const double l3_b = cluster.Metric(2, "hotline_pipeline_answers_total", "tier=\"l3\"");
  const double llm_b = cluster.Metric(2, "hotline_pipeline_answers_total", "tier=\"llm\"");
  EXPECT_EQ(l3_b, 1) << "node B did not answer from the shared L3 tier";
  EXPECT_EQ(llm_b, 0) << "node B asked the model again";
  Figure("shared_tier.node_a_llm_answers", llm_a);
  Figure("shared_tier.node_b_l3_answers", l3_b);
  Figure("shared_tier.node_b_latency_ms",
         second[0]->outcome.turns.empty() ? -1 : second[0]->outcome.turns[0].latency_ms);
  Figure("shared_tier.node_a_latency_ms",
         first[0]->outcome.turns.empty() ? -1 : first[0]->outcome.turns[0].latency_ms);
}

// A model server killed (SIGKILL) while calls ask questions only the model answers: every turn
// still gets a reply in time — the model's, through the other server, or the spoken fallback
// for a request the killed server had taken — no call is hurt, and once the pool's balancer has
// marked the server down the next call's turn is the model's answer again.
TEST_F(ClusterChaos, ModelServerKilledTheOtherAnswers) {
  Cluster cluster;
  ASSERT_TRUE(
      cluster.Up("--nodes 2 --models 2 --set answer.use_intent_cache=false"
                 " --set answer.use_semantic_cache=false"
                 " --set answer.kb_direct_min_score=1000000000"
                 " --set answer.kb_direct_agreed_min_score=1000000000"))
      << cluster.log();
  const int lb = cluster.Port("BALANCER_PORT");
  std::vector<std::unique_ptr<Call>> calls;
  for (int i = 0; i < 2; ++i) calls.push_back(StartCall(lb, "CAmodel" + std::to_string(i), i, 2));
  std::map<std::string, int> where;
  ASSERT_TRUE(WaitPlaced(cluster, 2, calls, &where));
  const auto killed_at = Clock::now();
  ShellResult kill = cluster.Run("kill model1");
  ASSERT_EQ(kill.rc, 0) << kill.out;
  double marked_down_s = -1;
  while (SecondsSince(killed_at) < 10) {
    if (cluster.BalancerState("models", "model1") == "DOWN") {
      marked_down_s = SecondsSince(killed_at);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  Join(calls);

  int affected = 0;
  for (const auto& c : calls) {
    affected += c->affected();
    EXPECT_FALSE(c->affected()) << Describe(*c);
  }
  auto answers = [&](const std::string& tier) {
    double n = 0;
    for (int i = 1; i <= 2; ++i) {
      n += cluster.Metric(i, "hotline_pipeline_answers_total", "tier=\"" + tier + "\"");
    }
    return n;
  };
  const double llm = answers("llm"), fallback = answers("fallback");
  EXPECT_EQ(llm + fallback, 4) << "every turn is the model's answer or the fallback";
  EXPECT_GE(marked_down_s, 0) << "the pool's balancer never marked the killed server down";

  std::vector<std::unique_ptr<Call>> next;
  next.push_back(StartCall(lb, "CAmodelnext", 0, 1));
  Join(next);
  EXPECT_FALSE(next[0]->affected()) << Describe(*next[0]);
  // Answered normally: by the model on the surviving server, or by a cache tier that learned the
  // same question's answer earlier (shared through Redis) — never the fallback.
  EXPECT_EQ(answers("fallback"), fallback) << "the next turn got the fallback";
  EXPECT_GE(answers("llm"), llm) << "the model's answers went backwards";
  Figure("model_kill.calls_affected", affected + next[0]->affected());
  Figure("model_kill.llm_answers", llm);
  Figure("model_kill.fallback_answers", fallback);
  Figure("model_kill.balancer_marked_down_s", marked_down_s);
}

// A model server that answers slowly (every response held back 8 s by a proxy): the nodes' first-
// token deadline (1.5 s here) fires and the caller hears an apology (call.error_text) instead of
// silence; after two such failures in a row the node's circuit breaker opens, so the next turns
// get their answer at once without loading the sick server — the second failure in a row hands
// the call to a human ("an answer tier failed"); the requests the server holds stay bounded
// (each abandoned one is closed, none retried); and once it is fast again, the breaker's trial
// finds it well and the turn is the model's answer.
TEST_F(ClusterChaos, ModelServerAnsweringSlowly) {
  ModelProxy proxy;
  ASSERT_GT(proxy.port(), 0);
  constexpr int kDeadlineMs = 1500, kDelayMs = 8000, kOpenMs = 12000;
  Cluster cluster;
  ASSERT_TRUE(
      cluster.Up(std::string("--nodes 1 --models 1") + kModelOnly +
                 " --set llm.openai.base_url=http://127.0.0.1:" + std::to_string(proxy.port()) +
                 " --set llm.openai.first_token_timeout_ms=" + std::to_string(kDeadlineMs) +
                 " --set llm.openai.breaker_failures=2" +
                 " --set llm.openai.breaker_open_ms=" + std::to_string(kOpenMs)))
      << cluster.log();
  proxy.SetUpstream(cluster.Port("MODELS_PORT"));
  proxy.SetDelayMs(kDelayMs);
  const int node = cluster.NodePort(1);
  // Two calls each ask "how can i cancel my order" twice; it is heard well enough for the LLM
  // gate to ask the model.
  std::vector<std::unique_ptr<Call>> calls;
  for (int i = 0; i < 2; ++i) calls.push_back(StartCall(node, "CAslow" + std::to_string(i), 0, 1, 2));
  Join(calls);
  double first_best = 1e9, first_worst = 0, second_worst = 0;
  Clock::time_point opened{};  // about when the second deadline fired
  for (const auto& c : calls) {
    // Both questions answered, then the hand-over to a human that two failures in a row ask for.
    EXPECT_EQ(c->outcome.missing_replies, 0) << Describe(*c);
    EXPECT_NE(c->outcome.failure.find("transfer: an answer tier failed"), std::string::npos)
        << Describe(*c);
    ASSERT_EQ(c->outcome.turns.size(), 2u) << Describe(*c);
    const auto& first = c->outcome.turns[0];
    first_best = std::min(first_best, first.latency_ms);
    first_worst = std::max(first_worst, first.latency_ms);
    second_worst = std::max(second_worst, c->outcome.turns[1].latency_ms);
    opened = std::max(
        opened, first.spoken_end + std::chrono::milliseconds(static_cast<int>(first.latency_ms)));
  }
  auto metric = [&](const std::string& name, const std::string& selector = "") {
    return cluster.Metric(1, name, selector);
  };
  // The caller waited for the deadline, not for the slow server.
  EXPECT_LT(first_worst, kDeadlineMs + 2500) << "a caller waited for the slow server";
  EXPECT_EQ(metric("hotline_pipeline_answers_total", "tier=\"llm\""), 0);
  EXPECT_EQ(metric("hotline_pipeline_answers_total", "tier=\"fallback\""), 4)
      << "every turn should have been the fallback";
  // The open circuit answered the second round at once: no deadline waited out, no request sent.
  EXPECT_EQ(metric("hotline_llm_breaker_open"), 1);
  EXPECT_EQ(metric("hotline_llm_breaker_rejected_total"), 2);
  EXPECT_LT(second_worst, first_best - 700) << "the second round still waited for the deadline";
  EXPECT_EQ(proxy.requests(), 2) << "requests reached the slow server while the circuit was open";
  // Each abandoned request was closed: nothing piles up behind a slow server.
  const auto settle = Clock::now();
  while (proxy.in_flight() > 0 && SecondsSince(settle) < 5) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(proxy.in_flight(), 0) << "the nodes left requests open on the slow server";
  EXPECT_LE(proxy.max_in_flight(), 2);
  const int slow_requests = proxy.requests();

  // The server recovers. A call's first model request comes 3 s or more after it is placed
  // (greeting, question): placed 2.5 s before the open time ends, its turn is the trial.
  proxy.SetDelayMs(0);
  std::this_thread::sleep_until(opened + std::chrono::milliseconds(kOpenMs - 2500));
  std::vector<std::unique_ptr<Call>> next;
  next.push_back(StartCall(node, "CAfast", 0, 1));
  Join(next);
  EXPECT_FALSE(next[0]->affected()) << Describe(*next[0]);
  EXPECT_EQ(metric("hotline_pipeline_answers_total", "tier=\"llm\""), 1)
      << "the turn after the recovery was not the model's";
  EXPECT_EQ(metric("hotline_llm_breaker_open"), 0) << "the trial did not close the circuit";
  Figure("slow_model.deadline_reply_ms_worst", first_worst);
  Figure("slow_model.open_circuit_reply_ms_worst", second_worst);
  Figure("slow_model.requests_to_slow_server", slow_requests);
  Figure("slow_model.max_requests_held", proxy.max_in_flight());
  Figure("slow_model.recovered_reply_ms",
         next[0]->outcome.turns.empty() ? -1 : next[0]->outcome.turns[0].latency_ms);
}

// A model server dying mid-stream (a proxy passes the first events of each response on, then
// closes the connection): the turn gets one reply (what was said of the answer stands, or the
// fallback when no sentence was complete) and is never retried — no caller hears a sentence
// twice — the cut answer is never cached, and the next turn, on a healthy server, is the model's.
TEST_F(ClusterChaos, ModelStreamCutMidAnswer) {
  ModelProxy proxy;
  ASSERT_GT(proxy.port(), 0);
  Cluster cluster;
  ASSERT_TRUE(
      cluster.Up(std::string("--nodes 1 --models 1") + kModelOnly +
                 " --set llm.openai.base_url=http://127.0.0.1:" + std::to_string(proxy.port())))
      << cluster.log();
  proxy.SetUpstream(cluster.Port("MODELS_PORT"));
  proxy.SetCutAfterEvents(3);
  const int node = cluster.NodePort(1);
  std::vector<std::unique_ptr<Call>> cut;
  cut.push_back(StartCall(node, "CAcut", 0, 1));
  Join(cut);
  EXPECT_FALSE(cut[0]->affected()) << Describe(*cut[0]);
  EXPECT_GE(proxy.cuts(), 1) << "no response was cut";
  auto tier = [&](const std::string& name) {
    return cluster.Metric(1, "hotline_pipeline_answers_total", "tier=\"" + name + "\"");
  };
  const double llm_cut = tier("llm"), fallback_cut = tier("fallback");
  EXPECT_EQ(llm_cut + fallback_cut, 1) << "the cut turn got no reply, or more than one";
  EXPECT_EQ(cluster.Metric(1, "hotline_llm_retries_total"), 0)
      << "a request was repeated after the server had streamed text";

  proxy.SetCutAfterEvents(0);
  std::vector<std::unique_ptr<Call>> next;
  next.push_back(StartCall(node, "CAwhole", 0, 1));
  Join(next);
  EXPECT_FALSE(next[0]->affected()) << Describe(*next[0]);
  EXPECT_EQ(tier("l3"), 0) << "the cut answer was cached and served again";
  EXPECT_EQ(tier("llm"), llm_cut + 1) << "the next turn was not the model's answer";
  Figure("stream_cut.cuts", proxy.cuts());
  Figure("stream_cut.cut_turn_llm", llm_cut);
  Figure("stream_cut.cut_turn_fallback", fallback_cut);
  Figure("stream_cut.cut_reply_ms",
         cut[0]->outcome.turns.empty() ? -1 : cut[0]->outcome.turns[0].latency_ms);
}

// The knowledge base reloaded on every node while Redis hangs (SIGSTOP: connections open, nothing
// answered): no node serves the answer built on the old article — not from its local copy during
// the outage, not from the shared tier after it — the invalidations made during the outage reach
// Redis once it answers, and the shared tier then works again.
TEST_F(ClusterChaos, KnowledgeBaseReloadedWhileRedisHangsServesNothingStale) {
  Cluster cluster;
  char dir[] = "/tmp/hotline-kb-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string kb = std::string(dir) + "/kb.csv";
  std::filesystem::copy_file(kSourceDir + "/assets/kb/bitext_kb.csv", kb);
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{dir};
  // The knowledge base answers (L1/L2 off): the answer to "how can i cancel my order" is one of
  // the cancel_order articles, shared through L3 with that article's stamp.
  ASSERT_TRUE(
      cluster.Up("--nodes 2 --models 1 --kb " + kb +
                 " --set answer.use_intent_cache=false --set answer.use_semantic_cache=false"
                 " --set store.redis.backoff_max_ms=500"))
      << cluster.log();
  auto tier = [&](int node, const std::string& name) {
    return cluster.Metric(node, "hotline_pipeline_answers_total", "tier=\"" + name + "\"");
  };
  auto ask = [&](int node, const std::string& sid) {
    std::vector<std::unique_ptr<Call>> one;
    one.push_back(StartCall(cluster.NodePort(node), sid, 0, 1));
    Join(one);
    EXPECT_FALSE(one[0]->affected()) << Describe(*one[0]);
  };
  ask(1, "CAkb1");
  ASSERT_EQ(tier(1, "kb"), 1) << "node1 did not answer from the knowledge base";
  // Redis now holds node1's answer (and node1 a local copy); node2 has not seen it.

  ASSERT_EQ(cluster.Run("pause redis").rc, 0);
  {
    std::ifstream in(kb);
    std::stringstream text;
    text << in.rdbuf();
    std::string csv = text.str();
    // Both cancel_order articles (either may be the best passage): the body gets a new first word.
    const std::string fields = "\"cancel_order\",\"";
    int edited = 0;
    for (size_t at = csv.find(fields); at != std::string::npos; at = csv.find(fields, at + 1)) {
      csv.insert(at + fields.size(), "Update: ");
      ++edited;
    }
    ASSERT_EQ(edited, 2);
    std::ofstream(kb, std::ios::trunc) << csv;
  }
  const auto reload_at = Clock::now();
  for (int node = 1; node <= 2; ++node) {
    auto report =
        nlohmann::json::parse(cluster.AdminPost(node, "/admin/kb/reload"), nullptr, false);
    ASSERT_TRUE(report.is_object()) << "node" << node << " could not reload while Redis hangs";
    EXPECT_EQ(report.value("changed", -1), 2) << report.dump();
  }
  const double reload_s = SecondsSince(reload_at);
  // During the outage node1 holds a local copy of the old answer: it must not serve it.
  ask(1, "CAkb3");
  EXPECT_EQ(tier(1, "l3"), 0) << "node1 served its local copy of the old answer";
  EXPECT_EQ(tier(1, "kb"), 2);

  ASSERT_EQ(cluster.Run("resume redis").rc, 0);
  const auto resumed_at = Clock::now();
  // Both nodes' bumps of each article's stamp reach Redis once it answers (a bump sent as Redis
  // hung may be applied too: at least 2 each).
  auto bumped = [&] {
    return std::min(cluster.RedisInteger("hotline:v:kb:cancel_order-1"),
                    cluster.RedisInteger("hotline:v:kb:cancel_order-2"));
  };
  while (bumped() < 2 && SecondsSince(resumed_at) < 10) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double replayed_s = SecondsSince(resumed_at);
  EXPECT_GE(bumped(), 2) << "an invalidation made during the outage was lost";
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // both probes reconnected
  // Redis still holds the old answer; node2 must not serve it.
  ask(2, "CAkb4");
  EXPECT_EQ(tier(2, "l3"), 0) << "node2 served the old answer from the shared tier";
  EXPECT_EQ(tier(2, "kb"), 1);
  // node2 shared the new answer: node1 serves it from the shared tier.
  ask(1, "CAkb5");
  EXPECT_EQ(tier(1, "l3"), 1) << "the shared tier did not come back";
  Figure("kb_reload_redis_hung.reload_s", reload_s);
  Figure("kb_reload_redis_hung.bumps_in_redis_s", replayed_s);
  Figure("kb_reload_redis_hung.stale_answers", tier(1, "l3") - 1 + tier(2, "l3"));
}

// A rolling restart of every node (`scripts/cluster roll`: one at a time drained with SIGTERM,
// restarted, back UP) while callers keep calling through the balancer: no call is lost, and each
// node comes back.
TEST_F(ClusterChaos, RollingRestartUnderLoadLosesNoCall) {
  Cluster cluster;
  ASSERT_TRUE(cluster.Up("--nodes 2 --models 1")) << cluster.log();
  const int lb = cluster.Port("BALANCER_PORT");
  std::atomic<bool> rolling{true};
  std::vector<std::unique_ptr<Call>> calls;
  std::mutex calls_mu;
  // A new one-question call every 1.5 s while the roll goes on: two or three in progress.
  std::thread callers([&] {
    for (int i = 0; rolling.load(); ++i) {
      {
        std::lock_guard lock(calls_mu);
        calls.push_back(StartCall(lb, "CAroll" + std::to_string(i), i % 3, 1));
      }
      for (int k = 0; k < 15 && rolling.load(); ++k) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  });
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const auto roll_at = Clock::now();
  ShellResult roll = cluster.Run("roll");
  const double roll_s = SecondsSince(roll_at);
  rolling = false;
  callers.join();
  EXPECT_EQ(roll.rc, 0) << roll.out;
  std::lock_guard lock(calls_mu);
  Join(calls);
  int affected = 0;
  for (const auto& c : calls) {
    affected += c->affected();
    EXPECT_FALSE(c->affected()) << Describe(*c);
  }
  EXPECT_GE(calls.size(), 6u) << "too few calls to call it load";
  EXPECT_EQ(cluster.BalancerState("nodes", "node1"), "UP");
  EXPECT_EQ(cluster.BalancerState("nodes", "node2"), "UP");
  for (int i = 1; i <= 2; ++i) {
    EXPECT_NE(cluster.Log("node" + std::to_string(i)).find("draining"), std::string::npos)
        << "node" << i << " was not drained";
  }
  Figure("rolling_restart.calls", static_cast<double>(calls.size()));
  Figure("rolling_restart.calls_affected", affected);
  Figure("rolling_restart.roll_s", roll_s);
}

}  // namespace
}  // namespace hotline
