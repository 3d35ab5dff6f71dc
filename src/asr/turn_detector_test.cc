#include "asr/turn_detector.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace hotline::asr {
namespace {

std::shared_ptr<const TurnEndModel> Model() {
  auto m =
      TurnEndModel::Train({"can you send me a copy of my invoice", "when will i receive my refund",
                           "where is my refund", "how do i cancel my order", "cancel my order",
                           "i want a copy of my invoice"},
                          {.order = 3, .min_count = 1, .alpha = 1.0});
  EXPECT_TRUE(m.ok());
  return std::make_shared<TurnEndModel>(std::move(*m));
}

TEST(TurnDetectorConfig, DefaultsAreValidAndBadValuesSayWhatToFix) {
  TurnDetectorConfig c;
  EXPECT_TRUE(c.Validate().ok());
  c.min_wait_ms = 2000;
  EXPECT_FALSE(c.Validate().ok());
  c = {};
  c.center_wait_ms = c.max_wait_ms + 1;
  EXPECT_FALSE(c.Validate().ok());
  c = {};
  c.lexical_weight = std::nan("");
  EXPECT_FALSE(c.Validate().ok());
}

TEST(TurnDetector, WaitsLongInsideAQuestionAndBrieflyAtItsEnd) {
  TurnDetectorConfig c;
  c.open_word_ms = 0;  // no recognizer lag in this test
  TurnDetector d(c, Model());
  d.OnPartial("can you send me a copy of", 1000);
  const int inside = d.WaitMs(2000);
  d.OnPartial("can you send me a copy of my invoice", 3000);
  const int end = d.WaitMs(4000);
  EXPECT_GE(inside, 1000);
  EXPECT_LE(inside, c.max_wait_ms);
  EXPECT_LE(end, 400);
  EXPECT_GE(end, c.min_wait_ms);
  EXPECT_LT(end, inside);
}

TEST(TurnDetector, AnOpenWordWaitsLonger) {
  TurnDetectorConfig c;
  c.open_word_ms = 200;
  TurnDetector d(c, Model());
  d.OnPartial("where is my refund", 1000);
  const TurnEvidence open = d.Evidence(1100);
  const TurnEvidence settled = d.Evidence(1300);
  EXPECT_TRUE(open.open_word);
  EXPECT_FALSE(settled.open_word);
  EXPECT_GT(open.wait_ms, settled.wait_ms);
  // Nothing recognized yet is an open word too.
  d.Reset();
  EXPECT_TRUE(d.Evidence(5000).open_word);
}

TEST(TurnDetector, WaitStaysWithinItsBounds) {
  TurnDetectorConfig c;
  c.ms_per_logit = 5000;
  for (double p : {1e-4, 0.01, 0.5, 0.99, 1 - 1e-4}) {
    const TurnEvidence e = TurnDetector::Decide(c, p, false, 10000, {});
    EXPECT_GE(e.wait_ms, c.min_wait_ms);
    EXPECT_LE(e.wait_ms, c.max_wait_ms);
  }
  // Monotone in the words' end probability.
  c = {};
  int last = 1 << 30;
  for (double p : {0.001, 0.01, 0.1, 0.5, 0.9, 0.99}) {
    const int w = TurnDetector::Decide(c, p, false, 10000, {}).wait_ms;
    EXPECT_LE(w, last);
    last = w;
  }
}

TEST(TurnDetector, ProsodyWeightsMoveTheWait) {
  TurnDetectorConfig c;
  c.pitch_fall_weight = 0.5;
  audio::ProsodyFeatures falling;
  falling.valid = true;
  falling.pitch_fall_st = 4;
  audio::ProsodyFeatures rising = falling;
  rising.pitch_fall_st = -4;
  EXPECT_LT(TurnDetector::Decide(c, 0.5, false, 10000, falling).wait_ms,
            TurnDetector::Decide(c, 0.5, false, 10000, rising).wait_ms);
}

}  // namespace
}  // namespace hotline::asr
