#include "app/cli.h"
#include "app/hotline_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

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

TEST(RedactedConfigYaml, HidesTheCallEdgesSecrets) {
  HotlineConfig cfg;
  cfg.twilio.auth_token = "twilio-auth-0123456789";
  cfg.calls.softphone_token = "softphone-0123456789";
  cfg.store.redis.password = "redis-pw-0123456789";
  const std::string yaml = RedactedConfigYaml(cfg);
  for (const char* secret : {"twilio-auth", "softphone-0123", "redis-pw"}) {
    EXPECT_EQ(yaml.find(secret), std::string::npos) << secret << "\n" << yaml;
  }
  EXPECT_NE(yaml.find("auth_token: <redacted>"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("softphone_token: <redacted>"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("password: <redacted>"), std::string::npos) << yaml;
}

// `config show` output, written to a file, is a configuration that loads to the same values.
TEST(DumpConfigYaml, TheFullDumpLoadsBackToTheSameConfiguration) {
  auto cfg = LoadHotlineConfig("", {"calls.over_capacity_text=\"Busy: call back\"", "asr.stable_ms=250",
                                    "call.agent_phrases=[a b, \"c: d\"]"});
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  const std::string full = DumpConfigYaml(*cfg);
  const std::filesystem::path p = std::filesystem::temp_directory_path() /
                                  ("hotline-cli-test-" + std::to_string(getpid()) + "-full.yaml");
  std::ofstream(p) << full;
  auto again = LoadHotlineConfig(p.string(), {});
  std::filesystem::remove(p);
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << full;
  EXPECT_EQ(DumpConfigYaml(*again), full);
  EXPECT_EQ(again->calls.over_capacity_text, "Busy: call back");
  EXPECT_NE(DumpConfigYaml(*cfg, {.only_changed = true}).find("stable_ms: 250"), std::string::npos);
}

TEST(LoadHotlineConfig, LogFormatIsTextOrJson) {
  EXPECT_TRUE(LoadHotlineConfig("", {"log.format=json"}).ok());
  EXPECT_TRUE(LoadHotlineConfig("", {"log.format=text"}).ok());
  auto bad = LoadHotlineConfig("", {"log.format=xml"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("format"), std::string::npos) << bad.status();
}

// Writes `text` to a fresh file under the test temp dir; returns its path.
std::string WriteConfig(const std::string& name, const std::string& text) {
  const std::filesystem::path p = std::filesystem::temp_directory_path() /
                                  ("hotline-cli-test-" + std::to_string(getpid()) + "-" + name);
  std::ofstream(p) << text;
  return p.string();
}

TEST(LoadHotlineConfig, CallCapIsTransportNeutral) {
  const std::string path =
      WriteConfig("calls.yaml", "calls:\n  max_calls: 7\n  over_capacity_text: Busy.\n");
  auto cfg = LoadHotlineConfig(path, {});
  std::filesystem::remove(path);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->calls.max_calls, 7);
  EXPECT_EQ(cfg->calls.over_capacity_text, "Busy.");
  auto bad = LoadHotlineConfig("", {"calls.max_calls=0"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("calls"), std::string::npos) << bad.status();
}

TEST(LoadHotlineConfig, OldCallCapKeysStillReadAsCalls) {
  const std::string path = WriteConfig(
      "old.yaml",
      "twilio:\n  max_calls: 5\n  over_capacity_text: Full.\naudiosocket:\n  port: -1\n");
  auto cfg = LoadHotlineConfig(path, {"twilio.max_calls=6"});
  std::filesystem::remove(path);
  ASSERT_TRUE(cfg.ok()) << cfg.status();
  EXPECT_EQ(cfg->calls.max_calls, 6);  // the override wins over the file, as for any key
  EXPECT_EQ(cfg->calls.over_capacity_text, "Full.");
  // The effective config shows only the new section.
  const std::string yaml = DumpConfigYaml(*cfg);
  EXPECT_NE(yaml.find("calls:\n  max_calls: 6"), std::string::npos) << yaml;
}

TEST(LoadHotlineConfig, OldAndNewCallCapKeysTogetherAreAnError) {
  const std::string path =
      WriteConfig("both.yaml", "calls:\n  max_calls: 5\ntwilio:\n  max_calls: 9\n");
  auto cfg = LoadHotlineConfig(path, {});
  std::filesystem::remove(path);
  ASSERT_FALSE(cfg.ok());
  const std::string msg(cfg.status().message());
  EXPECT_NE(msg.find("twilio.max_calls"), std::string::npos) << msg;
  EXPECT_NE(msg.find("calls.max_calls"), std::string::npos) << msg;
  EXPECT_NE(msg.find(":4:"), std::string::npos) << msg;  // the old key's line
}

TEST(LoadHotlineConfig, RemovedKeysAreAnErrorThatSaysWhy) {
  const std::string path = WriteConfig(
      "removed.yaml", "log_level: info\nengine:\n  threads: 2\n");
  auto cfg = LoadHotlineConfig(path, {});
  std::filesystem::remove(path);
  ASSERT_FALSE(cfg.ok());
  std::string msg(cfg.status().message());
  EXPECT_NE(msg.find(":2: engine was removed"), std::string::npos) << msg;
  EXPECT_NE(msg.find("llm.engine"), std::string::npos) << msg;  // where the keys go now

  const std::string nested = WriteConfig(
      "removed2.yaml", "llm:\n  engine:\n    threads: 2\n    prefix_cache_sequences: 4\n");
  cfg = LoadHotlineConfig(nested, {});
  std::filesystem::remove(nested);
  ASSERT_FALSE(cfg.ok());
  msg = cfg.status().message();
  EXPECT_NE(msg.find(":4: llm.engine.prefix_cache_sequences was removed"), std::string::npos)
      << msg;

  for (const char* o : {"engine.threads=2", "llm.engine.prefix_cache_sequences=4"}) {
    auto over = LoadHotlineConfig("", {o});
    ASSERT_FALSE(over.ok()) << o;
    EXPECT_NE(over.status().message().find("was removed"), std::string::npos) << over.status();
  }
  // A key that merely starts like a removed one is not it.
  auto fine = LoadHotlineConfig("", {"llm.engine.threads=2"});
  EXPECT_TRUE(fine.ok()) << fine.status();
}

}  // namespace
}  // namespace hotline
