// Multinomial logistic regression (softmax) over sparse feature vectors, trained with SGD.
//
// The learned part of the intent classifier: one weight per (feature, intent), stored feature-
// major so that scoring a question touches only the rows of its features. L2 regularization is
// applied exactly with the scaled-weights trick, so every SGD step costs O(nnz * classes)
// regardless of the feature count. Training is single-threaded and fully determined by the seed
// (parallelism comes from training several models at once, e.g. cross-validation folds).
//
// Thread-safety: a trained model is immutable; Scores() may be called from many threads.
#pragma once

#include <cstdint>
#include <vector>

#include "answer/understand/features.h"

namespace hotline::answer {

struct SoftmaxTrainOptions {
  int epochs = 12;
  double learning_rate = 1.0;  // initial step; decays as 1 / (1 + epoch)
  double l2 = 1e-6;            // per-step weight decay strength
  uint64_t seed = 1;           // shuffling order
};

class SoftmaxRegression {
 public:
  SoftmaxRegression() = default;

  // REQUIRES: every x[i].ids < num_features, 0 <= y[i] < num_classes, x.size() == y.size().
  static SoftmaxRegression Train(const std::vector<SparseVector>& x, const std::vector<int>& y,
                                 size_t num_features, int num_classes,
                                 const SoftmaxTrainOptions& options);

  // Writes softmax probabilities into `probs` (resized to num_classes()).
  void Probabilities(const SparseVector& x, std::vector<float>* probs) const;

  int num_classes() const { return num_classes_; }
  size_t num_features() const { return num_features_; }

 private:
  size_t num_features_ = 0;
  int num_classes_ = 0;
  size_t stride_ = 0;           // num_classes_ rounded up to a multiple of 8
  std::vector<float> weights_;  // [feature][stride_], padding columns stay 0
  std::vector<float> bias_;
};

}  // namespace hotline::answer
