// `hotline engine loadtest` against a real `hotline engine serve` of stories260K on loopback:
// four streaming clients, two requests each. The JSON report has every field, no request
// failed, and the first-token and inter-token percentiles are positive and ordered; afterwards
// the server's /metrics shows every KV block released. And the report of a run against nothing.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "net/http_client.h"
#include "common/build_paths.h"
#include "run_hotline.h"

namespace hotline {
namespace {

const std::string& kBinary = e2e::kHotlineBinary;
const std::string kStoriesDir = std::string(HOTLINE_SHARED_DATA_DIR) + "/llm/stories260k/";

// `hotline engine serve -m MODEL --port 0`; its URL from the "serving ... at http://..." line.
class EngineServer {
 public:
  explicit EngineServer(const std::string& model) {
    int err_pipe[2];
    if (pipe(err_pipe) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(err_pipe[1], STDERR_FILENO);
      close(err_pipe[0]);
      execl(kBinary.c_str(), kBinary.c_str(), "engine", "serve", "-m", model.c_str(), "--port",
            "0", "--threads", "1", "--set", "llm.engine.chat_template=llama2", "--set",
            "llm.engine.kv_type=f32", "--set", "log_level=warn", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(err_pipe[1]);
    err_fd_ = err_pipe[0];
    std::smatch m;
    const std::regex url_re(" at (http://127\\.0\\.0\\.1:[0-9]+)");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!std::regex_search(log_, m, url_re) && std::chrono::steady_clock::now() < deadline) {
      pollfd p{err_fd_, POLLIN, 0};
      if (poll(&p, 1, 1000) <= 0) continue;
      char buf[4096];
      const ssize_t n = read(err_fd_, buf, sizeof buf);
      if (n <= 0) break;
      log_.append(buf, static_cast<size_t>(n));
    }
    if (std::regex_search(log_, m, url_re)) url_ = m[1].str();
  }
  ~EngineServer() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
    }
    if (err_fd_ >= 0) close(err_fd_);
  }
  const std::string& url() const { return url_; }
  const std::string& log() const { return log_; }

 private:
  pid_t pid_ = -1;
  int err_fd_ = -1;
  std::string url_;
  std::string log_;
};

class EngineLoadtestCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    model_ = std::string(HOTLINE_BINARY_DIR) + "/engine_loadtest_cli_test_" +
             std::to_string(getpid()) + ".gguf";
    e2e::CommandResult c = e2e::RunHotline("engine convert-llama2c " + kStoriesDir + "stories260K.bin " +
                                 kStoriesDir + "tok512.bin -o " + model_);
    ASSERT_EQ(c.exit_code, 0) << c.out << c.err;
  }
  static void TearDownTestSuite() { std::remove(model_.c_str()); }
  static std::string model_;
};
std::string EngineLoadtestCli::model_;

// p50 <= p90 <= p99, all positive.
void ExpectOrderedPositive(const nlohmann::json& p, const char* what) {
  ASSERT_TRUE(p.is_object()) << what;
  for (const char* k : {"p50", "p90", "p99"}) {
    ASSERT_TRUE(p[k].is_number()) << what << " " << k << ": " << p.dump();
  }
  const double p50 = p["p50"], p90 = p["p90"], p99 = p["p99"];
  EXPECT_GT(p50, 0) << what;
  EXPECT_LE(p50, p90) << what;
  EXPECT_LE(p90, p99) << what;
  EXPECT_LT(p99, 60000) << what;
}

TEST_F(EngineLoadtestCli, FourStreamingClientsReportOrderedLatencyPercentiles) {
  EngineServer server(model_);
  ASSERT_FALSE(server.url().empty()) << server.log();
  e2e::CommandResult r =
      e2e::RunHotline("engine loadtest --url " + server.url() +
                 " --clients 4 --requests 2 --max-tokens 16 --system-words 20 --json");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["url"], server.url());
  EXPECT_EQ(j["clients"], 4);
  EXPECT_EQ(j["requests_per_client"], 2);
  EXPECT_EQ(j["max_tokens"], 16);
  EXPECT_EQ(j["ok"], 8);
  EXPECT_EQ(j["errors"], 0);
  EXPECT_FALSE(j.contains("first_error")) << j["first_error"];
  EXPECT_GT(j["wall_s"].get<double>(), 0);
  EXPECT_GT(j["deltas_per_s"].get<double>(), 0);
  ExpectOrderedPositive(j["first_token_ms"], "first_token_ms");
  ExpectOrderedPositive(j["inter_token_ms"], "inter_token_ms");

  // Every request ended: the server holds no KV blocks and runs no sequence.
  auto metrics = net::HttpClient().Send(net::HttpRequest::Get(server.url() + "/metrics"));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  ASSERT_EQ(metrics->status, 200);
  EXPECT_NE(metrics->body.find("hotline_engine_kv_blocks_in_use 0\n"), std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("hotline_engine_running_sequences 0\n"), std::string::npos);
  const std::regex generated("hotline_engine_generated_tokens_total ([0-9]+)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(metrics->body, m, generated)) << metrics->body;
  EXPECT_GE(std::stol(m[1].str()), 8);
}

TEST_F(EngineLoadtestCli, NothingListeningIsCountedAsErrorsAndExitsNonZero) {
  // A loopback port nobody listens on: bound (never listened) and closed again.
  int port = 0;
  {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    socklen_t len = sizeof a;
    ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
    port = ntohs(a.sin_port);
    close(fd);
  }
  e2e::CommandResult r = e2e::RunHotline("engine loadtest --url http://127.0.0.1:" + std::to_string(port) +
                               " --clients 2 --requests 1 --system-words 0 --json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out << r.err;
  EXPECT_EQ(j["ok"], 0);
  EXPECT_EQ(j["errors"], 2);
  EXPECT_TRUE(j["first_error"].is_string());
  EXPECT_EQ(j["first_token_ms"]["p99"], 0);

  e2e::CommandResult usage = e2e::RunHotline("engine loadtest --clients 2");
  EXPECT_NE(usage.exit_code, 0);
  EXPECT_NE(usage.err.find("--url"), std::string::npos) << usage.err;
}

}  // namespace
}  // namespace hotline
