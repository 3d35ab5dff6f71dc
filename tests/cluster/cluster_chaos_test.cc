// Chaos tests of a Hotline fleet on real components: `scripts/cluster up` starts `hotline serve`
// nodes, one redis-server, a `hotline engine serve` model server and HAProxy in front, all on
// 127.0.0.1; synthetic Twilio callers (server/testing/call_load.h: flite's voice, real-time
// 8 kHz μ-law, replies timed as played) call through the balancer while a component is killed,
// restarted or drained. Each test prints its figures (calls affected, time to recover) as
// "FIGURE ..." lines and records them as test properties.
//
// The callers are asked which node holds which call through each node's admin API
// (/admin/calls, the cluster's token), so "the calls on the other node" is known, not guessed.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "server/testing/call_load.h"
#include "common/build_paths.h"
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

std::unique_ptr<Call> StartCall(int port, const std::string& sid, int first_question,
                                int questions) {
  auto call = std::make_unique<Call>();
  call->sid = sid;
  Call* c = call.get();
  c->thread = std::thread([c, port, first_question, questions] {
    CallScript script;
    script.port = port;
    script.call_sid = c->sid;
    script.questions = &Questions();
    script.first_question = first_question;
    script.questions_per_call = questions;
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

}  // namespace
}  // namespace hotline
