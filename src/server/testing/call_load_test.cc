#include "server/testing/call_load.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "tts/synthesizer.h"

namespace hotline::server::testing {
namespace {

std::string WriteTemp(const std::string& content) {
  static int n = 0;
  const std::string path =
      "/tmp/call_load_test_" + std::to_string(getpid()) + "_" + std::to_string(n++) + ".txt";
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

TEST(CallLoad, ReadsQuestionsSkippingBlanksAndComments) {
  const std::string path =
      WriteTemp("# questions\n\nhow do i get a refund\r\n  i forgot my password  \n");
  auto q = ReadCallerQuestions(path);
  std::remove(path.c_str());
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_EQ(q->size(), 2u);
  EXPECT_EQ((*q)[0], "how do i get a refund");
  EXPECT_EQ((*q)[1], "i forgot my password");
}

TEST(CallLoad, RejectsBadQuestionFiles) {
  EXPECT_FALSE(ReadCallerQuestions("/nonexistent/questions.txt").ok());
  for (const std::string& content :
       {std::string("# only a comment\n\n"), std::string(301, 'a') + "\n",
        std::string("bad\x01question\n")}) {
    const std::string path = WriteTemp(content);
    auto q = ReadCallerQuestions(path);
    std::remove(path.c_str());
    EXPECT_FALSE(q.ok()) << content.size();
  }
  std::string many;
  for (int i = 0; i < 1001; ++i) many += "question " + std::to_string(i) + "\n";
  const std::string path = WriteTemp(many);
  auto q = ReadCallerQuestions(path);
  std::remove(path.c_str());
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("1,000"), std::string::npos) << q.status();
}

TEST(CallLoad, PercentileInterpolates) {
  EXPECT_TRUE(std::isnan(Percentile({}, 50)));
  EXPECT_DOUBLE_EQ(Percentile({7}, 99), 7);
  EXPECT_DOUBLE_EQ(Percentile({40, 10, 30, 20}, 50), 25);
  EXPECT_DOUBLE_EQ(Percentile({40, 10, 30, 20}, 100), 40);
  EXPECT_DOUBLE_EQ(Percentile({40, 10, 30, 20}, 0), 10);
}

TEST(CallLoad, RssTrendFlatAndGrowing) {
  std::vector<RssSample> flat, growing;
  for (int i = 0; i <= 40; ++i) {
    const double t = i * 1.5;
    // A ramp (excluded by the window) and then noise around 200 MiB.
    flat.push_back({t, t < 10 ? 100 + 10 * t : 200 + ((i % 2) ? 0.5 : -0.5), NAN, 4});
    growing.push_back({t, 300 + 2.0 * t, NAN, 4});  // 120 MiB per minute
  }
  auto f = AnalyzeRssTrend(flat, 10);
  ASSERT_TRUE(f.has_value());
  EXPECT_GE(f->window_start_s, 10);
  EXPECT_EQ(f->window_end_s, 60);
  EXPECT_NEAR(f->first_quartile_mb, 200, 0.5);
  EXPECT_NEAR(f->growth_mb, 0, 0.5);
  EXPECT_LT(std::abs(f->slope_mb_per_min), 1.0);
  auto g = AnalyzeRssTrend(growing, 0);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->samples, 41);
  EXPECT_NEAR(g->slope_mb_per_min, 120, 1e-6);
  EXPECT_GT(g->growth_mb, 80);  // quarters' means ~ 45 s apart at 2 MiB/s
  EXPECT_NEAR(g->late_slope_mb_per_min, 120, 1e-6);
  // A one-off step early in the window, then flat: the whole-window slope sees the step, the
  // later half does not.
  std::vector<RssSample> step;
  for (int i = 0; i <= 40; ++i) step.push_back({i * 1.5, i < 10 ? 100.0 : 110.0, NAN, 4});
  auto st = AnalyzeRssTrend(step, 0);
  ASSERT_TRUE(st.has_value());
  EXPECT_GT(st->slope_mb_per_min, 5);
  EXPECT_EQ(st->late_slope_mb_per_min, 0);
  // Too few samples in the window, or no time between them: no verdict.
  EXPECT_FALSE(AnalyzeRssTrend(growing, 56).has_value());
  EXPECT_FALSE(AnalyzeRssTrend({{5, 1, NAN, 0}, {5, 2, NAN, 0}, {5, 3, NAN, 0}, {5, 4, NAN, 0}}, 0).has_value());
}

TEST(CallLoad, SynthesizedQuestionEndsOnItsLastAudibleFrame) {
  tts::TtsConfig config;
  config.flite.voice = "cmu_us_rms";
  auto synth = tts::CreateSynthesizer(config);
  ASSERT_TRUE(synth.ok()) << synth.status();
  auto q = SynthesizeCallerQuestion(**synth, BuiltInCallerQuestions().front());
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->speech.size() % 160, 0u);   // whole 20 ms frames
  EXPECT_GT(q->speech.size(), 160u * 25);  // more than half a second of speech
  EXPECT_LT(q->speech.size(), 8000u * 5);  // a short question, not minutes
}

TEST(CallLoad, UnreachableServerIsAConnectFailure) {
  std::vector<CallerQuestion> questions = {{"q", std::string(1600, '\x10'), ""}};
  CallScript script;
  script.port = 1;  // nothing listens on port 1 of loopback
  script.questions = &questions;
  CallOutcome outcome = RunScriptedCall(script);
  EXPECT_FALSE(outcome.connected);
  EXPECT_NE(outcome.failure.find("connect"), std::string::npos) << outcome.failure;
  EXPECT_TRUE(outcome.turns.empty());
}

}  // namespace
}  // namespace hotline::server::testing
