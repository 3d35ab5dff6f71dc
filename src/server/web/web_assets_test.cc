#include "server/web/web_assets.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "net/http_client.h"
#include "server/http_server.h"

namespace hotline::server {
namespace {

TEST(WebAssets, EveryFileOfWebIsEmbedded) {
  std::set<std::string> names;
  for (const EmbeddedFile& f : EmbeddedWebFiles()) {
    names.insert(f.name);
    EXPECT_GT(f.size, 100u) << f.name;
    EXPECT_EQ(f.data[f.size], 0) << "terminator after " << f.name;
  }
  for (const char* want : {"softphone.html", "softphone.js", "softphone-worklet.js",
                           "dashboard.html", "dashboard.js", "style.css"}) {
    EXPECT_TRUE(names.count(want)) << want;
  }
}

TEST(WebAssets, PagesHaveNoInlineScriptOrStyleTheirPolicyWouldBlock) {
  for (const EmbeddedFile& f : EmbeddedWebFiles()) {
    std::string body(reinterpret_cast<const char*>(f.data), f.size);
    if (body.find("<html") == std::string::npos) continue;
    EXPECT_EQ(body.find("style=\""), std::string::npos) << f.name;
    EXPECT_EQ(body.find(" on"), body.find(" on\"")) << f.name;  // no onclick= handlers
    for (size_t at = body.find("<script"); at != std::string::npos;
         at = body.find("<script", at + 1)) {
      EXPECT_NE(body.substr(at, body.find('>', at) - at).find("src="), std::string::npos)
          << "inline script in " << f.name;
    }
    EXPECT_EQ(body.find("http://"), std::string::npos) << "external URL in " << f.name;
    EXPECT_EQ(body.find("https://"), std::string::npos) << "external URL in " << f.name;
  }
}

class WebPagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerConfig sc;
    sc.port = 0;
    auto s = HttpServer::Create(sc);
    ASSERT_TRUE(s.ok());
    server_ = std::move(*s);
    ASSERT_TRUE(RegisterWebPages(*server_).ok());
    ASSERT_TRUE(server_->Start().ok());
  }
  Result<net::HttpResponse> Get(const std::string& path, std::vector<net::HttpHeader> h = {}) {
    net::HttpRequest r = net::HttpRequest::Get(server_->Url(path));
    r.headers = std::move(h);
    return net::HttpClient().Send(r);
  }
  std::unique_ptr<HttpServer> server_;
};

TEST_F(WebPagesTest, PagesAndAssetsWithTypesCachingAndPolicy) {
  struct Case {
    const char* path;
    const char* type;
    const char* contains;
  };
  for (const Case& c :
       {Case{"/softphone", "text/html; charset=utf-8", "/web/softphone.js"},
        Case{"/dashboard", "text/html; charset=utf-8", "/web/dashboard.js"},
        Case{"/web/softphone.js", "text/javascript; charset=utf-8", "getUserMedia"},
        Case{"/web/softphone-worklet.js", "text/javascript; charset=utf-8", "registerProcessor"},
        Case{"/web/dashboard.js", "text/javascript; charset=utf-8", "/api/dashboard"},
        Case{"/web/style.css", "text/css; charset=utf-8", "body"}}) {
    auto r = Get(c.path);
    ASSERT_TRUE(r.ok()) << c.path;
    EXPECT_EQ(r->status, 200) << c.path;
    EXPECT_EQ(r->Header("Content-Type"), c.type) << c.path;
    EXPECT_NE(r->body.find(c.contains), std::string::npos) << c.path;
    EXPECT_EQ(r->Header("Cache-Control"), "no-cache") << c.path;
    EXPECT_EQ(r->Header("X-Content-Type-Options"), "nosniff");
    const std::string csp = r->Header("Content-Security-Policy");
    EXPECT_NE(csp.find("default-src 'none'"), std::string::npos);
    EXPECT_NE(csp.find("script-src 'self'"), std::string::npos);
    EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos);
    EXPECT_EQ(csp.find("unsafe"), std::string::npos);
    EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos);

    // Revalidation with the ETag: 304, no body.
    const std::string etag = r->Header("ETag");
    ASSERT_EQ(etag.size(), 18u);
    auto again = Get(c.path, {{"If-None-Match", etag}});
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(again->status, 304) << c.path;
    EXPECT_TRUE(again->body.empty());
    auto other = Get(c.path, {{"If-None-Match", "\"0000000000000000\""}});
    ASSERT_TRUE(other.ok());
    EXPECT_EQ(other->status, 200);
  }
  auto missing = Get("/web/nothing.js");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(missing->status, 404);
  auto traversal = Get("/web/../CMakeLists.txt");
  ASSERT_TRUE(traversal.ok());
  EXPECT_EQ(traversal->status, 404);
}

}  // namespace
}  // namespace hotline::server
