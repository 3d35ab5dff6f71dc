#include "answer/understand/calibration.h"

#include <gtest/gtest.h>

#include <cmath>

namespace hotline::answer {
namespace {

TEST(Calibration, ThresholdMeetsTargetPrecision) {
  // Scores 1..100; the answers with score <= 10 are wrong.
  std::vector<ScoredOutcome> o;
  for (int s = 1; s <= 100; ++s) o.push_back({static_cast<double>(s), s > 10});
  double t = ThresholdForPrecision(o, 0.99, 5);
  EXPECT_EQ(t, 11.0);
  // With 95 % allowed, some wrong answers may be accepted: the threshold moves down.
  EXPECT_LT(ThresholdForPrecision(o, 0.95, 5), 11.0);
}

TEST(Calibration, UnreachableTargetAcceptsNothing) {
  std::vector<ScoredOutcome> o = {{0.9, false}, {0.8, true}, {0.7, false}};
  EXPECT_TRUE(std::isinf(ThresholdForPrecision(o, 0.99, 1)));
  // Too few accepted outcomes above a cut are not trusted.
  std::vector<ScoredOutcome> few = {{0.9, true}, {0.1, false}};
  EXPECT_TRUE(std::isinf(ThresholdForPrecision(few, 0.99, 5)));
}

TEST(Calibration, CurveIsOrderedByCoverage) {
  std::vector<ScoredOutcome> o;
  for (int s = 0; s < 200; ++s) o.push_back({static_cast<double>(s), s % 7 != 0 || s > 150});
  auto curve = PrecisionCoverageCurve(o, 10);
  ASSERT_EQ(curve.size(), 10u);
  for (size_t i = 1; i < curve.size(); ++i) EXPECT_GT(curve[i].coverage, curve[i - 1].coverage);
  EXPECT_DOUBLE_EQ(curve.back().coverage, 1.0);
  EXPECT_DOUBLE_EQ(curve.front().precision, 1.0);  // the top scores are all right
}

TEST(Calibration, IsotonicIsMonotoneAndMatchesRates) {
  std::vector<ScoredOutcome> o;
  for (int i = 0; i < 100; ++i) o.push_back({0.2, i < 20});  // 20 % right
  for (int i = 0; i < 100; ++i) o.push_back({0.8, i < 90});  // 90 % right
  IsotonicCalibrator c;
  c.Fit(o);
  EXPECT_NEAR(c.Map(0.2), 0.2, 1e-9);
  EXPECT_NEAR(c.Map(0.8), 0.9, 1e-9);
  EXPECT_LE(c.Map(0.1), c.Map(0.5));
  EXPECT_LE(c.Map(0.5), c.Map(0.9));
  IsotonicCalibrator empty;
  EXPECT_EQ(empty.Map(0.5), 0.0);
}

}  // namespace
}  // namespace hotline::answer

namespace hotline::answer {
namespace {

TEST(Calibration, RateUpperBoundIsWilsonsOneSidedBound) {
  EXPECT_NEAR(RateUpperBound(0, 100, 0.95), 0.0264, 0.0005);
  EXPECT_NEAR(RateUpperBound(0, 300, 0.95), 0.0089, 0.0005);
  EXPECT_NEAR(RateUpperBound(5, 1000, 0.95), 0.0103, 0.0005);
  EXPECT_NEAR(RateUpperBound(3, 10, 0.5), 0.3, 1e-6);  // z = 0: the observed rate
  EXPECT_DOUBLE_EQ(RateUpperBound(0, 0, 0.95), 1.0);
  EXPECT_GT(RateUpperBound(1, 10, 0.99), RateUpperBound(1, 10, 0.95));
}

TEST(Calibration, WrongRateBoundNeedsEvidence) {
  // 50 right answers at scores 1.0 .. 0.51: the point estimate would accept them all.
  std::vector<ScoredOutcome> few;
  for (int i = 0; i < 50; ++i) few.push_back({1.0 - i * 0.01, true});
  EXPECT_TRUE(std::isinf(ThresholdForWrongRateBound(few, 0.01, 0.95)));
  EXPECT_DOUBLE_EQ(ThresholdForWrongRateBound(few, 0.1, 0.95), 0.51);
  // 1,000 right then wrong ones below 0.5: the cut stops where the wrong ones begin to count.
  std::vector<ScoredOutcome> many;
  for (int i = 0; i < 1000; ++i) many.push_back({0.9 - i * 0.0004, true});  // 0.9 .. 0.5004
  for (int i = 0; i < 100; ++i) many.push_back({0.5 - i * 0.001, false});
  const double t = ThresholdForWrongRateBound(many, 0.01, 0.95);
  EXPECT_GT(t, 0.49);
  EXPECT_LE(t, 0.5004);
}

}  // namespace
}  // namespace hotline::answer
