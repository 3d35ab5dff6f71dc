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
