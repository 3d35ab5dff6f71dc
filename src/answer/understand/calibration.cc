#include "answer/understand/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hotline::answer {
namespace {

void SortDescending(std::vector<ScoredOutcome>& v) {
  std::stable_sort(v.begin(), v.end(),
                   [](const ScoredOutcome& a, const ScoredOutcome& b) { return a.score > b.score; });
}

}  // namespace

double ThresholdForPrecision(std::vector<ScoredOutcome> outcomes, double target,
                             size_t min_accepted) {
  SortDescending(outcomes);
  // The deepest cut (most coverage) whose accepted set meets the target. Precision is not
  // monotone in the cut, so every cut is checked; the chosen cut's own precision meets the target.
  double best = std::numeric_limits<double>::infinity();
  size_t correct = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    correct += outcomes[i].correct ? 1 : 0;
    bool cut_here = i + 1 == outcomes.size() || outcomes[i + 1].score < outcomes[i].score;
    if (!cut_here) continue;
    size_t accepted = i + 1;
    double precision = static_cast<double>(correct) / static_cast<double>(accepted);
    if (accepted < min_accepted) continue;
    if (precision >= target) best = outcomes[i].score;
  }
  return best;
}

double RateUpperBound(size_t events, size_t trials, double confidence) {
  if (trials == 0) return 1.0;
  // z with P(Z > z) = 1 - confidence, by bisection on the normal tail (erfc is exact enough).
  const double tail = 1.0 - std::clamp(confidence, 0.5, 1.0 - 1e-12);
  double lo = 0, hi = 40;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (0.5 * std::erfc(mid / std::sqrt(2.0)) > tail ? lo : hi) = mid;
  }
  const double z = (lo + hi) / 2;
  const double n = static_cast<double>(trials);
  const double p = static_cast<double>(events) / n;
  const double z2 = z * z;
  const double centre = p + z2 / (2 * n);
  const double spread = z * std::sqrt(p * (1 - p) / n + z2 / (4 * n * n));
  return std::min(1.0, (centre + spread) / (1 + z2 / n));
}

double ThresholdForWrongRateBound(std::vector<ScoredOutcome> outcomes, double max_wrong_rate,
                                  double confidence) {
  SortDescending(outcomes);
  double best = std::numeric_limits<double>::infinity();
  size_t wrong = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    wrong += outcomes[i].correct ? 0 : 1;
    const bool cut_here = i + 1 == outcomes.size() || outcomes[i + 1].score < outcomes[i].score;
    if (!cut_here) continue;
    if (RateUpperBound(wrong, i + 1, confidence) <= max_wrong_rate) best = outcomes[i].score;
  }
  return best;
}

std::vector<CurvePoint> PrecisionCoverageCurve(std::vector<ScoredOutcome> outcomes,
                                               size_t points) {
  std::vector<CurvePoint> curve;
  if (outcomes.empty() || points == 0) return curve;
  SortDescending(outcomes);
  std::vector<size_t> cum(outcomes.size() + 1, 0);
  for (size_t i = 0; i < outcomes.size(); ++i) cum[i + 1] = cum[i] + (outcomes[i].correct ? 1 : 0);
  for (size_t p = 1; p <= points; ++p) {
    size_t k = (outcomes.size() * p + points - 1) / points;
    k = std::clamp<size_t>(k, 1, outcomes.size());
    // Extend to include ties with the last accepted score.
    while (k < outcomes.size() && outcomes[k].score == outcomes[k - 1].score) ++k;
    CurvePoint c;
    c.threshold = outcomes[k - 1].score;
    c.accepted = k;
    c.coverage = static_cast<double>(k) / static_cast<double>(outcomes.size());
    c.precision = static_cast<double>(cum[k]) / static_cast<double>(k);
    if (!curve.empty() && curve.back().accepted == k) continue;
    curve.push_back(c);
  }
  return curve;
}

void IsotonicCalibrator::Fit(std::vector<ScoredOutcome> outcomes) {
  xs_.clear();
  ys_.clear();
  std::stable_sort(outcomes.begin(), outcomes.end(),
                   [](const ScoredOutcome& a, const ScoredOutcome& b) { return a.score < b.score; });
  struct Block {
    double sum;
    double count;
    double hi;
  };
  std::vector<Block> blocks;
  for (const ScoredOutcome& o : outcomes) {
    blocks.push_back({o.correct ? 1.0 : 0.0, 1.0, o.score});
    while (blocks.size() >= 2) {
      Block& b = blocks[blocks.size() - 1];
      Block& a = blocks[blocks.size() - 2];
      if (a.sum / a.count <= b.sum / b.count && a.hi != b.hi) break;
      a.sum += b.sum;
      a.count += b.count;
      a.hi = b.hi;
      blocks.pop_back();
    }
  }
  for (const Block& b : blocks) {
    xs_.push_back(b.hi);
    ys_.push_back(b.sum / b.count);
  }
}

double IsotonicCalibrator::Map(double score) const {
  if (xs_.empty()) return 0;
  auto it = std::lower_bound(xs_.begin(), xs_.end(), score);
  if (it == xs_.end()) return ys_.back();
  return ys_[static_cast<size_t>(it - xs_.begin())];
}

}  // namespace hotline::answer
