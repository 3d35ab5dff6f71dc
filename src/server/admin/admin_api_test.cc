#include "server/admin/admin_api.h"

#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/testing/test_clients.h"

namespace hotline::server {
namespace {

using testing::RawClient;
using testing::StatusOf;
using json = nlohmann::json;

const std::string kToken = "s3cret-admin-token-0123456789";

ActiveCall Call(std::string id, std::string transport = "") {
  ActiveCall c;
  c.id = std::move(id);
  c.transport = std::move(transport);
  return c;
}

std::string Body(const std::string& response) {
  const size_t at = response.find("\r\n\r\n");
  return at == std::string::npos ? "" : response.substr(at + 4);
}

class AdminApiTest : public ::testing::Test {
 protected:
  void Start(const std::string& token) {
    ServerConfig sc;
    sc.port = 0;
    auto srv = HttpServer::Create(sc);
    ASSERT_TRUE(srv.ok()) << srv.status();
    server_ = std::move(*srv);
    registry_ = std::make_shared<CallRegistry>(4);
    AdminActions a;
    a.calls = registry_;
    a.reload_kb = [this]() -> Result<std::string> {
      ++reloads_;
      if (fail_reload_) return InvalidArgumentError("kb.csv:3: missing body");
      return std::string(R"({"records":3})");
    };
    a.flush_caches = [this]() -> Result<std::string> {
      ++flushes_;
      return std::string(R"({"stamps_bumped":3})");
    };
    a.effective_config = [] { return std::string("admin:\n  token: <redacted>\n"); };
    ASSERT_TRUE(RegisterAdminApi(*server_, token, a).ok());
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  std::string Send(const std::string& method, const std::string& path, const std::string& auth,
                   const std::string& body = "") {
    RawClient c(server_->port());
    std::string req = method + " " + path + " HTTP/1.1\r\nHost: x\r\n";
    if (!auth.empty()) req += "Authorization: " + auth + "\r\n";
    req +=
        "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    EXPECT_TRUE(c.Send(req));
    return c.ReadResponse();
  }

  std::unique_ptr<HttpServer> server_;
  std::shared_ptr<CallRegistry> registry_;
  std::atomic<int> reloads_{0};
  std::atomic<int> flushes_{0};
  bool fail_reload_ = false;
};

TEST(AdminApi, ConstantTimeEqualsComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("abcdef", "abcdef"));
  EXPECT_FALSE(ConstantTimeEquals("abcdef", "abcdeg"));
  EXPECT_FALSE(ConstantTimeEquals("abcdef", "abcde"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

TEST(AdminApi, ConfigRejectsShortTokens) {
  AdminConfig c;
  EXPECT_TRUE(c.Validate().ok());  // empty: off
  c.token = "short";
  EXPECT_FALSE(c.Validate().ok());
  c.token = kToken;
  EXPECT_TRUE(c.Validate().ok());
  c.token = "has a space in the token here";
  EXPECT_FALSE(c.Validate().ok());
}

TEST_F(AdminApiTest, WithoutAConfiguredTokenEveryEndpointIsOff) {
  Start("");
  for (auto [method, path] : {std::pair{"GET", "/admin/calls"},
                              {"POST", "/admin/kb/reload"},
                              {"POST", "/admin/caches/flush"},
                              {"GET", "/admin/config"},
                              {"POST", "/admin/calls/end"}}) {
    std::string r = Send(method, path, "Bearer anything-at-all-0123456789");
    EXPECT_EQ(StatusOf(r), 404) << path;
    EXPECT_NE(Body(r).find("admin API is disabled"), std::string::npos) << r;
  }
  EXPECT_EQ(reloads_, 0);
}

TEST_F(AdminApiTest, RefusesMissingAndWrongTokensWith401Json) {
  Start(kToken);
  const std::vector<std::string> auths = {"", "Bearer wrong-token-0123456789abcd",
                                          "Bearer " + kToken + "x", "Basic " + kToken, "Bearer "};
  for (const std::string& auth : auths) {
    for (auto [method, path] : {std::pair{"GET", "/admin/calls"},
                                {"POST", "/admin/kb/reload"},
                                {"POST", "/admin/caches/flush"},
                                {"GET", "/admin/config"}}) {
      std::string r = Send(method, path, auth);
      ASSERT_EQ(StatusOf(r), 401) << auth << " " << path << "\n" << r;
      EXPECT_NE(r.find("application/json"), std::string::npos);
      EXPECT_NE(r.find("WWW-Authenticate: Bearer"), std::string::npos);
      auto j = json::parse(Body(r), nullptr, false);
      ASSERT_TRUE(j.is_object()) << r;
      EXPECT_TRUE(j.contains("error"));
    }
  }
  EXPECT_EQ(reloads_, 0);
  EXPECT_EQ(flushes_, 0);
}

TEST_F(AdminApiTest, WorksWithTheToken) {
  Start(kToken);
  const std::string auth = "Bearer " + kToken;
  std::atomic<int> ended{0};
  std::string reason;
  auto admission = registry_->Admit(Call("CA1", "twilio"), [&](std::string_view why) {
    reason = std::string(why);
    ++ended;
  });
  ASSERT_NE(admission, nullptr);

  std::string r = Send("GET", "/admin/calls", auth);
  ASSERT_EQ(StatusOf(r), 200) << r;
  auto calls = json::parse(Body(r));
  ASSERT_EQ(calls["calls"].size(), 1u);
  EXPECT_EQ(calls["calls"][0]["id"], "CA1");
  EXPECT_EQ(calls["calls"][0]["transport"], "twilio");
  EXPECT_EQ(calls["max_calls"], 4);

  r = Send("POST", "/admin/calls/end", auth, R"({"id":"nope"})");
  EXPECT_EQ(StatusOf(r), 404) << r;
  r = Send("POST", "/admin/calls/end", auth, R"({"nope":1})");
  EXPECT_EQ(StatusOf(r), 400) << r;
  r = Send("POST", "/admin/calls/end", auth, "not json");
  EXPECT_EQ(StatusOf(r), 400) << r;
  EXPECT_EQ(ended, 0);
  r = Send("POST", "/admin/calls/end", auth, R"({"id":"CA1"})");
  EXPECT_EQ(StatusOf(r), 200) << r;
  EXPECT_EQ(ended, 1);
  EXPECT_EQ(reason, "ended by an administrator");

  r = Send("POST", "/admin/kb/reload", auth);
  EXPECT_EQ(StatusOf(r), 200) << r;
  EXPECT_EQ(json::parse(Body(r))["records"], 3);
  fail_reload_ = true;
  r = Send("POST", "/admin/kb/reload", auth);
  EXPECT_EQ(StatusOf(r), 422) << r;
  EXPECT_NE(Body(r).find("missing body"), std::string::npos);
  EXPECT_EQ(reloads_, 2);

  r = Send("POST", "/admin/caches/flush", auth);
  EXPECT_EQ(StatusOf(r), 200) << r;
  EXPECT_EQ(flushes_, 1);

  r = Send("GET", "/admin/config", auth);
  EXPECT_EQ(StatusOf(r), 200) << r;
  EXPECT_NE(Body(r).find("<redacted>"), std::string::npos);

  // The registry forgets a call once it is over.
  admission.reset();
  r = Send("GET", "/admin/calls", auth);
  EXPECT_EQ(json::parse(Body(r))["calls"].size(), 0u);
}

TEST(CallRegistry, CapsCallsAndGivesPlacesBack) {
  CallRegistry reg(2);
  auto a = reg.Admit(Call("a"), nullptr);
  auto b = reg.Admit(Call("b"), nullptr);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(reg.Admit(Call("c"), nullptr), nullptr);
  EXPECT_EQ(reg.active(), 2);
  a.reset();
  EXPECT_EQ(reg.active(), 1);
  auto c = reg.Admit(Call("c"), nullptr);
  ASSERT_NE(c, nullptr);
  auto list = reg.List();
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].id, "b");  // oldest first
  EXPECT_EQ(list[1].id, "c");
  EXPECT_GT(list[0].started_unix_ms, 0);
}

}  // namespace
}  // namespace hotline::server
