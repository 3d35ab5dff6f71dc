#include "answer/generate/llm_gate.h"

#include <gtest/gtest.h>

#include <limits>

namespace hotline::answer {
namespace {

LlmGateConfig Gate(double asr, double top_two) {
  LlmGateConfig c;
  c.min_asr_confidence = asr;
  c.min_intent_top_two = top_two;
  return c;
}

LlmGateInput Input(std::optional<double> asr, std::optional<double> top_two) {
  LlmGateInput in;
  in.asr_confidence = asr;
  in.intent_top_two = top_two;
  return in;
}

TEST(LlmGate, PassesWhenEverySignalReachesItsMinimum) {
  const LlmGateDecision d = DecideLlmGate(Gate(0.2, 0.1), Input(0.2, 0.1));  // equal passes
  EXPECT_TRUE(d.pass);
  EXPECT_EQ(d.reason, LlmGateReason::kPass);
  EXPECT_EQ(LlmGateReasonName(d.reason), "pass");
  EXPECT_TRUE(DecideLlmGate(Gate(0.2, 0.1), Input(0.9, 0.8)).pass);
}

TEST(LlmGate, BlocksALowIntentTopTwo) {
  const LlmGateDecision d = DecideLlmGate(Gate(0.2, 0.1), Input(0.9, 0.099));
  EXPECT_FALSE(d.pass);
  EXPECT_EQ(d.reason, LlmGateReason::kLowIntentTopTwo);
  EXPECT_EQ(LlmGateReasonName(d.reason), "low_intent_top_two");
}

TEST(LlmGate, BlocksALowRecognizerConfidenceAndNamesItFirst) {
  LlmGateDecision d = DecideLlmGate(Gate(0.2, 0.1), Input(0.19, 0.5));
  EXPECT_FALSE(d.pass);
  EXPECT_EQ(d.reason, LlmGateReason::kLowAsrConfidence);
  EXPECT_EQ(LlmGateReasonName(d.reason), "low_asr_confidence");
  // Both low: the recognizer is named (what was heard decides what the intent could be).
  d = DecideLlmGate(Gate(0.2, 0.1), Input(0.0, 0.0));
  EXPECT_EQ(d.reason, LlmGateReason::kLowAsrConfidence);
}

TEST(LlmGate, AMissingSignalSkipsItsCheck) {
  // A typed turn has no recognizer confidence; a stack without a classifier has no intent probabilities.
  EXPECT_TRUE(DecideLlmGate(Gate(0.9, 0.1), Input(std::nullopt, 0.5)).pass);
  EXPECT_TRUE(DecideLlmGate(Gate(0.2, 0.9), Input(0.5, std::nullopt)).pass);
  EXPECT_TRUE(DecideLlmGate(Gate(0.9, 0.9), Input(std::nullopt, std::nullopt)).pass);
  EXPECT_EQ(DecideLlmGate(Gate(0.9, 0.1), Input(std::nullopt, 0.05)).reason,
            LlmGateReason::kLowIntentTopTwo);
}

TEST(LlmGate, AZeroMinimumOrADisabledGateChecksNothing) {
  EXPECT_TRUE(DecideLlmGate(Gate(0, 0), Input(0.0, 0.0)).pass);
  EXPECT_TRUE(DecideLlmGate(Gate(0, 0.1), Input(0.0, 0.2)).pass);
  LlmGateConfig off = Gate(0.5, 0.5);
  off.enabled = false;
  EXPECT_TRUE(DecideLlmGate(off, Input(0.0, 0.0)).pass);
}

TEST(LlmGate, ANonNumberIsNoConfidence) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(DecideLlmGate(Gate(0.2, 0.1), Input(nan, 0.5)).reason,
            LlmGateReason::kLowAsrConfidence);
  EXPECT_EQ(DecideLlmGate(Gate(0.2, 0.1), Input(0.5, nan)).reason, LlmGateReason::kLowIntentTopTwo);
}

TEST(LlmGate, ConfigValidationNamesTheKey) {
  EXPECT_TRUE(Gate(0, 0).Validate().ok());
  EXPECT_TRUE(Gate(1, 1).Validate().ok());
  Status s = Gate(1.5, 0).Validate();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("min_asr_confidence"), std::string::npos) << s.message();
  s = Gate(0, -0.1).Validate();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("min_intent_top_two"), std::string::npos) << s.message();
  EXPECT_FALSE(Gate(0, std::numeric_limits<double>::quiet_NaN()).Validate().ok());
}

}  // namespace
}  // namespace hotline::answer
