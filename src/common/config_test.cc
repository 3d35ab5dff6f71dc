#include "common/config.h"

#include <gtest/gtest.h>

namespace hotline {
namespace {

struct KvConfig {
  int block_tokens = 16;
  std::string dtype = "f16";
  template <class V>
  void Visit(V& v) {
    v.Field("block_tokens", block_tokens, "tokens per block");
    v.Field("dtype", dtype, "f16 or q8_0");
  }
  Status Validate() const {
    if (dtype != "f16" && dtype != "q8_0") {
      return InvalidArgumentError("dtype must be f16 or q8_0, got '" + dtype + "'");
    }
    return Status::Ok();
  }
};

struct EngineConfig {
  int max_batch_size = 8;
  double temperature = 0.7;
  bool flash_attention = true;
  std::vector<std::string> stop = {"</s>"};
  KvConfig kv;
  template <class V>
  void Visit(V& v) {
    v.Field("max_batch_size", max_batch_size, "sequences per step");
    v.Field("temperature", temperature, "sampling temperature");
    v.Field("flash_attention", flash_attention, "fused attention");
    v.Field("stop", stop, "stop strings");
    v.Section("kv", kv);
  }
  Status Validate() const {
    if (max_batch_size < 1) return InvalidArgumentError("max_batch_size must be >= 1");
    return Status::Ok();
  }
};

struct RootConfig {
  std::string log_level = "info";
  EngineConfig engine;
  template <class V>
  void Visit(V& v) {
    v.Field("log_level", log_level, "log level");
    v.Section("engine", engine);
  }
};

TEST(Config, ReadsNestedValuesAndKeepsDefaults) {
  RootConfig c;
  Status s = ParseConfigYaml("engine:\n  max_batch_size: 32\n  kv:\n    dtype: q8_0\n", "x.yaml", c);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(c.engine.max_batch_size, 32);
  EXPECT_EQ(c.engine.kv.dtype, "q8_0");
  EXPECT_EQ(c.engine.kv.block_tokens, 16);
  EXPECT_DOUBLE_EQ(c.engine.temperature, 0.7);
  EXPECT_EQ(c.log_level, "info");
}

TEST(Config, UnknownKeyNamesPathAndLine) {
  RootConfig c;
  Status s = ParseConfigYaml("log_level: info\nengine:\n  max_batch_sise: 4\n", "hotline.yaml", c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("hotline.yaml:3"), std::string::npos) << s;
  EXPECT_NE(s.message().find("engine.max_batch_sise"), std::string::npos) << s;
}

TEST(Config, WrongTypeNamesPathLineAndType) {
  RootConfig c;
  Status s = ParseConfigYaml("engine:\n  kv:\n    block_tokens: many\n", "h.yaml", c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("h.yaml:3"), std::string::npos) << s;
  EXPECT_NE(s.message().find("engine.kv.block_tokens"), std::string::npos) << s;
  EXPECT_NE(s.message().find("integer"), std::string::npos) << s;
  s = ParseConfigYaml("engine:\n  flash_attention: 3\n", "h.yaml", c);
  EXPECT_FALSE(s.ok());
  s = ParseConfigYaml("engine: 5\n", "h.yaml", c);
  EXPECT_FALSE(s.ok());
  s = ParseConfigYaml("engine:\n  max_batch_size: 99999999999\n", "h.yaml", c);
  EXPECT_FALSE(s.ok());
}

TEST(Config, TextThatIsNotUtf8IsRefusedWithItsKeyAndLine) {
  RootConfig c;
  // A Latin-1 'e' in a string and in a list item: a dump would turn it into U+FFFD (three bytes),
  // so the file would not say what was loaded.
  Status s = ParseConfigYaml("engine:\n  kv:\n    dtype: caf\xe9\n", "h.yaml", c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("h.yaml:3"), std::string::npos) << s;
  EXPECT_NE(s.message().find("engine.kv.dtype"), std::string::npos) << s;
  EXPECT_NE(s.message().find("not valid UTF-8 (byte 0xe9 at offset 3)"), std::string::npos) << s;
  s = ParseConfigYaml("engine:\n  stop: [ok, \"\xff\"]\n", "h.yaml", c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("engine.stop"), std::string::npos) << s;
  EXPECT_NE(s.message().find("UTF-8"), std::string::npos) << s;
  EXPECT_EQ(c.engine.stop, (std::vector<std::string>{"</s>"}));
  // Multi-byte text is fine.
  s = ParseConfigYaml("engine:\n  stop: [\"\xe6\x82\xa8\xe5\xa5\xbd\"]\n", "h.yaml", c);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(c.engine.stop, (std::vector<std::string>{"\xe6\x82\xa8\xe5\xa5\xbd"}));
}

TEST(Config, InvalidYamlNamesLine) {
  RootConfig c;
  Status s = ParseConfigYaml("engine:\n  kv: [unclosed\n", "h.yaml", c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("h.yaml:"), std::string::npos) << s;
}

TEST(Config, OverridesApplyToAnyKey) {
  RootConfig c;
  ASSERT_TRUE(ApplyConfigOverride("engine.max_batch_size=16", c).ok());
  ASSERT_TRUE(ApplyConfigOverride("engine.kv.dtype=q8_0", c).ok());
  ASSERT_TRUE(ApplyConfigOverride("engine.stop=[a, b]", c).ok());
  EXPECT_EQ(c.engine.max_batch_size, 16);
  EXPECT_EQ(c.engine.kv.dtype, "q8_0");
  EXPECT_EQ(c.engine.stop, (std::vector<std::string>{"a", "b"}));
  Status s = ApplyConfigOverride("engine.nope=1", c);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("engine.nope"), std::string::npos);
  EXPECT_FALSE(ApplyConfigOverride("engine.max_batch_size", c).ok());
  EXPECT_FALSE(ApplyConfigOverride("engine..x=1", c).ok());
}

TEST(Config, ValidateReportsSectionPath) {
  RootConfig c;
  c.engine.kv.dtype = "q2";
  Status s = ValidateConfig(c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("engine.kv"), std::string::npos) << s;
  c.engine.kv.dtype = "f16";
  EXPECT_TRUE(ValidateConfig(c).ok());
}

TEST(Config, DumpRoundTrips) {
  RootConfig a;
  a.engine.max_batch_size = 3;
  a.engine.stop = {"x"};
  std::string text = DumpConfigYaml(a);
  RootConfig b;
  ASSERT_TRUE(ParseConfigYaml(text, "dump", b).ok()) << text;
  EXPECT_EQ(b.engine.max_batch_size, 3);
  EXPECT_EQ(b.engine.stop, (std::vector<std::string>{"x"}));
  EXPECT_EQ(DescribeConfig(a).size(), 7u);
}


// Strings that must come back as the same string: YAML syntax, lookalikes of other types,
// escapes, line breaks in all their Unicode spellings, non-ASCII text.
TEST(Config, EveryStringReadsBackTheSame) {
  const std::vector<std::string> texts = {
      "", " ", "plain", "two words", "a: b", "a:b", "a #b", "a#b", "#a", "- a", "-a", "? a",
      "[a]", "{a}", "a, b", "&a", "*a", "!a", "|", ">", "'a'", "\"a\"", "%a", "@a", "`a`",
      "null", "Null", "~", "true", "No", "y", "12", "-1.5", "1e5", "0x1F", ".inf", "nan",
      "trailing ", " leading", "tab\tin", "new\nline", "cr\rx", "back\\slash", "bell\x07",
      "del\x7f", "nel\xc2\x85x", "ls\xe2\x80\xa8x", "ps\xe2\x80\xa9x", "\xef\xbb\xbf" "bom",
      "\xe6\x88\x91\xe6\x83\xb3", "<redacted>", "http://u:p@h/x", "---", "...", "a  b"};
  for (const std::string& t : texts) {
    RootConfig a;
    a.log_level = t;
    a.engine.stop = {t, "x", t};
    const std::string text = DumpConfigYaml(a);
    RootConfig b;
    ASSERT_TRUE(ParseConfigYaml(text, "dump", b).ok()) << "[" << t << "]\n" << text;
    EXPECT_EQ(b.log_level, t) << text;
    EXPECT_EQ(b.engine.stop, a.engine.stop) << text;
  }
}

TEST(Config, NumbersAreWrittenInTheirShortestExactForm) {
  EXPECT_EQ(config_internal::NumberYaml(0.6), "0.6");
  EXPECT_EQ(config_internal::NumberYaml(1e-48), "1e-48");
  EXPECT_EQ(config_internal::NumberYaml(3.0), "3");
  for (double d : {0.1, 0.994, 1e-300, 123456.789, -2.5e10}) {
    RootConfig a;
    a.engine.temperature = d;
    RootConfig b;
    ASSERT_TRUE(ParseConfigYaml(DumpConfigYaml(a), "dump", b).ok());
    EXPECT_EQ(b.engine.temperature, d);
  }
}

TEST(Config, ChangedDumpHoldsOnlyTheChangedKeysAndReadsBackTheSame) {
  RootConfig a;
  EXPECT_EQ(DumpConfigYaml(a, {.only_changed = true}), "{}\n");
  a.engine.kv.dtype = "q8_0";
  a.engine.stop = {};
  const std::string changed = DumpConfigYaml(a, {.only_changed = true});
  EXPECT_EQ(changed, "engine:\n  stop: []\n  kv:\n    dtype: q8_0\n");
  RootConfig b;
  ASSERT_TRUE(ParseConfigYaml(changed, "dump", b).ok()) << changed;
  EXPECT_EQ(DumpConfigYaml(b), DumpConfigYaml(a));
}

TEST(Config, RedactedDumpHidesSecretsAndUrlUserinfo) {
  EXPECT_TRUE(config_internal::IsSecretKey("token"));
  EXPECT_TRUE(config_internal::IsSecretKey("auth_token"));
  EXPECT_TRUE(config_internal::IsSecretKey("password"));
  EXPECT_FALSE(config_internal::IsSecretKey("token_env"));
  EXPECT_FALSE(config_internal::IsSecretKey("_token"));
  EXPECT_EQ(config_internal::RedactUrlUserinfo("redis://u:p@h:6379/0"),
            "redis://<redacted>@h:6379/0");
  EXPECT_EQ(config_internal::RedactUrlUserinfo("http://h/a@b"), "http://h/a@b");
  RootConfig a;
  a.log_level = "redis://user:pw@host";
  a.engine.stop = {"https://k:s@example.com/x", "plain"};
  const std::string text = DumpConfigYaml(a, {.redact_secrets = true});
  EXPECT_EQ(text.find("pw"), std::string::npos) << text;
  EXPECT_EQ(text.find("k:s"), std::string::npos) << text;
  EXPECT_NE(text.find("log_level: redis://<redacted>@host"), std::string::npos) << text;
  EXPECT_NE(text.find("- https://<redacted>@example.com/x"), std::string::npos) << text;
}

}  // namespace
}  // namespace hotline
