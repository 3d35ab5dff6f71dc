// Offline evaluation of the answer cache tiers on labelled question sets (`hotline eval cache`).
//
// Seeds the tiers from a training split, as a deployment would from past calls:
//   l1_intent    the intent classifier trained on the split (threshold calibrated on its folds);
//                each intent's template answers for it;
//   l2_semantic  every training question stored with its intent's answer; similarity threshold
//                calibrated leave-one-out on the split to the target false-hit rate;
//   l3_exact     exact normalized-text matches of training questions;
//   hotline      the tiers chained as served: L1, then L2, then L3;
//   simhash      the baseline: 64-bit SimHash nearest neighbour within a Hamming distance
//                calibrated the same way as L2.
// Then it scores every test question: coverage (share answered), precision (share of answers
// that gave the question's own intent), false hits on negatives (share of out-of-scope questions
// answered at all), and per-lookup latency (including normalization and featurization).
// Nothing is tuned on the test split.
//
// Thread-safety: RunCacheEval is self-contained; it trains on `threads` threads and times
// lookups on the calling thread.
#pragma once

#include <string>
#include <vector>

#include "answer/cache/semantic_cache.h"
#include "answer/eval/eval_data.h"
#include "answer/understand/calibration.h"
#include "answer/understand/intent_classifier.h"

namespace hotline::answer {

struct CacheEvalOptions {
  IntentClassifierConfig intent;
  SemanticCacheConfig semantic;
  double simhash_target_false_hit_rate = 0.01;
  int curve_points = 20;
};

struct MethodReport {
  std::string name;
  size_t answered = 0;
  size_t correct = 0;
  double coverage = 0;
  double precision = 1;
  size_t negatives_answered = 0;
  double false_hits_on_negatives = 0;
  double lookup_p50_us = 0;
  double lookup_p99_us = 0;
  std::vector<CurvePoint> curve;  // precision-coverage as the method's threshold varies
};

struct CacheEvalReport {
  size_t train_examples = 0, test_examples = 0, negatives = 0, intents = 0;
  double training_seconds = 0;
  IntentCalibrationReport intent_calibration;  // outcomes cleared
  double intent_target_precision = 0;
  SemanticCalibration semantic_calibration;
  int simhash_max_distance = -1;
  std::vector<MethodReport> methods;
};

Result<CacheEvalReport> RunCacheEval(const std::vector<LabelledText>& train,
                                     const std::vector<LabelledText>& test,
                                     const std::vector<std::string>& negatives,
                                     const CacheEvalOptions& options);

// The report as JSON text (see docs/answer-understanding.md for the fields).
std::string CacheEvalReportJson(const CacheEvalReport& report);
// A short human-readable table.
std::string CacheEvalReportTable(const CacheEvalReport& report);

}  // namespace hotline::answer
