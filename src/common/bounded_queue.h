// BoundedQueue<T>: a bounded multi-producer queue with a blocking consumer.
//
// Used where work crosses threads (I/O thread → CPU stage, requests → engine scheduler). It is
// bounded so that overload shows up as a clear "full" answer at the producer (backpressure)
// rather than as unbounded memory growth and latency for everyone.
//
// Any number of producers; one or more consumers (the common use is a single owner thread).
// Close() wakes everyone: producers then fail, consumers drain what is left and then get nullopt.
// Blocking calls block; TryPush/TryPop never do. No allocation per item beyond T's own moves
// (the ring is allocated once).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

#include "common/status.h"

namespace hotline {

template <typename T>
class BoundedQueue {
 public:
  // REQUIRES: capacity >= 1.
  explicit BoundedQueue(size_t capacity) : ring_(capacity < 1 ? 1 : capacity) {}

  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  // Enqueues without waiting. ResourceExhausted when full, FailedPrecondition when closed.
  Status TryPush(T item) {
    {
      std::lock_guard lock(mu_);
      if (closed_) return FailedPreconditionError("queue is closed");
      if (size_ == ring_.size()) {
        return ResourceExhaustedError("queue is full (" + std::to_string(ring_.size()) +
                                      " items): the consumer is behind");
      }
      PushLocked(std::move(item));
    }
    not_empty_.notify_one();
    return Status::Ok();
  }

  // Waits up to `timeout` for room. DeadlineExceeded on time-out.
  Status Push(T item, std::chrono::nanoseconds timeout = std::chrono::hours(24)) {
    {
      std::unique_lock lock(mu_);
      if (!not_full_.wait_for(lock, timeout, [&] { return closed_ || size_ < ring_.size(); })) {
        return DeadlineExceededError("queue stayed full for the whole timeout");
      }
      if (closed_) return FailedPreconditionError("queue is closed");
      PushLocked(std::move(item));
    }
    not_empty_.notify_one();
    return Status::Ok();
  }

  std::optional<T> TryPop() {
    std::optional<T> out;
    {
      std::lock_guard lock(mu_);
      if (size_ == 0) return std::nullopt;
      out = PopLocked();
    }
    not_full_.notify_one();
    return out;
  }

  // Waits for an item up to `timeout`. nullopt on time-out, or when closed and drained.
  std::optional<T> Pop(std::chrono::nanoseconds timeout = std::chrono::hours(24)) {
    std::optional<T> out;
    {
      std::unique_lock lock(mu_);
      if (!not_empty_.wait_for(lock, timeout, [&] { return closed_ || size_ > 0; })) {
        return std::nullopt;
      }
      if (size_ == 0) return std::nullopt;  // closed and drained
      out = PopLocked();
    }
    not_full_.notify_one();
    return out;
  }

  void Close() {
    {
      std::lock_guard lock(mu_);
      closed_ = true;
    }
    not_empty_.notify_all();
    not_full_.notify_all();
  }

  size_t size() const {
    std::lock_guard lock(mu_);
    return size_;
  }
  size_t capacity() const { return ring_.size(); }
  bool closed() const {
    std::lock_guard lock(mu_);
    return closed_;
  }

 private:
  void PushLocked(T item) {
    ring_[(head_ + size_) % ring_.size()] = std::move(item);
    ++size_;
  }
  T PopLocked() {
    T item = std::move(*ring_[head_]);
    ring_[head_].reset();
    head_ = (head_ + 1) % ring_.size();
    --size_;
    return item;
  }

  mutable std::mutex mu_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::vector<std::optional<T>> ring_;
  size_t head_ = 0;
  size_t size_ = 0;
  bool closed_ = false;
};

}  // namespace hotline
