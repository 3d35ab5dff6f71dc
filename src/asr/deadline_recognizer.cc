#include "asr/deadline_recognizer.h"

#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace hotline::asr {
namespace {

// What the final-pass thread and the waiting caller share; the last one to let go frees it.
struct FinishState {
  std::mutex mu;
  std::condition_variable done_cv;
  std::optional<Result<AsrResult>> result;
};

}  // namespace

class DeadlineRecognizer::Stream final : public RecognizerStream {
 public:
  Stream(DeadlineRecognizer& owner, std::unique_ptr<RecognizerStream> inner)
      : owner_(owner), inner_(std::move(inner)) {}

  Status AcceptFrames(audio::AudioView pcm) override {
    if (!inner_) return FailedPreconditionError("the stream is finished");
    return inner_->AcceptFrames(pcm);
  }
  const AsrPartial& partial() const override { return inner_ ? inner_->partial() : empty_; }

  Result<AsrResult> Finish() override {
    if (!inner_) return FailedPreconditionError("the stream is finished");
    auto state = std::make_shared<FinishState>();
    {
      std::lock_guard lock(owner_.mu_);
      ++owner_.running_;
    }
    // The thread owns the wrapped stream from here on: a late pass still decodes into it.
    std::thread([&owner = owner_, state, stream = std::move(inner_)]() mutable {
      Result<AsrResult> r = stream->Finish();
      stream.reset();
      {
        std::lock_guard lock(state->mu);
        state->result.emplace(std::move(r));
      }
      state->done_cv.notify_all();
      std::lock_guard lock(owner.mu_);
      if (--owner.running_ == 0) owner.idle_cv_.notify_all();
    }).detach();

    std::unique_lock lock(state->mu);
    if (!state->done_cv.wait_for(lock, owner_.limit_, [&] { return state->result.has_value(); })) {
      lock.unlock();
      std::lock_guard owner_lock(owner_.mu_);
      ++owner_.timeouts_;
      return DeadlineExceededError("the recognizer's final pass took longer than " +
                                   std::to_string(owner_.limit_.count()) + " ms");
    }
    return std::move(*state->result);
  }

 private:
  DeadlineRecognizer& owner_;
  std::unique_ptr<RecognizerStream> inner_;
  AsrPartial empty_;
};

DeadlineRecognizer::DeadlineRecognizer(Recognizer& inner, std::chrono::milliseconds limit)
    : inner_(inner), limit_(limit) {}

DeadlineRecognizer::~DeadlineRecognizer() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return running_ == 0; });
}

Result<std::unique_ptr<RecognizerStream>> DeadlineRecognizer::CreateStream(int input_rate_hz) {
  auto inner = inner_.CreateStream(input_rate_hz);
  if (!inner.ok()) return inner.status();
  return std::unique_ptr<RecognizerStream>(new Stream(*this, std::move(*inner)));
}

uint64_t DeadlineRecognizer::timeouts() const {
  std::lock_guard lock(mu_);
  return timeouts_;
}

}  // namespace hotline::asr
