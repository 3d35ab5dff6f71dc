// Intent classification with calibrated confidence and a reject option.
//
// A softmax regression over hashed word uni/bigrams and character 3-5-grams (features.h) is
// trained on labelled questions. Its acceptance score is the probability margin between the best
// and the runner-up intent, capped by the similarity to the nearest training question (so that
// questions unlike any seen in training, typically out of scope, are rejected). The acceptance threshold is calibrated on k-fold cross-validation of
// the TRAINING examples (each fold's model scores the questions it did not see) to reach
// `target_precision`; the same held-out scores fit an isotonic map from margin to the
// probability of being right, which Predict reports as `confidence`. Questions below the
// threshold (including out-of-scope ones, which get small margins) are rejected: the L1 cache
// falls through to the next tier.
//
// Training runs the k fold models and the final model in parallel on `threads` threads and is
// deterministic for a given seed and data. Predict is const, thread-safe, and allocates only
// small per-call vectors; it takes NormalizeText output (normalize.h).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "answer/cache/semantic_index.h"
#include "answer/understand/calibration.h"
#include "answer/understand/features.h"
#include "answer/understand/intent_linear_model.h"
#include "common/status.h"

namespace hotline::answer {

struct IntentClassifierConfig {
  FeatureConfig features;
  // SGD epochs: more fit the training set tighter (diminishing returns after ~8) and cost time
  // linearly.
  int epochs = 8;
  // Initial SGD step (inputs are L2-normalized); too large oscillates, too small underfits.
  double learning_rate = 1.0;
  // L2 weight decay per step: larger = smoother, less confident model.
  double l2 = 1e-6;
  // Folds for calibrating the threshold: more folds = models closer to the final one (better
  // calibrated) but proportionally more training time.
  int calibration_folds = 5;
  // Precision the acceptance threshold aims for on held-out folds. Higher = fewer but safer
  // answers from the intent tier.
  double target_precision = 0.994;
  // Cuts with fewer accepted held-out questions are not trusted when picking the threshold.
  int min_calibration_accepted = 50;
  // Accept only when the most similar training question (cosine over the same features) has the
  // predicted intent too. Costs a neighbour search per question (tens of microseconds) and some
  // coverage; buys precision, above all on out-of-scope questions.
  bool require_neighbour_agreement = false;
  // Out-of-scope guard: the score is capped at similarity / scale, where similarity is the cosine
  // to the most similar training question. Questions unlike anything seen in training (out of
  // scope) get low scores even when the model is sure. Larger = stricter; 0 = off.
  double neighbour_similarity_scale = 0.6;
  // Threads for training (folds train in parallel).
  int threads = 2;
  // Seed for fold assignment and SGD order.
  int seed = 1;

  template <class V>
  void Visit(V& v) {
    v.Section("features", features);
    v.Field("epochs", epochs, "SGD epochs");
    v.Field("learning_rate", learning_rate, "Initial SGD step size");
    v.Field("l2", l2, "L2 weight decay per step");
    v.Field("calibration_folds", calibration_folds, "Cross-validation folds for the threshold");
    v.Field("target_precision", target_precision, "Precision the threshold is calibrated to");
    v.Field("min_calibration_accepted", min_calibration_accepted,
            "Smallest accepted set a threshold may be based on");
    v.Field("require_neighbour_agreement", require_neighbour_agreement,
            "Accept only when the nearest training question agrees");
    v.Field("neighbour_similarity_scale", neighbour_similarity_scale,
            "Cap the score at nearest-training-question similarity / scale (0 = off)");
    v.Field("threads", threads, "Training threads");
    v.Field("seed", seed, "Random seed (fold assignment, SGD order)");
  }
  Status Validate() const;
};

struct IntentExample {
  std::string text;    // as spoken or typed; normalized during training
  std::string intent;  // label
};

struct IntentPrediction {
  std::string intent;       // best intent (set even when rejected); empty if no model
  int intent_id = -1;       // index into IntentClassifier::intents()
  std::string runner_up;    // second-best intent
  double probability = 0;   // softmax probability of `intent`
  double margin = 0;        // probability(intent) - probability(runner_up)
  double top_two = 0;       // probability(intent) + probability(runner_up)
  std::string neighbour_intent;   // intent of the most similar training question ("" if none)
  double neighbour_similarity = 0;  // its cosine similarity
  double score = 0;         // what the threshold applies to: min(margin, neighbour_similarity /
                            // scale), minus 1 when agreement is required and missing
  double confidence = 0;    // calibrated probability that `intent` is right
  bool accepted = false;    // score >= threshold: safe to answer from the intent tier
};

// What cross-validation on the training set showed; figures are on held-out folds.
struct IntentCalibrationReport {
  size_t examples = 0;
  double cv_accuracy = 0;          // top-1 accuracy
  double cv_coverage = 0;          // share accepted at the chosen threshold
  double cv_precision = 0;         // precision of the accepted share
  double threshold = 0;            // score threshold
  std::vector<CurvePoint> curve;   // precision-coverage on held-out folds
  std::vector<ScoredOutcome> outcomes;  // (margin, correct) per held-out question
};

class IntentClassifier {
 public:
  // Trains on `examples` (at least 2 intents, each with at least 2 examples). Errors name what
  // is missing. Takes seconds for ~15,000 examples.
  static Result<std::unique_ptr<IntentClassifier>> Train(const std::vector<IntentExample>& examples,
                                                         const IntentClassifierConfig& config);

  // `normalized`: NormalizeText output.
  IntentPrediction Predict(std::string_view normalized) const;

  double threshold() const { return report_.threshold; }
  // Overrides the calibrated threshold (e.g. to trace a precision-coverage curve).
  void set_threshold(double t) { report_.threshold = t; }
  const std::vector<std::string>& intents() const { return intents_; }
  const IntentCalibrationReport& calibration() const { return report_; }
  const FeatureSpace& feature_space() const { return *space_; }
  std::shared_ptr<const FeatureSpace> shared_feature_space() const { return space_; }

 private:
  IntentClassifier() = default;

  std::vector<std::string> intents_;
  std::shared_ptr<const FeatureSpace> space_;
  SoftmaxRegression model_;
  SparseNeighbourIndex neighbours_;
  std::vector<int> neighbour_labels_;
  IntentClassifierConfig config_;
  IsotonicCalibrator calibrator_;
  IntentCalibrationReport report_;
};

}  // namespace hotline::answer
