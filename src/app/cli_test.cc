#include "app/cli.h"
#include "app/hotline_config.h"

#include <gtest/gtest.h>

namespace hotline::cli {
namespace {

TEST(Args, ParsesPositionalsFlagsAndValues) {
  std::vector<std::string> argv = {"in.wav", "out.wav", "--rate", "8000", "--codec=mulaw", "--json"};
  auto a = Args::Parse(argv, {"--rate", "--codec"});
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->positional(), (std::vector<std::string>{"in.wav", "out.wav"}));
  EXPECT_EQ(*a->GetInt("--rate", 0, 1, 100000), 8000);
  EXPECT_EQ(a->GetOr("--codec", "pcm16"), "mulaw");
  EXPECT_TRUE(a->Has("--json"));
  EXPECT_TRUE(a->Finish().ok());
}

TEST(Args, ReportsUnknownOptionsAndBadValues) {
  std::vector<std::string> argv = {"--rate", "fast", "--bogus"};
  auto a = Args::Parse(argv, {"--rate"});
  ASSERT_TRUE(a.ok());
  auto rate = a->GetInt("--rate", 0, 1, 100000);
  EXPECT_FALSE(rate.ok());
  EXPECT_NE(rate.status().message().find("fast"), std::string::npos);
  Status s = a->Finish();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--bogus"), std::string::npos);
}

TEST(Args, MissingValueIsAnError) {
  std::vector<std::string> argv = {"--rate"};
  EXPECT_FALSE(Args::Parse(argv, {"--rate"}).ok());
}

TEST(Args, NegativeNumbersArePositional) {
  std::vector<std::string> argv = {"-3"};
  auto a = Args::Parse(argv, {});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->positional().size(), 1u);
}

}  // namespace
}  // namespace hotline::cli

namespace hotline {
namespace {

TEST(RedactedConfigYaml, HidesTokensAndUrlPasswords) {
  HotlineConfig cfg;
  cfg.admin.token = "s3cret-admin-token-0123456789";
  const std::string yaml = RedactedConfigYaml(cfg);
  EXPECT_EQ(yaml.find("s3cret-admin-token"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("token: <redacted>"), std::string::npos) << yaml;
  // Everything else is there, secrets' neighbours included.
  EXPECT_NE(yaml.find("token_env: HOTLINE_ADMIN_TOKEN"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("max_calls:"), std::string::npos);
  EXPECT_NE(yaml.find("audiosocket:"), std::string::npos);
}

}  // namespace
}  // namespace hotline
