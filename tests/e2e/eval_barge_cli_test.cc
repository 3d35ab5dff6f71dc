// `hotline eval barge` on one report voice: backchannels, coughs and short interruptions over the
// agent's reply, through the call's Listener and recognizer, with the duration-only rule and the
// configured one. The configured rule lets more backchannels by, never stops the agent for a
// cough, and still stops it for most interruptions. Runs the binary: build `hotline` first.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "common/build_paths.h"
#include "run_hotline.h"

namespace hotline {
namespace {

TEST(EvalBargeCli, WordsLetBackchannelsByAndInterruptionsStop) {
  const std::string cache = ::testing::TempDir() + "/eval_barge_cache_" + std::to_string(getpid());
  e2e::CommandResult r = e2e::RunHotline(
      "eval barge --json --kinds backchannel,cough,interruption --tuning-voices '' "
      "--report-voices awb --threads 2 --data " +
      std::string(HOTLINE_SHARED_DATA_DIR) + " --cache " + cache);
  std::filesystem::remove_all(cache);
  ASSERT_EQ(r.exit_code, 0) << r.all();
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.all();
  EXPECT_EQ(j["trials"], 13 + 2 + 10);
  const nlohmann::json& base = j["rules"]["duration_only"];
  const nlohmann::json& conf = j["rules"]["configured"];
  ASSERT_TRUE(conf.contains("report/backchannels")) << conf.dump();
  EXPECT_GT(conf["report/backchannels"]["ignored_share"].get<double>(),
            base["report/backchannels"]["ignored_share"].get<double>())
      << j.dump();
  EXPECT_EQ(conf["report/kind/cough"]["stopped"], 0) << j.dump();
  EXPECT_GE(conf["report/kind/interruption"]["stopped"].get<int>(), 5) << j.dump();
  // The agent falls silent within the pause stage when it is stopped.
  EXPECT_LE(conf["report/interruptions"]["quiet_p50_ms"].get<int>(), 300) << j.dump();
}

TEST(EvalBargeCli, UsageErrors) {
  e2e::CommandResult r = e2e::RunHotline("eval barge --kinds shouting");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.all().find("unknown kind 'shouting'"), std::string::npos) << r.all();
  r = e2e::RunHotline("eval barge --report-voices kal");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.all().find("the agent's"), std::string::npos) << r.all();
}

}  // namespace
}  // namespace hotline
