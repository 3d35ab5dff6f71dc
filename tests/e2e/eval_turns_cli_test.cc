// `hotline eval turns` on a few questions of the public sets from ../shared/data (one per set and
// voice, one 600 ms pause each, no real recordings): every utterance is traced through the call's
// recognizer and VAD, and every policy is replayed over the traces. A silence rule shorter than
// the pause cuts every paused question off; one longer than it never does; and a complete
// question waits at least the rule's silence. Runs the binary: build `hotline` first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "common/build_paths.h"
#include "run_hotline.h"

namespace hotline {
namespace {

const nlohmann::json* Policy(const nlohmann::json& j, const std::string& name) {
  for (const auto& p : j["policies"]) {
    if (p["name"] == name) return &p;
  }
  return nullptr;
}

TEST(EvalTurnsCli, SilenceRulesCutPausesShorterThanThemselvesOnly) {
  const std::string cache = ::testing::TempDir() + "/eval_turns_cache_" + std::to_string(getpid());
  e2e::CommandResult r = e2e::RunHotline(
      "eval turns --json --questions 1 --pauses 600 --tuning-voices slt --report-voices awb "
      "--no-real --threads 1 --data " +
      std::string(HOTLINE_SHARED_DATA_DIR) + " --cache " + cache);
  std::filesystem::remove_all(cache);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.all();
  // Three sets (Banking77, CLINC150, Bitext) x two voices x (whole + one pause).
  EXPECT_EQ(j["utterances"], 12);
  EXPECT_EQ(j["pauses_ms"], nlohmann::json::array({600}));
  EXPECT_EQ(j["tuning_voices"], nlohmann::json::array({"slt"}));
  EXPECT_EQ(j["report_voices"], nlohmann::json::array({"awb"}));
  const nlohmann::json* short_rule = Policy(j, "silence 300 ms");
  const nlohmann::json* long_rule = Policy(j, "silence 1000 ms");
  ASSERT_NE(short_rule, nullptr) << j["policies"].dump();
  ASSERT_NE(long_rule, nullptr);
  ASSERT_NE(Policy(j, "detector (asr.turn)"), nullptr);
  for (const char* part : {"tuning", "report"}) {
    const auto& s = (*short_rule)[part]["all"];
    const auto& l = (*long_rule)[part]["all"];
    EXPECT_EQ(s["600"]["n"], 3) << part;
    EXPECT_EQ(s["600"]["cut_off_rate"].get<double>(), 1.0) << part << " " << s.dump();
    EXPECT_EQ(l["600"]["cut_off_rate"].get<double>(), 0.0) << part << " " << l.dump();
    EXPECT_EQ(s["complete"]["n"], 3) << part;
    EXPECT_GE(s["complete"]["delay_p50_ms"].get<double>(), 300) << part;
    EXPECT_GE(l["complete"]["delay_p50_ms"].get<double>(), 1000) << part;
  }
}

TEST(EvalTurnsCli, UsageErrors) {
  e2e::CommandResult r = e2e::RunHotline("eval turns --pauses 50");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.all().find("--pauses takes pause lengths"), std::string::npos) << r.all();
  r = e2e::RunHotline("eval turns --tuning-voices nobody");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.all().find("unknown voice 'nobody'"), std::string::npos) << r.all();
}

}  // namespace
}  // namespace hotline
