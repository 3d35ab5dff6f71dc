// Calibration helpers: choose an acceptance threshold on a score so that accepted answers reach
// a target precision, map raw scores to calibrated probabilities (isotonic regression), and trace
// precision-coverage curves.
//
// All functions are pure and take (score, correct) observations from held-out data: cross-
// validation folds of a training split, never the test split.
#pragma once

#include <cstddef>
#include <vector>

namespace hotline::answer {

struct ScoredOutcome {
  double score = 0;      // higher = more confident
  bool correct = false;  // the answer given at this score was right
};

// The lowest threshold t such that precision over the outcomes with score >= t is >= `target`
// (the cut with the most coverage that meets the target). When no
// cut reaches the target, returns +infinity (accept nothing). `min_accepted` outcomes must lie
// above the threshold before a cut counts (guards against 1-of-1 = 100 %).
double ThresholdForPrecision(std::vector<ScoredOutcome> outcomes, double target,
                             size_t min_accepted = 20);

// One-sided upper confidence bound on a rate observed as `events` of `trials` (Wilson score
// interval): the true rate is below it with probability `confidence` (0.5 < confidence < 1).
// With no trials, 1. Example: 0 of 100 at 0.95 gives 0.026; 0 of 300 gives 0.0089.
double RateUpperBound(size_t events, size_t trials, double confidence);

// The lowest threshold t such that the upper confidence bound (RateUpperBound) on the share of
// wrong outcomes among those with score >= t is <= `max_wrong_rate`: what the evidence supports,
// not a point estimate, so a few lucky outcomes cannot carry a low threshold. +infinity when no
// cut has enough evidence (thin data).
double ThresholdForWrongRateBound(std::vector<ScoredOutcome> outcomes, double max_wrong_rate,
                                  double confidence);

struct CurvePoint {
  double threshold = 0;
  double coverage = 0;   // accepted / all outcomes
  double precision = 0;  // correct / accepted (1 when nothing accepted)
  size_t accepted = 0;
};

// Precision-coverage points at `points` evenly spaced coverage levels (by score rank).
std::vector<CurvePoint> PrecisionCoverageCurve(std::vector<ScoredOutcome> outcomes,
                                               size_t points = 20);

// Monotone map from score to probability of being correct, fitted by pool-adjacent-violators.
class IsotonicCalibrator {
 public:
  void Fit(std::vector<ScoredOutcome> outcomes);
  // Probability that an answer with this score is right; 0 before Fit or with no data.
  double Map(double score) const;
  bool fitted() const { return !xs_.empty(); }
  const std::vector<double>& xs() const { return xs_; }
  const std::vector<double>& ys() const { return ys_; }

 private:
  std::vector<double> xs_;  // block upper score bounds, ascending
  std::vector<double> ys_;  // block mean correctness, non-decreasing
};

}  // namespace hotline::answer
