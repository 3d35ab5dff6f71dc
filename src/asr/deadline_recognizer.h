// DeadlineRecognizer: a Recognizer whose streams' final pass returns within a time limit.
//
// A caller who stopped talking must hear something even when the recognizer is stuck (a remote
// backend that stopped answering, a final pass over a pathological utterance): the call session
// cannot afford to wait on Finish() for ever. This wrapper runs the wrapped stream's Finish() on
// a thread of its own and waits at most `limit`; when the limit passes first, Finish() returns
// kDeadlineExceeded at once and the late final pass is left to end by itself (its result is
// dropped; the stream it decodes is destroyed on that thread when it returns).
//
// Lifetime: the wrapped recognizer must outlive this object; the destructor waits for every final
// pass still running, so no pass outlives the recognizer it reads. AcceptFrames() and partial()
// go straight through (they are bounded per frame by the backend).
//
// Threads: as for any Recognizer (recognizer.h). One short-lived thread per final pass: a thread
// start costs tens of microseconds against a final pass of milliseconds to seconds.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "asr/recognizer.h"

namespace hotline::asr {

class DeadlineRecognizer final : public Recognizer {
 public:
  // `inner` must outlive this object; `limit` must be positive.
  DeadlineRecognizer(Recognizer& inner, std::chrono::milliseconds limit);
  ~DeadlineRecognizer() override;

  Result<std::unique_ptr<RecognizerStream>> CreateStream(int input_rate_hz) override;
  std::string name() const override { return inner_.name(); }

  // Final passes that ran past the limit (their results dropped) since construction.
  uint64_t timeouts() const;

 private:
  class Stream;
  friend class Stream;

  Recognizer& inner_;
  const std::chrono::milliseconds limit_;
  mutable std::mutex mu_;
  std::condition_variable idle_cv_;
  int running_ = 0;  // final-pass threads not yet finished
  uint64_t timeouts_ = 0;
};

}  // namespace hotline::asr
