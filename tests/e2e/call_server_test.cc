// server::CallServer, the front door `hotline serve` runs, over a real call stack and loopback
// sockets: every route answers, the admin API needs its token, readiness follows the drain, and
// Stop() is idempotent.
#include "server/node/call_server.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "common/build_paths.h"
#include "common/metrics.h"
#include "net/http_client.h"

namespace hotline {
namespace {

const std::string kKbCsv = std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/bitext_kb.csv";

std::string Scratch(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("hotline-call-server-" + std::to_string(getpid()) + "-" + name))
      .string();
}

int HttpStatusOf(const std::string& url, const std::string& token = "") {
  net::HttpRequest req = net::HttpRequest::Get(url);
  if (!token.empty()) req.headers.push_back({"Authorization", "Bearer " + token});
  auto r = net::HttpClient().Send(req);
  return r.ok() ? r->status : -1;
}

// A call stack over the demo knowledge base, its SQLite copy at Scratch(`db`); its series in
// `metrics` (null: the global registry).
std::unique_ptr<pipeline::CallStack> DemoStack(const std::string& db,
                                               MetricsRegistry* metrics = nullptr) {
  pipeline::CallStackOptions o;
  o.kb_db = Scratch(db);
  o.kb_csv = kKbCsv;
  o.metrics = metrics;
  auto stack = pipeline::CallStack::Build(o);
  EXPECT_TRUE(stack.ok()) << stack.status();
  return stack.ok() ? std::move(*stack) : nullptr;
}

TEST(CallServer, ServesEveryRouteAndDrains) {
  auto stack = DemoStack("kb.sqlite");
  ASSERT_NE(stack, nullptr);

  server::CallServerOptions options;
  options.server.port = 0;
  options.audiosocket.port = 0;
  options.admin.token = "s3cret-admin-token-0123";
  options.effective_config_yaml = "log_level: info\n";
  auto node = server::CallServer::Create(*stack, options);
  ASSERT_TRUE(node.ok()) << node.status();
  server::CallServer& n = **node;
  ASSERT_TRUE(n.Start().ok());
  EXPECT_EQ(n.Start().code(), StatusCode::kFailedPrecondition);  // once only
  EXPECT_GT(n.audiosocket_port(), 0);
  const auto lines = n.Describe();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("answering calls at ws://127.0.0.1:"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("AudioSocket tcp://"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("admin API on"), std::string::npos) << lines[0];

  for (const char* path : {"/healthz", "/readyz", "/metrics", "/softphone", "/dashboard",
                           "/api/dashboard"}) {
    EXPECT_EQ(HttpStatusOf(n.http().Url(path)), 200) << path;
  }
  EXPECT_EQ(HttpStatusOf(n.http().Url("/admin/calls")), 401);
  EXPECT_EQ(HttpStatusOf(n.http().Url("/admin/calls"), "s3cret-admin-token-0123"), 200);
  EXPECT_EQ(HttpStatusOf(n.http().Url("/admin/config"), "s3cret-admin-token-0123"), 200);
  EXPECT_EQ(n.active_calls(), 0);

  n.BeginDrain();
  EXPECT_TRUE(n.draining());
  EXPECT_EQ(HttpStatusOf(n.http().Url("/readyz")), 503);
  EXPECT_EQ(HttpStatusOf(n.http().Url("/healthz")), 200);  // alive, just not taking calls

  n.Stop();
  n.Stop();
  EXPECT_EQ(HttpStatusOf(n.http().Url("/healthz")), -1);
  node->reset();
  stack.reset();
  std::filesystem::remove(Scratch("kb.sqlite"));
}

TEST(CallServer, ANodeKeepsEverySeriesInItsStacksRegistry) {
  // The HTTP server, the call cap, the endpoints and the answer tiers of one node all count in
  // the registry its call stack was built with, and /metrics shows that registry.
  MetricsRegistry mine;
  auto stack = DemoStack("kb3.sqlite", &mine);
  ASSERT_NE(stack, nullptr);
  Counter& global_connections = MetricsRegistry::Global().GetCounter(
      "hotline_server_connections_total", "Connections accepted");
  const uint64_t global_before = global_connections.value();
  server::CallServerOptions options;
  options.server.port = 0;
  auto node = server::CallServer::Create(*stack, options);
  ASSERT_TRUE(node.ok()) << node.status();
  ASSERT_TRUE((*node)->Start().ok());
  EXPECT_EQ(HttpStatusOf((*node)->http().Url("/healthz")), 200);
  auto metrics = net::HttpClient().Send(net::HttpRequest::Get((*node)->http().Url("/metrics")));
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  for (const char* series :
       {"\nhotline_server_connections_total ", "\nhotline_calls_ended_total{",
        "\nhotline_answer_cache_rejects_total{", "\nhotline_process_resident_memory_bytes "}) {
    EXPECT_NE(metrics->body.find(series), std::string::npos) << series;
  }
  EXPECT_GE(mine.GetCounter("hotline_server_connections_total", "Connections accepted").value(),
            2u);
  EXPECT_EQ(global_connections.value(), global_before);
  (*node)->Stop();
  node->reset();
  stack.reset();
  std::filesystem::remove(Scratch("kb3.sqlite"));
}

TEST(CallServer, AnAdminTokenIsNotRequiredButWithoutOneTheApiIsOff) {
  auto stack = DemoStack("kb2.sqlite");
  ASSERT_NE(stack, nullptr);
  server::CallServerOptions options;
  options.server.port = 0;
  options.audiosocket.port = -1;
  auto node = server::CallServer::Create(*stack, options);
  ASSERT_TRUE(node.ok()) << node.status();
  ASSERT_TRUE((*node)->Start().ok());
  EXPECT_EQ((*node)->audiosocket_port(), -1);
  EXPECT_NE((*node)->Describe()[0].find("admin API off"), std::string::npos);
  EXPECT_NE(HttpStatusOf((*node)->http().Url("/admin/calls"), "anything"), 200);
  node->reset();
  stack.reset();
  std::filesystem::remove(Scratch("kb2.sqlite"));
}

}  // namespace
}  // namespace hotline
