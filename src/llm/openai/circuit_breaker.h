// CircuitBreaker: stops sending requests to a model server that keeps failing, and finds out by
// itself when it is well again.
//
// Closed (normal): every request goes through; `failures_to_open` failures in a row open it.
// Open: every request is rejected at once for `open_for` (the caller falls back without waiting
// out a time-out, and the sick server gets no load). Then half-open: one trial request goes
// through while the others are still rejected; its success closes the circuit, its failure opens
// it again for another `open_for`. A trial that ends neither way (cancelled) lets the next
// request be the trial.
//
// Thread-safe. Time is passed in, so that tests need no sleeping.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>

namespace hotline::llm {

class CircuitBreaker {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Admission { kPass, kTrial, kReject };

  // failures_to_open >= 1.
  CircuitBreaker(int failures_to_open, std::chrono::milliseconds open_for);

  // Whether a request starting at `now` may go to the server. kPass and kTrial must each be
  // followed by exactly one Succeeded, Failed or Abandoned.
  Admission Admit(Clock::time_point now);
  void Succeeded(Admission admission);
  void Failed(Admission admission, Clock::time_point now);
  void Abandoned(Admission admission);

  bool open() const;  // open or half-open
  // Milliseconds until the next trial (0 when closed or due).
  int64_t RetryInMs(Clock::time_point now) const;
  uint64_t times_opened() const;

 private:
  const int failures_to_open_;
  const std::chrono::milliseconds open_for_;
  mutable std::mutex mu_;
  int failures_ = 0;  // in a row, while closed
  bool open_ = false;
  bool trial_in_flight_ = false;
  Clock::time_point retry_at_{};
  uint64_t times_opened_ = 0;
};

}  // namespace hotline::llm
