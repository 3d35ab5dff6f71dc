// `hotline serve` as an operator runs it: the binary starts on a free port, prints its URL,
// answers /healthz, /readyz, /metrics and a Twilio call's greeting, and stops cleanly on SIGTERM,
// leaving no scratch file behind (and removing those of a server that was killed).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "common/build_paths.h"
#include "net/http_client.h"
#include "server/testing/audiosocket_caller.h"
#include "server/testing/twilio_caller.h"

namespace hotline {
namespace {

// The names of the files in `dir`.
std::set<std::string> FilesIn(const std::filesystem::path& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.insert(e.path().filename().string());
  }
  return names;
}

TEST(ServeCli, ServesHealthMetricsAndACallThenStopsOnSigterm) {
  // The server's scratch folder (TMPDIR) holds what a killed server left (its process is gone),
  // a file of a process that runs (this test's), and one that is not a scratch file.
  char tmpl[] = "/tmp/hotline_serve_cli_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::filesystem::path scratch = tmpl;
  const pid_t gone = fork();
  ASSERT_GE(gone, 0);
  if (gone == 0) _exit(0);
  ASSERT_EQ(waitpid(gone, nullptr, 0), gone);
  const std::string dead = "hotline-serve-" + std::to_string(gone) + ".kb.sqlite";
  const std::string alive = "hotline-serve-" + std::to_string(getpid()) + ".kb.sqlite.lm";
  for (const std::string& name :
       {dead, dead + ".lm", dead + ".lm.dict", alive, std::string("hotline-serve-notes.txt")}) {
    std::ofstream(scratch / name) << "x";
  }

  int err_pipe[2];
  ASSERT_EQ(pipe(err_pipe), 0);
  const std::string binary = std::string(HOTLINE_BINARY_DIR) + "/hotline";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(err_pipe[1], STDERR_FILENO);
    close(err_pipe[0]);
    setenv("TMPDIR", tmpl, 1);
    execl(binary.c_str(), binary.c_str(), "serve", "--port", "0", "--set", "log_level=warn",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(err_pipe[1]);
  // Wait for "answering calls at ws://127.0.0.1:PORT/twilio".
  std::string err;
  std::smatch m;
  const std::regex url_re("ws://127\\.0\\.0\\.1:([0-9]+)/twilio");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!std::regex_search(err, m, url_re) && std::chrono::steady_clock::now() < deadline) {
    pollfd p{err_pipe[0], POLLIN, 0};
    if (poll(&p, 1, 1000) <= 0) continue;
    char buf[4096];
    ssize_t n = read(err_pipe[0], buf, sizeof buf);
    if (n <= 0) break;
    err.append(buf, static_cast<size_t>(n));
  }
  ASSERT_TRUE(std::regex_search(err, m, url_re)) << err;
  const int port = std::stoi(m[1].str());
  const std::string base = "http://127.0.0.1:" + std::to_string(port);

  net::HttpClient http;
  auto health = http.Send(net::HttpRequest::Get(base + "/healthz"));
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(health->status, 200);
  auto ready = http.Send(net::HttpRequest::Get(base + "/readyz"));
  ASSERT_TRUE(ready.ok()) << ready.status();
  EXPECT_EQ(ready->status, 200);

  {  // A call is answered with the greeting.
    server::testing::TwilioCaller caller;
    ASSERT_TRUE(caller.Connect(port, "/twilio")) << caller.error();
    ASSERT_TRUE(caller.Start("CA1", {{"caller", "+15550100"}}));
    EXPECT_TRUE(caller.WaitForAudio(server::testing::TwilioCaller::Clock::now(), 20000).has_value());
    caller.SendStop();
    EXPECT_TRUE(caller.WaitClosed(5000));
  }
  auto metrics = http.Send(net::HttpRequest::Get(base + "/metrics"));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_NE(metrics->body.find("\nhotline_twilio_calls_total 1"), std::string::npos);

  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  close(err_pipe[0]);
  // The dead server's files are gone, and so are this one's; the others are kept.
  EXPECT_EQ(FilesIn(scratch), (std::set<std::string>{alive, "hotline-serve-notes.txt"}));
  std::filesystem::remove_all(scratch);
}

// AudioSocket and the admin API as an operator runs them: the token comes from the environment,
// an Asterisk call is answered, listed and ended through the admin API.
TEST(ServeCli, AnswersAudioSocketCallsAndTheAdminApiWantsItsToken) {
  const std::string token = "serve-cli-admin-token-0123456789";
  int err_pipe[2];
  ASSERT_EQ(pipe(err_pipe), 0);
  const std::string binary = std::string(HOTLINE_BINARY_DIR) + "/hotline";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(err_pipe[1], STDERR_FILENO);
    close(err_pipe[0]);
    setenv("HOTLINE_ADMIN_TOKEN", token.c_str(), 1);
    execl(binary.c_str(), binary.c_str(), "serve", "--port", "0", "--audiosocket-port", "0",
          "--set", "log_level=warn", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(err_pipe[1]);
  std::string err;
  std::smatch m;
  const std::regex url_re(
      "ws://127\\.0\\.0\\.1:([0-9]+)/twilio and AudioSocket tcp://127\\.0\\.0\\.1:([0-9]+)");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!std::regex_search(err, m, url_re) && std::chrono::steady_clock::now() < deadline) {
    pollfd p{err_pipe[0], POLLIN, 0};
    if (poll(&p, 1, 1000) <= 0) continue;
    char buf[4096];
    ssize_t n = read(err_pipe[0], buf, sizeof buf);
    if (n <= 0) break;
    err.append(buf, static_cast<size_t>(n));
  }
  ASSERT_TRUE(std::regex_search(err, m, url_re)) << err;
  const std::string base = "http://127.0.0.1:" + m[1].str();
  const int as_port = std::stoi(m[2].str());
  net::HttpClient http;
  auto with_token = [&](net::HttpRequest r) {
    r.headers.push_back({"Authorization", "Bearer " + token});
    return r;
  };

  auto refused = http.Send(net::HttpRequest::Get(base + "/admin/calls"));
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->status, 401);

  server::testing::AudioSocketCaller caller;
  ASSERT_TRUE(caller.Connect(as_port)) << caller.error();
  ASSERT_TRUE(caller.SendUuid("7a7a7a7a-0000-4000-8000-000000000001"));
  ASSERT_TRUE(
      caller.WaitForAudio(server::testing::AudioSocketCaller::Clock::now(), 20000).has_value());

  auto calls = http.Send(with_token(net::HttpRequest::Get(base + "/admin/calls")));
  ASSERT_TRUE(calls.ok()) << calls.status();
  EXPECT_EQ(calls->status, 200);
  EXPECT_NE(calls->body.find("\"7a7a7a7a-0000-4000-8000-000000000001\""), std::string::npos)
      << calls->body;
  EXPECT_NE(calls->body.find("\"audiosocket\""), std::string::npos) << calls->body;

  auto reload = http.Send(
      with_token(net::HttpRequest::Post(base + "/admin/kb/reload", "", "application/json")));
  ASSERT_TRUE(reload.ok()) << reload.status();
  EXPECT_EQ(reload->status, 200) << reload->body;
  EXPECT_NE(reload->body.find("\"records\""), std::string::npos) << reload->body;
  auto flush = http.Send(
      with_token(net::HttpRequest::Post(base + "/admin/caches/flush", "", "application/json")));
  ASSERT_TRUE(flush.ok()) << flush.status();
  EXPECT_EQ(flush->status, 200) << flush->body;
  auto config = http.Send(with_token(net::HttpRequest::Get(base + "/admin/config")));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->status, 200);
  EXPECT_EQ(config->body.find(token), std::string::npos);
  EXPECT_NE(config->body.find("token: <redacted>"), std::string::npos) << config->body;

  auto end = http.Send(with_token(net::HttpRequest::Post(
      base + "/admin/calls/end", R"({"id":"7a7a7a7a-0000-4000-8000-000000000001"})",
      "application/json")));
  ASSERT_TRUE(end.ok()) << end.status();
  EXPECT_EQ(end->status, 200) << end->body;
  EXPECT_TRUE(caller.WaitClosed(5000));
  EXPECT_TRUE(caller.hangup_received());

  auto metrics = http.Send(net::HttpRequest::Get(base + "/metrics"));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_NE(metrics->body.find("\nhotline_audiosocket_calls_total 1"), std::string::npos);

  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  close(err_pipe[0]);
}

// `hotline doctor` against a live server with a trouble induced: the endpointer waits 1.6 s of
// silence before ending a turn, so voice-to-voice latency has a long tail, and the doctor must
// name it, its stage and the setting. Before any turn it finds nothing.
TEST(ServeCli, DoctorNamesAnInducedLongTail) {
  int err_pipe[2];
  ASSERT_EQ(pipe(err_pipe), 0);
  const std::string binary = std::string(HOTLINE_BINARY_DIR) + "/hotline";
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(err_pipe[1], STDERR_FILENO);
    close(err_pipe[0]);
    execl(binary.c_str(), binary.c_str(), "serve", "--port", "0", "--audiosocket-port", "0",
          "--set", "log_level=warn", "--set", "speech_in.endpointer.trailing_silence_ms=1600",
          "--set", "speech_in.endpointer.complete_silence_ms=1600", "--set",
          "call.reprompt_after_ms=60000", "--set", "call.fallback_retries=10",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  close(err_pipe[1]);
  std::string err;
  std::smatch m;
  const std::regex url_re(
      "ws://127\\.0\\.0\\.1:([0-9]+)/twilio and AudioSocket tcp://127\\.0\\.0\\.1:([0-9]+)");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!std::regex_search(err, m, url_re) && std::chrono::steady_clock::now() < deadline) {
    pollfd p{err_pipe[0], POLLIN, 0};
    if (poll(&p, 1, 1000) <= 0) continue;
    char buf[4096];
    ssize_t n = read(err_pipe[0], buf, sizeof buf);
    if (n <= 0) break;
    err.append(buf, static_cast<size_t>(n));
  }
  ASSERT_TRUE(std::regex_search(err, m, url_re)) << err;
  const std::string base = "http://127.0.0.1:" + m[1].str();
  const int as_port = std::stoi(m[2].str());
  auto doctor = [&](int* rc) {
    const std::string cmd = binary + " doctor --url " + base + " --min-turns 2 2>&1";
    FILE* f = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n;
    while (f != nullptr && (n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
    const int status = f ? pclose(f) : -1;
    *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return out;
  };
  int rc = -1;
  std::string report = doctor(&rc);
  EXPECT_EQ(rc, 0) << report;
  EXPECT_NE(report.find("no trouble found"), std::string::npos) << report;

  {
    using server::testing::AudioSocketCaller;
    AudioSocketCaller caller;
    ASSERT_TRUE(caller.Connect(as_port)) << caller.error();
    ASSERT_TRUE(caller.SendUuid("7a7a7a7a-0000-4000-8000-000000000002"));
    ASSERT_TRUE(caller.WaitForAudio(AudioSocketCaller::Clock::now(), 20000).has_value());
    ASSERT_TRUE(caller.WaitForQuiet(700, 20000));
    // The caller's turns: the agent's greeting played back to it (any speech makes a turn; what
    // it says does not matter to the latency). It is no question, so each gets the rephrase
    // request; call.fallback_retries above keeps the call from being transferred after two.
    const std::vector<int16_t> speech = caller.ReceivedAudio();
    ASSERT_GT(speech.size(), 8000u);
    for (int turn = 0; turn < 3; ++turn) {
      auto end = caller.SendAudio(speech);
      EXPECT_TRUE(caller.WaitForAudio(end, 20000).has_value()) << "turn " << turn;
      caller.WaitForQuiet(700, 30000);
    }
    caller.SendHangup();
    caller.WaitClosed(5000);
  }
  report = doctor(&rc);
  EXPECT_EQ(rc, 3) << report;
  EXPECT_NE(report.find("long_tail_latency"), std::string::npos) << report;
  EXPECT_NE(report.find("end-of-turn detection"), std::string::npos) << report;
  EXPECT_NE(report.find("speech_in.endpointer.trailing_silence_ms"), std::string::npos) << report;
  std::printf("%s", report.c_str());

  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status)) << status;
  close(err_pipe[0]);
}

}  // namespace
}  // namespace hotline
