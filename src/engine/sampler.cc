#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace hotline::engine {

Status SamplingConfig::Validate() const {
  if (!(temperature >= 0.0f && temperature <= 100.0f)) {
    return InvalidArgumentError("temperature must be in [0, 100], got " + std::to_string(temperature));
  }
  if (top_k < 0) return InvalidArgumentError("top_k must be >= 0 (0 = off)");
  if (!(top_p > 0.0f && top_p <= 1.0f)) {
    return InvalidArgumentError("top_p must be in (0, 1], got " + std::to_string(top_p));
  }
  if (!(repetition_penalty > 0.0f && repetition_penalty <= 10.0f)) {
    return InvalidArgumentError("repetition_penalty must be in (0, 10], got " +
                                std::to_string(repetition_penalty));
  }
  if (repeat_last_n < 0) return InvalidArgumentError("repeat_last_n must be >= 0");
  if (max_tokens < 1) return InvalidArgumentError("max_tokens must be >= 1");
  if (beam_width != 1) {
    return InvalidArgumentError("beam_width must be 1: beam search is not supported (it "
                                "multiplies latency for little gain in dialogue)");
  }
  return Status::Ok();
}

Sampler::Sampler(const SamplingConfig& config) : config_(config), rng_(config.seed) {}

int32_t Sampler::Sample(std::span<const float> logits, std::span<const int32_t> recent) {
  const size_t n = logits.size();
  if (config_.temperature <= 0.0f &&
      (config_.repetition_penalty == 1.0f || config_.repeat_last_n <= 0)) {
    // Greedy without a penalty reads the logits in place: the first maximum, non-finite values
    // as -infinity (so all-non-finite gives token 0, as the general path does). Copying a
    // 150k-entry row per token cost as much as the argmax itself.
    const float* x = logits.data();
    float best = -std::numeric_limits<float>::infinity();
    size_t arg = 0;
    for (size_t i = 0; i < n; ++i) {
      if (x[i] > best && x[i] <= std::numeric_limits<float>::max()) {
        best = x[i];
        arg = i;
      }
    }
    return static_cast<int32_t>(arg);
  }
  work_.assign(logits.begin(), logits.end());
  for (float& x : work_) {
    if (!std::isfinite(x)) x = -std::numeric_limits<float>::infinity();
  }
  if (config_.repetition_penalty != 1.0f && config_.repeat_last_n > 0) {
    const size_t k = std::min(recent.size(), static_cast<size_t>(config_.repeat_last_n));
    // A token repeated in the window is penalized once.
    for (size_t i = recent.size() - k; i < recent.size(); ++i) {
      const int32_t t = recent[i];
      if (t < 0 || static_cast<size_t>(t) >= n) continue;
      bool seen = false;
      for (size_t j = recent.size() - k; j < i; ++j) seen |= recent[j] == t;
      if (seen) continue;
      float& x = work_[static_cast<size_t>(t)];
      x = x > 0 ? x / config_.repetition_penalty : x * config_.repetition_penalty;
    }
  }
  if (config_.temperature <= 0.0f) {
    return static_cast<int32_t>(std::max_element(work_.begin(), work_.end()) - work_.begin());
  }
  cand_.resize(n);
  for (size_t i = 0; i < n; ++i) cand_[i] = {work_[i], static_cast<int32_t>(i)};
  auto by_logit = [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  size_t keep = n;
  if (config_.top_k > 0 && static_cast<size_t>(config_.top_k) < n) {
    keep = static_cast<size_t>(config_.top_k);
    std::partial_sort(cand_.begin(), cand_.begin() + static_cast<std::ptrdiff_t>(keep),
                      cand_.end(), by_logit);
  } else {
    std::sort(cand_.begin(), cand_.end(), by_logit);
  }
  if (!std::isfinite(cand_[0].first)) return cand_[0].second;  // every logit was -inf/NaN
  // Softmax with temperature over the kept candidates (sorted, so [0] is the maximum).
  const float inv_t = 1.0f / config_.temperature;
  const float mx = cand_[0].first;
  double sum = 0;
  for (size_t i = 0; i < keep; ++i) {
    cand_[i].first = std::exp((cand_[i].first - mx) * inv_t);
    sum += cand_[i].first;
  }
  if (config_.top_p < 1.0f) {
    double acc = 0;
    size_t cut = keep;
    for (size_t i = 0; i < keep; ++i) {
      acc += cand_[i].first / sum;
      if (acc >= config_.top_p) {
        cut = i + 1;
        break;
      }
    }
    keep = cut;
    sum = 0;
    for (size_t i = 0; i < keep; ++i) sum += cand_[i].first;
  }
  const double r = std::uniform_real_distribution<double>(0.0, sum)(rng_);
  double acc = 0;
  for (size_t i = 0; i < keep; ++i) {
    acc += cand_[i].first;
    if (r < acc) return cand_[i].second;
  }
  return cand_[keep - 1].second;
}

}  // namespace hotline::engine
