#include "asr/word_confidence.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace hotline::asr {
namespace {

TEST(FramePosteriorConfidences, AddsArcsOfTheSameWordThatDifferOnlyInTheirBoundaries) {
  // "bill" as three arcs a frame apart: each alone looks doubtful, together they are certain.
  std::vector<LatticeArc> arcs = {
      {"bill", 10, 40, 0.3}, {"bill", 11, 40, 0.3}, {"bill", 10, 41, 0.3}, {"pill", 10, 40, 0.1}};
  std::vector<HypothesisWord> hyp = {{"bill", 10, 40}};
  std::vector<float> c = FramePosteriorConfidences(arcs, hyp);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_NEAR(c[0], 0.9, 1e-6);
}

TEST(FramePosteriorConfidences, TakesTheBestFrameOfTheSpan) {
  // Frames 0-4 carry 0.2 + 0.5, frames 5-9 only 0.5: the best frame counts.
  std::vector<LatticeArc> arcs = {{"pay", 0, 9, 0.5}, {"pay", 0, 4, 0.2}};
  std::vector<HypothesisWord> hyp = {{"pay", 0, 9}};
  EXPECT_NEAR(FramePosteriorConfidences(arcs, hyp)[0], 0.7, 1e-6);
}

TEST(FramePosteriorConfidences, IgnoresOtherWordsAndArcsOutsideTheSpan) {
  std::vector<LatticeArc> arcs = {{"card", 0, 20, 0.4}, {"cart", 0, 20, 0.6}, {"card", 30, 50, 0.9}};
  std::vector<HypothesisWord> hyp = {{"card", 0, 20}, {"lost", 21, 29}};
  std::vector<float> c = FramePosteriorConfidences(arcs, hyp);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_NEAR(c[0], 0.4, 1e-6);
  EXPECT_EQ(c[1], 0.0f);  // no arc of its own
}

TEST(FramePosteriorConfidences, CapsAtOneAndRejectsBadInput) {
  std::vector<LatticeArc> arcs = {{"yes", 0, 5, 0.8},
                                  {"yes", 0, 5, 0.7},
                                  {"yes", 0, 5, -1.0},
                                  {"yes", 0, 5, std::numeric_limits<double>::quiet_NaN()}};
  std::vector<HypothesisWord> hyp = {{"yes", 0, 5}, {"yes", 6, 2}, {"yes", -3, 2}};
  std::vector<float> c = FramePosteriorConfidences(arcs, hyp);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0], 1.0f);
  EXPECT_EQ(c[1], 0.0f);  // inverted span
  EXPECT_EQ(c[2], 0.0f);  // negative start
  EXPECT_TRUE(FramePosteriorConfidences(arcs, {}).empty());
}

TEST(UtteranceConfidence, IsTheMeanOfItsWords) {
  std::vector<float> w = {1.0f, 0.5f, 0.0f};
  EXPECT_NEAR(UtteranceConfidence(w), 0.5, 1e-6);
  EXPECT_EQ(UtteranceConfidence({}), 0.0f);
}

}  // namespace
}  // namespace hotline::asr
