// CancelToken: a flag one thread raises and long-running work polls (barge-in, hang-up).
//
// Ownership: the caller that starts an operation owns the token and keeps it alive until the
// operation returns; operations take `const CancelToken*` (nullptr = not cancellable).
// Thread-safety: Cancel() and cancelled() may be called from any thread at any time; they never
// block or allocate.
#pragma once

#include <atomic>

namespace hotline {

class CancelToken {
 public:
  CancelToken() = default;
  CancelToken(const CancelToken&) = delete;
  CancelToken& operator=(const CancelToken&) = delete;

  void Cancel() { cancelled_.store(true, std::memory_order_release); }
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }
  // Re-arms the token for another operation. REQUIRES: no operation is using it.
  void Reset() { cancelled_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> cancelled_{false};
};

inline bool IsCancelled(const CancelToken* token) { return token != nullptr && token->cancelled(); }

}  // namespace hotline
