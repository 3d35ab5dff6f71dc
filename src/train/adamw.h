// AdamW (Adam with decoupled weight decay) over one flat parameter vector, with global-norm
// gradient clipping and a learning-rate schedule of linear warmup then cosine decay.
//
// Thread-safety: one optimizer per training run, called from one thread.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"

namespace hotline::train {

struct AdamWConfig {
  float lr = 3e-3f;           // peak learning rate, reached at the end of warmup
  float min_lr_ratio = 0.1f;  // the cosine ends at lr * min_lr_ratio
  int warmup_steps = 50;
  int total_steps = 1000;  // length of the schedule (the cosine reaches its floor here)
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0.1f;  // applied to matrices only (see the decay mask)
  float clip_norm = 1.0f;     // global gradient L2 norm limit; <= 0 disables clipping

  Status Validate() const;
};

// Learning rate of step `step` (0-based): lr * (step + 1) / warmup during warmup, then cosine
// from lr down to lr * min_lr_ratio at total_steps, flat after.
float ScheduledLr(const AdamWConfig& c, int step);

class AdamW {
 public:
  // `decay_mask[i]` != 0 where weight decay applies (matrices); norms and gains are not decayed.
  AdamW(const AdamWConfig& config, std::vector<uint8_t> decay_mask);

  // One update of `params` from `grads` (clipped in place). Returns the gradient norm before
  // clipping. `step` is the 0-based step number (bias correction and schedule).
  double Step(std::span<float> params, std::span<float> grads, int step);

  // Moment estimates, for checkpoints.
  std::vector<float>& m() { return m_; }
  std::vector<float>& v() { return v_; }
  const AdamWConfig& config() const { return config_; }

 private:
  AdamWConfig config_;
  std::vector<uint8_t> decay_;
  std::vector<float> m_, v_;
};

}  // namespace hotline::train
