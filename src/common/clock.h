// Injectable monotonic clock.
//
// Components that measure or wait on time take a `Clock&` so tests can drive time by hand
// (FakeClock) instead of sleeping. Timestamps are steady_clock time points: they never jump with
// wall-clock changes, which is what latency ledgers and TTLs need.
//
// Thread-safety: Now() may be called from any thread on both implementations.
#pragma once

#include <atomic>
#include <chrono>

namespace hotline {

using MonoTime = std::chrono::steady_clock::time_point;
using Nanos = std::chrono::nanoseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual MonoTime Now() const = 0;
};

// The process's steady clock.
class SystemClock final : public Clock {
 public:
  MonoTime Now() const override { return std::chrono::steady_clock::now(); }
  // A shared instance for code that has no clock injected.
  static SystemClock& Get();
};

// A clock that moves only when told to. Starts at an arbitrary fixed point.
class FakeClock final : public Clock {
 public:
  MonoTime Now() const override { return MonoTime(Nanos(now_ns_.load(std::memory_order_acquire))); }
  void Advance(Nanos d) { now_ns_.fetch_add(d.count(), std::memory_order_acq_rel); }
  void Set(MonoTime t) { now_ns_.store(t.time_since_epoch().count(), std::memory_order_release); }

 private:
  std::atomic<int64_t> now_ns_{1'000'000'000};
};

// Milliseconds between two time points, as a double (for ledgers and reports).
inline double MillisBetween(MonoTime from, MonoTime to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace hotline
