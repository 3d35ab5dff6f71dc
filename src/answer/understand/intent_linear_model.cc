#include "answer/understand/intent_linear_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

namespace hotline::answer {
namespace {

// Eight floats; GCC lowers this to AVX or to two SSE registers, so the kernels vectorize at -O2
// without -march flags. aligned(4): rows are only float-aligned.
typedef float V8 __attribute__((vector_size(32), aligned(4)));

// acc[0..stride) += a * row[0..stride); stride is a multiple of 8.
inline void Axpy(float a, const float* __restrict row, float* __restrict acc, size_t stride) {
  for (size_t c = 0; c < stride; c += 8) {
    *reinterpret_cast<V8*>(acc + c) += a * *reinterpret_cast<const V8*>(row + c);
  }
}

void Softmax(std::vector<float>& z) {
  float mx = *std::max_element(z.begin(), z.end());
  float sum = 0;
  for (float& v : z) {
    v = std::exp(v - mx);
    sum += v;
  }
  float inv = 1.0f / sum;
  for (float& v : z) v *= inv;
}

}  // namespace

SoftmaxRegression SoftmaxRegression::Train(const std::vector<SparseVector>& x,
                                           const std::vector<int>& y, size_t num_features,
                                           int num_classes, const SoftmaxTrainOptions& options) {
  SoftmaxRegression m;
  m.num_features_ = num_features;
  m.num_classes_ = num_classes;
  const size_t c_count = static_cast<size_t>(num_classes);
  const size_t stride = (c_count + 7) / 8 * 8;
  m.stride_ = stride;
  m.weights_.assign(num_features * stride, 0.0f);
  m.bias_.assign(c_count, 0.0f);
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(options.seed);
  std::vector<float> z(stride), g(stride);
  // Weights are stored divided by `scale`, so decaying all of them is one multiplication.
  double scale = 1.0;
  float* w = m.weights_.data();
  for (int epoch = 0; epoch < options.epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    const double lr = options.learning_rate / (1.0 + epoch);
    for (size_t idx : order) {
      const SparseVector& v = x[idx];
      std::fill(z.begin(), z.end(), 0.0f);
      for (size_t k = 0; k < v.ids.size(); ++k) {
        Axpy(v.values[k], w + static_cast<size_t>(v.ids[k]) * stride, z.data(), stride);
      }
      z.resize(c_count);
      for (size_t c = 0; c < c_count; ++c) z[c] = static_cast<float>(z[c] * scale) + m.bias_[c];
      Softmax(z);
      z[static_cast<size_t>(y[idx])] -= 1.0f;  // gradient of the loss wrt the logits
      std::copy(z.begin(), z.end(), g.begin());
      z.resize(stride);
      scale *= (1.0 - lr * options.l2);
      if (scale < 1e-4) {
        for (float& wv : m.weights_) wv = static_cast<float>(wv * scale);
        scale = 1.0;
      }
      const float step = static_cast<float>(lr / scale);
      for (size_t k = 0; k < v.ids.size(); ++k) {
        Axpy(-step * v.values[k], g.data(), w + static_cast<size_t>(v.ids[k]) * stride, stride);
      }
      for (size_t c = 0; c < c_count; ++c) m.bias_[c] -= static_cast<float>(lr) * g[c];
    }
  }
  for (float& wv : m.weights_) wv = static_cast<float>(wv * scale);
  return m;
}

void SoftmaxRegression::Probabilities(const SparseVector& x, std::vector<float>* probs) const {
  const size_t c_count = static_cast<size_t>(num_classes_);
  probs->assign(stride_, 0.0f);
  for (size_t k = 0; k < x.ids.size(); ++k) {
    if (x.ids[k] >= num_features_) continue;
    Axpy(x.values[k], weights_.data() + static_cast<size_t>(x.ids[k]) * stride_, probs->data(),
         stride_);
  }
  probs->resize(c_count);
  for (size_t c = 0; c < c_count; ++c) (*probs)[c] += bias_[c];
  Softmax(*probs);
}

}  // namespace hotline::answer
