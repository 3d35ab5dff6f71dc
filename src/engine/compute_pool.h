// ComputePool: a fork-join pool for the engine's kernels.
//
// One decode step runs ~100 matrix products of 50-500 microseconds each, so the cost that matters
// is the wake-up latency of each fork, not throughput of a task queue. The pool keeps N-1 worker
// threads; the calling thread is worker 0 and takes part in every job. Between jobs the workers
// spin for a short while (`spin_us`, a few microseconds of pause instructions) and then sleep on
// a futex (std::atomic::wait), so an idle engine costs no CPU and a busy one wakes in well under
// a microsecond.
//
// Thread-safety: one job at a time. Run/ParallelFor must be called from a single thread (the
// engine's scheduler thread) and must not be called re-entrantly from inside a job. The functions
// passed in run concurrently on every thread and must not throw.
// Blocking: Run/ParallelFor return when every thread has finished its part.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace hotline::engine {

// A non-owning reference to a callable (no allocation, unlike std::function). The callable
// must outlive the call it is passed to.
template <class Sig>
class FnRef;
template <class R, class... A>
class FnRef<R(A...)> {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FnRef>>>
  FnRef(F&& f)  // NOLINT: implicit by design
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, A... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<A>(a)...);
        }) {}
  R operator()(A... a) const { return call_(obj_, std::forward<A>(a)...); }

 private:
  void* obj_;
  R (*call_)(void*, A...);
};

class ComputePool {
 public:
  // `threads` >= 1 counts the caller: ComputePool(2) starts one extra thread. Values < 1 are
  // treated as 1. `spin_us` bounds the busy-wait of idle workers before they sleep.
  explicit ComputePool(int threads, int spin_us = 50);
  ~ComputePool();  // joins the workers

  ComputePool(const ComputePool&) = delete;
  ComputePool& operator=(const ComputePool&) = delete;

  int num_threads() const { return n_threads_; }

  // Runs fn(thread_index, num_threads) once on every thread (index 0 = the caller).
  void Run(FnRef<void(int thread, int n_threads)> fn);

  // Splits [0, n) into chunks of `grain` items (the last may be shorter) handed out dynamically,
  // so a thread that was preempted by another process does not hold back the others; calls
  // fn(begin, end, thread) for each chunk. grain <= 0 picks n / (4 * threads), at least 1.
  // Workers join the job only while it is open: once the caller has run out of chunks it closes
  // the job and waits only for the workers that joined, so a worker descheduled by another
  // process (a loaded machine) costs the call nothing. Not every thread index need appear.
  void ParallelFor(int64_t n, int64_t grain, FnRef<void(int64_t begin, int64_t end, int thread)> fn);
  void ParallelFor(int64_t n, FnRef<void(int64_t begin, int64_t end, int thread)> fn) {
    ParallelFor(n, 0, fn);
  }

 private:
  void WorkerLoop(int index);
  // Publishes `fn` as the next job.
  void Start(FnRef<void(int, int)>* fn);
  // Waits for the workers of the current job: all of them, or (`optional`) closes the job and
  // waits only for those that joined it.
  void Finish(bool optional);

  const int n_threads_;
  const int spin_us_;
  std::vector<std::thread> workers_;
  FnRef<void(int, int)>* job_ = nullptr;          // valid while a job runs
  std::atomic<uint32_t> generation_{0};          // bumped to start a job
  // Current job: generation (high 32 bits) | closed (bit 31) | workers joined (low bits). A
  // worker joins only with a compare-exchange on the generation it woke for, so a late worker
  // can never join a later job by mistake, nor touch job_ without having joined.
  std::atomic<uint64_t> join_{0};
  std::atomic<int> done_{0};  // joined workers that finished
  std::atomic<bool> stop_{false};
};

}  // namespace hotline::engine
