#include "common/thread_pool.h"

#include "common/log.h"

namespace hotline {

ThreadPool::ThreadPool(size_t threads, size_t queue_capacity) : queue_(queue_capacity) {
  if (threads < 1) threads = 1;
  workers_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() { Shutdown(); }

Status ThreadPool::TrySubmit(Task task) { return queue_.TryPush(std::move(task)); }

Status ThreadPool::Submit(Task task) { return queue_.Push(std::move(task)); }

void ThreadPool::Shutdown() {
  std::call_once(shutdown_once_, [this] {
    queue_.Close();
    for (auto& t : workers_) t.join();
  });
}

void ThreadPool::WorkerLoop() {
  while (auto task = queue_.Pop()) {
    try {
      (*task)();
    } catch (const std::exception& e) {
      tasks_failed_.fetch_add(1, std::memory_order_relaxed);
      HLOG_ERROR("thread pool task threw: {}", e.what());
    } catch (...) {
      tasks_failed_.fetch_add(1, std::memory_order_relaxed);
      HLOG_ERROR("thread pool task threw a non-standard exception");
    }
  }
}

Strand::Strand(ThreadPool& pool) : core_(std::make_shared<Core>(pool)) {}

Status Strand::Post(ThreadPool::Task task, size_t max_pending) {
  bool start = false;
  {
    std::lock_guard lock(core_->mu);
    if (core_->tasks.size() >= max_pending) {
      return ResourceExhaustedError("strand already holds " + std::to_string(max_pending) +
                                    " pending tasks");
    }
    core_->tasks.push_back(std::move(task));
    ++core_->unfinished;
    if (!core_->running) {
      core_->running = true;
      start = true;
    }
  }
  if (!start) return Status::Ok();
  std::shared_ptr<Core> core = core_;
  Status s = core->pool.TrySubmit([core] { Drain(core); });
  if (!s.ok()) {
    std::lock_guard lock(core_->mu);
    core_->tasks.pop_back();
    --core_->unfinished;
    core_->running = false;
  }
  return s;
}

void Strand::PostOrRunHere(ThreadPool::Task task) {
  {
    std::lock_guard lock(core_->mu);
    core_->tasks.push_back(std::move(task));
    ++core_->unfinished;
    if (core_->running) return;
    core_->running = true;
  }
  std::shared_ptr<Core> core = core_;
  if (!core->pool.TrySubmit([core] { Drain(core); }).ok()) Drain(core);
}

size_t Strand::pending() const {
  std::lock_guard lock(core_->mu);
  return core_->unfinished;
}

void Strand::Drain(const std::shared_ptr<Core>& core) {
  // Runs a bounded batch, then yields the worker so one busy strand cannot starve the others.
  for (int i = 0; i < 64; ++i) {
    ThreadPool::Task task;
    {
      std::lock_guard lock(core->mu);
      if (core->tasks.empty()) {
        core->running = false;
        return;
      }
      task = std::move(core->tasks.front());
      core->tasks.pop_front();
    }
    try {
      task();
    } catch (const std::exception& e) {
      HLOG_ERROR("strand task threw: {}", e.what());
    } catch (...) {
      HLOG_ERROR("strand task threw a non-standard exception");
    }
    task = nullptr;  // what it held is released before it counts as finished
    std::lock_guard lock(core->mu);
    --core->unfinished;
  }
  // Still work left: continue in a fresh task at the back of the pool's queue (the running flag
  // stays set, so order holds). If the pool is saturated, keep going here rather than drop work.
  if (!core->pool.TrySubmit([core] { Drain(core); }).ok()) Drain(core);
}

}  // namespace hotline
