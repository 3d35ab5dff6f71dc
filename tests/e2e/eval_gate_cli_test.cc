// `hotline eval gate` on the real data sets (Bitext and CLINC150 from ../shared/data) and the
// embedded defaults: the configured answer.llm_gate.min_intent_top_two is still the cut that best
// separates the tuning sets (the default was chosen so), the held-out in-scope questions that
// reach the model mostly pass, the out-of-scope ones mostly do not; a few spoken questions go
// through the recognizer with their confidence. And the usage errors.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include "common/build_paths.h"
#include "run_hotline.h"

namespace hotline {
namespace {

const std::string kData = HOTLINE_SHARED_DATA_DIR;
const std::string kSets = " --bitext " + kData + "/support/bitext/customer_support.csv --clinc " +
                          kData + "/intent/clinc150/data_full.json";

TEST(EvalGateCli, TheDefaultTopTwoSeparatesInScopeFromOutOfScopeQuestions) {
  e2e::CommandResult r = e2e::RunHotline("eval gate --json --spoken 3" + kSets);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.all();
  const double configured = j["configured"]["min_intent_top_two"].get<double>();
  EXPECT_GT(configured, 0);
  EXPECT_NEAR(j["chosen_min_intent_top_two"].get<double>(), configured, 0.0026);
  const auto& sets = j["sets"];
  EXPECT_EQ(sets["bitext_test"]["questions"], 440);
  EXPECT_EQ(sets["clinc_oos_test"]["questions"], 1000);
  EXPECT_GT(sets["clinc_oos_test"]["reached_llm"].get<int>(), 500);  // what the gate is for
  EXPECT_GE(sets["bitext_test"]["kept_at_configured"].get<double>(), 0.6);
  EXPECT_GE(sets["bitext_train"]["kept_at_configured"].get<double>(), 0.6);
  EXPECT_LE(sets["clinc_oos_test"]["kept_at_configured"].get<double>(), 0.2);
  // The top-two probability separates better than the margin (which also blocks in-scope
  // hesitation between two related intents) and the calibrated confidence (flat under the
  // accept threshold).
  const auto& sep = j["oos_blocked_at_75pct_kept_tuning"];
  EXPECT_GT(sep["intent_top_two"].get<double>(), sep["intent_margin"].get<double>());
  EXPECT_GT(sep["intent_top_two"].get<double>(), sep["intent_confidence"].get<double>());
  EXPECT_GT(sep["intent_top_two"].get<double>(), sep["kb_top_score"].get<double>());
  // Spoken: each question heard, with a confidence in [0, 1].
  const auto& spoken = j["spoken"]["sets"]["bitext_test"];
  ASSERT_EQ(spoken["items"].size(), 3u) << spoken.dump();
  for (const auto& it : spoken["items"]) {
    EXPECT_GE(it["asr_confidence"].get<double>(), 0);
    EXPECT_LE(it["asr_confidence"].get<double>(), 1);
    EXPECT_GE(it["wer"].get<double>(), 0);
  }
}

TEST(EvalGateCli, UsageErrors) {
  e2e::CommandResult r = e2e::RunHotline("eval gate --bitext x.csv");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.all().find("--bitext and --clinc are required"), std::string::npos) << r.all();
  r = e2e::RunHotline("eval gate --spoken -1" + kSets);
  EXPECT_NE(r.exit_code, 0);
  r = e2e::RunHotline("eval gate --bitext /nonexistent.csv --clinc /nonexistent.json");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.all().find("nonexistent"), std::string::npos) << r.all();
}

}  // namespace
}  // namespace hotline
