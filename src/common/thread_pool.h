// ThreadPool: a fixed set of worker threads fed by a bounded task queue, and Strand, which runs
// one key's tasks in order on that pool.
//
// CPU stages (VAD, ASR, TTS) run here: calls in parallel, each call's work serialized on its own
// Strand. The queue is bounded: TrySubmit answers ResourceExhausted when the pool is saturated,
// so the caller can refuse a new call instead of slowing every call down.
//
// Thread-safety: all methods may be called from any thread. Tasks must not block for long (no
// network I/O); a task that throws is caught and counted, never kills the worker.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/bounded_queue.h"
#include "common/status.h"

namespace hotline {

class ThreadPool {
 public:
  using Task = std::function<void()>;

  // REQUIRES: threads >= 1, queue_capacity >= 1.
  ThreadPool(size_t threads, size_t queue_capacity);
  // Runs every task already queued, then joins the workers.
  ~ThreadPool();

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Queues a task without waiting; ResourceExhausted when the queue is full.
  Status TrySubmit(Task task);
  // Queues a task, waiting for room as long as needed.
  Status Submit(Task task);

  // Stops accepting tasks, runs what is queued, joins. Idempotent.
  void Shutdown();

  size_t threads() const { return workers_.size(); }
  size_t queued() const { return queue_.size(); }
  uint64_t tasks_failed() const { return tasks_failed_.load(std::memory_order_relaxed); }

 private:
  void WorkerLoop();

  BoundedQueue<Task> queue_;
  std::vector<std::thread> workers_;
  std::atomic<uint64_t> tasks_failed_{0};
  std::once_flag shutdown_once_;
};

// Runs tasks one at a time, in submission order, on a ThreadPool. Cheap to create (one per call).
// REQUIRES: the pool outlives the strand's queued tasks; destroying a Strand with tasks pending is
// safe (they still run; the state they share is kept alive by the strand's shared core).
class Strand {
 public:
  explicit Strand(ThreadPool& pool);

  // Queues `task` after every task posted before it. ResourceExhausted if this strand already holds
  // `max_pending` tasks or the pool is saturated.
  Status Post(ThreadPool::Task task, size_t max_pending = 1024);
  // Queues `task` as Post does but never refuses it: no pending limit, and when the strand must
  // start and the pool is saturated, the strand's tasks run on the calling thread before this
  // returns (in order, as a worker would run them). For work that must not be lost whose
  // producer can afford to do it itself under overload. The caller must hold no lock the tasks
  // take.
  void PostOrRunHere(ThreadPool::Task task);

  // Tasks posted and not yet finished: queued, or the one running. Zero means every task posted
  // before the call has run to its end.
  size_t pending() const;

 private:
  struct Core {
    explicit Core(ThreadPool& p) : pool(p) {}
    ThreadPool& pool;
    std::mutex mu;
    std::deque<ThreadPool::Task> tasks;
    size_t unfinished = 0;  // tasks.size(), plus 1 while one runs
    bool running = false;
  };
  static void Drain(const std::shared_ptr<Core>& core);

  std::shared_ptr<Core> core_;
};

}  // namespace hotline
