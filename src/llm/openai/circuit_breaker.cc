#include "llm/openai/circuit_breaker.h"

#include <algorithm>

namespace hotline::llm {

CircuitBreaker::CircuitBreaker(int failures_to_open, std::chrono::milliseconds open_for)
    : failures_to_open_(std::max(1, failures_to_open)), open_for_(open_for) {}

CircuitBreaker::Admission CircuitBreaker::Admit(Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (!open_) return Admission::kPass;
  if (trial_in_flight_ || now < retry_at_) return Admission::kReject;
  trial_in_flight_ = true;
  return Admission::kTrial;
}

void CircuitBreaker::Succeeded(Admission admission) {
  std::lock_guard lock(mu_);
  if (admission == Admission::kReject) return;
  // Any answer proves the server well: a request admitted before the circuit opened counts too.
  failures_ = 0;
  open_ = false;
  if (admission == Admission::kTrial) trial_in_flight_ = false;
}

void CircuitBreaker::Failed(Admission admission, Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (admission == Admission::kReject) return;
  if (admission == Admission::kTrial) {
    trial_in_flight_ = false;
    retry_at_ = now + open_for_;
    ++times_opened_;
    return;
  }
  if (open_) return;  // admitted before the circuit opened: already counted as open
  if (++failures_ >= failures_to_open_) {
    open_ = true;
    retry_at_ = now + open_for_;
    ++times_opened_;
  }
}

void CircuitBreaker::Abandoned(Admission admission) {
  std::lock_guard lock(mu_);
  if (admission == Admission::kTrial) trial_in_flight_ = false;
}

bool CircuitBreaker::open() const {
  std::lock_guard lock(mu_);
  return open_;
}

int64_t CircuitBreaker::RetryInMs(Clock::time_point now) const {
  std::lock_guard lock(mu_);
  if (!open_ || now >= retry_at_) return 0;
  return std::chrono::duration_cast<std::chrono::milliseconds>(retry_at_ - now).count();
}

uint64_t CircuitBreaker::times_opened() const {
  std::lock_guard lock(mu_);
  return times_opened_;
}

}  // namespace hotline::llm
