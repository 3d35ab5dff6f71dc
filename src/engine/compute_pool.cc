#include "engine/compute_pool.h"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HOTLINE_CPU_RELAX() _mm_pause()
#else
#define HOTLINE_CPU_RELAX() std::this_thread::yield()
#endif

namespace hotline::engine {

ComputePool::ComputePool(int threads, int spin_us)
    : n_threads_(std::max(1, threads)), spin_us_(std::max(0, spin_us)) {
  workers_.reserve(static_cast<size_t>(n_threads_ - 1));
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { WorkerLoop(i); });
}

ComputePool::~ComputePool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& t : workers_) t.join();
}

namespace {
constexpr uint64_t kClosed = uint64_t{1} << 31;
constexpr uint64_t kJoinedMask = kClosed - 1;
}  // namespace

void ComputePool::WorkerLoop(int index) {
  // Generation 0 is the state before the first job; reading generation_ here instead would
  // race with a job started before this thread got scheduled.
  uint32_t seen = 0;
  const int n = num_threads();
  for (;;) {
    // Spin briefly: in a decode step the next matmul follows within microseconds.
    const auto spin_until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us_);
    uint32_t g = generation_.load(std::memory_order_acquire);
    while (g == seen) {
      for (int i = 0; i < 64 && g == seen; ++i) {
        HOTLINE_CPU_RELAX();
        g = generation_.load(std::memory_order_acquire);
      }
      if (g != seen || std::chrono::steady_clock::now() >= spin_until) break;
    }
    while (g == seen) {
      generation_.wait(seen, std::memory_order_acquire);
      g = generation_.load(std::memory_order_acquire);
    }
    seen = g;
    if (stop_.load(std::memory_order_acquire)) return;
    // Join the job published as generation g. A worker that woke late sees a later tag (skip:
    // its next loop turn finds the new generation) or a closed job (skip); only after joining
    // may it read job_, which the caller keeps valid until every joined worker is done.
    uint64_t j = join_.load(std::memory_order_acquire);
    bool joined = false;
    while ((j >> 32) == g && (j & kClosed) == 0) {
      if (join_.compare_exchange_weak(j, j + 1, std::memory_order_acq_rel)) {
        joined = true;
        break;
      }
    }
    if (!joined) continue;
    (*job_)(index, n);
    done_.fetch_add(1, std::memory_order_acq_rel);
  }
}

void ComputePool::Start(FnRef<void(int, int)>* fn) {
  job_ = fn;
  const uint32_t next = generation_.load(std::memory_order_relaxed) + 1;
  done_.store(0, std::memory_order_relaxed);
  join_.store(uint64_t{next} << 32, std::memory_order_release);
  generation_.store(next, std::memory_order_release);
  generation_.notify_all();
}

void ComputePool::Finish(bool optional) {
  int expected = num_threads() - 1;
  if (optional) {
    // Close the job; workers that have not joined yet will skip it.
    expected = static_cast<int>(join_.fetch_or(kClosed, std::memory_order_acq_rel) & kJoinedMask);
  }
  // Workers finish within the job's length; spin, yielding now and then in case a worker was
  // descheduled by another process.
  int spins = 0;
  while (done_.load(std::memory_order_acquire) != expected) {
    if (++spins < 4096) {
      HOTLINE_CPU_RELAX();
    } else {
      std::this_thread::yield();
    }
  }
  job_ = nullptr;
}

void ComputePool::Run(FnRef<void(int thread, int n_threads)> fn) {
  const int n = num_threads();
  if (n == 1) {
    fn(0, 1);
    return;
  }
  Start(&fn);
  fn(0, n);
  Finish(false);
}

void ComputePool::ParallelFor(int64_t n, int64_t grain,
                              FnRef<void(int64_t begin, int64_t end, int thread)> fn) {
  if (n <= 0) return;
  const int threads = num_threads();
  if (grain <= 0) grain = std::max<int64_t>(1, n / (4 * threads));
  if (threads == 1 || n <= grain) {
    for (int64_t b = 0; b < n; b += grain) fn(b, std::min(n, b + grain), 0);
    return;
  }
  std::atomic<int64_t> next{0};
  auto body = [&](int thread, int) {
    for (;;) {
      const int64_t b = next.fetch_add(grain, std::memory_order_relaxed);
      if (b >= n) break;
      fn(b, std::min(n, b + grain), thread);
    }
  };
  FnRef<void(int, int)> job(body);
  Start(&job);
  body(0, threads);  // the caller takes chunks until none are left
  Finish(true);
}

}  // namespace hotline::engine
