// `hotline engine bench --concurrency` on a random-weight model of the tiny shape (made by
// `hotline engine gen-random`): every level is measured with its one-pass ceiling and its ratio
// to one sequence, and the prefix test reuses the whole system prompt while the first request
// still holds it and after it ended. Runs the binary: build `hotline` first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "run_hotline.h"

namespace hotline {
namespace {

class EngineBenchCli : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = ::testing::TempDir() + "/engine_bench_" + std::to_string(getpid()) + ".gguf";
    auto made =
        e2e::RunHotline("engine gen-random --arch qwen2 --shape tiny --type q4_0 -o " + model_);
    ASSERT_EQ(made.exit_code, 0) << made.all();
  }
  void TearDown() override { std::filesystem::remove(model_); }
  std::string model_;
};

TEST_F(EngineBenchCli, MeasuresEveryLevelAndThePrefixCache) {
  e2e::CommandResult r = e2e::RunHotline("engine bench --json -m " + model_ +
                                         " --concurrency 1,4 --gen-tokens 512 --prefix-tokens 64");
  ASSERT_EQ(r.exit_code, 0) << r.all();
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.all();
  ASSERT_EQ(j["decode"].size(), 2u) << r.out;
  EXPECT_EQ(j["decode"][0]["concurrency"], 1);
  EXPECT_EQ(j["decode"][1]["concurrency"], 4);
  EXPECT_DOUBLE_EQ(j["decode"][0]["ratio_to_1"].get<double>(), 1.0);
  for (const auto& p : j["decode"]) {
    EXPECT_GT(p["decode_tokens_per_s"].get<double>(), 0) << p.dump();
    EXPECT_GT(p["one_pass_tokens_per_s"].get<double>(), 0) << p.dump();
    EXPECT_GT(p["ratio_to_1"].get<double>(), 0) << p.dump();
  }
  const auto& prefix = j["prefix"];
  EXPECT_EQ(prefix["system_tokens"], 64);
  EXPECT_EQ(prefix["cached_tokens_busy"], 64);  // four whole 16-token blocks
  EXPECT_EQ(prefix["cached_tokens_idle"], 64);
  // The second request shares the first one's blocks: only its own tail takes new ones.
  EXPECT_GT(prefix["kv_blocks_a_and_b"].get<int>(), prefix["kv_blocks_a"].get<int>());
  EXPECT_LE(prefix["kv_blocks_a_and_b"].get<int>(), prefix["kv_blocks_a"].get<int>() + 2);
}

TEST_F(EngineBenchCli, UsageErrorsSayWhatIsWrong) {
  e2e::CommandResult r = e2e::RunHotline("engine bench --concurrency 1,x -m " + model_);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.all().find("--concurrency wants numbers"), std::string::npos) << r.all();
  r = e2e::RunHotline("engine bench --concurrency 1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.all().find("missing -m"), std::string::npos) << r.all();
}

}  // namespace
}  // namespace hotline
