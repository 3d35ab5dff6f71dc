#include "net/url.h"

#include <gtest/gtest.h>

namespace hotline::net {
namespace {

TEST(ParseHttpUrl, HostPortTarget) {
  auto u = ParseHttpUrl("http://127.0.0.1:8080/v1/audio/speech?x=1");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(u->target, "/v1/audio/speech?x=1");
}

TEST(ParseHttpUrl, DefaultsAndIpv6) {
  auto u = ParseHttpUrl("http://localhost");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->port, 80);
  EXPECT_EQ(u->target, "/");
  auto v6 = ParseHttpUrl("http://[::1]:9000/x");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 9000);
  auto q = ParseHttpUrl("http://h?a=b");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->target, "/?a=b");
}

TEST(ParseHttpUrl, RejectsBadInput) {
  auto https = ParseHttpUrl("https://api.example.com/v1");
  ASSERT_TRUE(https.ok()) << https.status();
  EXPECT_TRUE(https->tls);
  EXPECT_EQ(https->port, 443);
  EXPECT_EQ(https->target, "/v1");
  EXPECT_EQ(ParseHttpUrl("https://h:8443/")->port, 8443);
  EXPECT_FALSE(ParseHttpUrl("http://h/")->tls);
  EXPECT_FALSE(ParseHttpUrl("ftp://h/").ok());
  EXPECT_EQ(ParseHttpUrl("ftp://x/").status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseHttpUrl("http://:80/").ok());
  EXPECT_FALSE(ParseHttpUrl("http://h:0/").ok());
  EXPECT_FALSE(ParseHttpUrl("http://h:70000/").ok());
  EXPECT_FALSE(ParseHttpUrl("http://h:/").ok());
  EXPECT_FALSE(ParseHttpUrl("http://h:12ab/").ok());
  EXPECT_FALSE(ParseHttpUrl("http://user:pw@h/").ok());
  EXPECT_FALSE(ParseHttpUrl("http://h/a b").ok());
  EXPECT_FALSE(ParseHttpUrl("http://h/a\r\nX: y").ok());
  EXPECT_FALSE(ParseHttpUrl("http://[::1/").ok());
}

TEST(JoinUrl, ExactlyOneSlash) {
  EXPECT_EQ(JoinUrl("http://h:1/v1/", "/audio/speech"), "http://h:1/v1/audio/speech");
  EXPECT_EQ(JoinUrl("http://h:1", "v1/models"), "http://h:1/v1/models");
}

}  // namespace
}  // namespace hotline::net
