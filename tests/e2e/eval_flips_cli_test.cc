// `hotline eval flips` on the shipped flip set with Banking77's train split from ../shared/data:
// the report's shape, what a thin deployment's calibration does, and the usage errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "common/build_paths.h"
#include "run_hotline.h"

namespace hotline {
namespace {

const std::string kTrain =
    std::string(HOTLINE_SHARED_DATA_DIR) + "/intent/banking77/train.csv";

TEST(EvalFlipsCli, ThinEvidenceKeepsTheDefaultThresholdAndTheGuardHoldsTheDevSplit) {
  e2e::CommandResult r =
      e2e::RunHotline("eval flips --json --examples-per-intent 5 --train " + kTrain);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.all();
  EXPECT_EQ(j["pairs"], 507);
  const auto& sc = j["scenarios"];
  ASSERT_EQ(sc.size(), 3u) << sc.dump(2);
  EXPECT_EQ(sc[0]["method"], "default");
  EXPECT_EQ(sc[1]["method"], "bounded");
  EXPECT_EQ(sc[2]["method"], "point");
  EXPECT_EQ(sc[0]["calibration_questions"], 5 * 77);
  // Five examples per intent bound nothing at 1 %: the calibration keeps the default 0.75,
  // while the point estimate would go lower.
  EXPECT_EQ(sc[1]["bounded"], false);
  EXPECT_DOUBLE_EQ(sc[1]["threshold"].get<double>(), sc[0]["threshold"].get<double>());
  EXPECT_LT(sc[2]["threshold"].get<double>(), sc[1]["threshold"].get<double>());
  for (const auto& s : sc) {
    const auto& g = s["guarded"];
    EXPECT_EQ(g["flips_by_split"]["dev"]["pairs"], 179);
    EXPECT_EQ(g["flips_by_split"]["test"]["pairs"], 177);
    EXPECT_EQ(g["by_kind"]["control"]["pairs"], 151);
    // The guard matters: without it most flips are served at these thresholds.
    int off = 0;
    for (const auto& [split, c] : s["unguarded"]["flips_by_split"].items()) off += c["hits"].get<int>();
    EXPECT_GT(off, 178) << s.dump(2);
  }
  EXPECT_EQ(sc[1]["guarded"]["flips_by_split"]["dev"]["hits"], 0) << sc[1].dump(2);
}

TEST(EvalFlipsCli, UsageErrors) {
  e2e::CommandResult none = e2e::RunHotline("eval flips");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("--train"), std::string::npos) << none.err;
  e2e::CommandResult bad = e2e::RunHotline("eval flips --examples-per-intent 1 --train " + kTrain);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--examples-per-intent: '1'"), std::string::npos) << bad.err;
  e2e::CommandResult missing =
      e2e::RunHotline("eval flips --set /nonexistent/flips.tsv --train " + kTrain);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("/nonexistent/flips.tsv"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace hotline
