#include "train/adamw.h"

#include <cmath>
#include <numbers>

namespace hotline::train {

Status AdamWConfig::Validate() const {
  if (!(lr > 0.0f) || lr > 1.0f) return InvalidArgumentError("learning rate must be in (0, 1]");
  if (!(min_lr_ratio >= 0.0f) || min_lr_ratio > 1.0f) {
    return InvalidArgumentError("min_lr_ratio must be in [0, 1]");
  }
  if (warmup_steps < 0 || total_steps < 1) {
    return InvalidArgumentError("warmup must be >= 0 steps and the schedule >= 1 step");
  }
  if (!(beta1 >= 0.0f && beta1 < 1.0f) || !(beta2 >= 0.0f && beta2 < 1.0f)) {
    return InvalidArgumentError("Adam betas must be in [0, 1)");
  }
  if (!(eps > 0.0f) || !(weight_decay >= 0.0f)) {
    return InvalidArgumentError("Adam eps must be > 0 and weight decay >= 0");
  }
  return Status::Ok();
}

float ScheduledLr(const AdamWConfig& c, int step) {
  if (step < c.warmup_steps) {
    return c.lr * static_cast<float>(step + 1) / static_cast<float>(c.warmup_steps);
  }
  const int span = c.total_steps - c.warmup_steps;
  if (span <= 0 || step >= c.total_steps) return c.lr * c.min_lr_ratio;
  const double progress = double(step - c.warmup_steps) / double(span);
  const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
  return static_cast<float>(c.lr * (c.min_lr_ratio + (1.0 - c.min_lr_ratio) * cosine));
}

AdamW::AdamW(const AdamWConfig& config, std::vector<uint8_t> decay_mask)
    : config_(config),
      decay_(std::move(decay_mask)),
      m_(decay_.size(), 0.0f),
      v_(decay_.size(), 0.0f) {}

double AdamW::Step(std::span<float> params, std::span<float> grads, int step) {
  const size_t n = params.size();
  double ss = 0;
  for (size_t i = 0; i < n; ++i) ss += double(grads[i]) * grads[i];
  const double norm = std::sqrt(ss);
  if (config_.clip_norm > 0 && norm > config_.clip_norm) {
    const float s = static_cast<float>(config_.clip_norm / norm);
    for (size_t i = 0; i < n; ++i) grads[i] *= s;
  }
  const float lr = ScheduledLr(config_, step);
  const float b1 = config_.beta1, b2 = config_.beta2;
  const float c1 = 1.0f / (1.0f - static_cast<float>(std::pow(double(b1), step + 1)));
  const float c2 = 1.0f / (1.0f - static_cast<float>(std::pow(double(b2), step + 1)));
  const float wd = lr * config_.weight_decay;
  for (size_t i = 0; i < n; ++i) {
    const float g = grads[i];
    m_[i] = b1 * m_[i] + (1.0f - b1) * g;
    v_[i] = b2 * v_[i] + (1.0f - b2) * g * g;
    const float mh = m_[i] * c1, vh = v_[i] * c2;
    if (decay_[i]) params[i] -= wd * params[i];
    params[i] -= lr * mh / (std::sqrt(vh) + config_.eps);
  }
  return norm;
}

}  // namespace hotline::train
