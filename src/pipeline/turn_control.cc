#include "pipeline/turn_control.h"

#include <utility>

namespace hotline::pipeline {

std::shared_ptr<llm::GenerationSchedule> AnswerInFlight::Start(int idx, MonoTime now) {
  pending_ = true;
  turn_ = idx;
  started_ = now;
  schedule_ = std::make_shared<llm::GenerationSchedule>();
  schedule_->Waiting(now);
  paced_at_ = now;
  return schedule_;
}

void AnswerInFlight::Done(int idx) {
  if (idx == turn_) pending_ = false;
}

int AnswerInFlight::TakeTimedOut(const Clock& clock, int timeout_ms) {
  if (!pending_ || MillisBetween(started_, clock.Now()) <= timeout_ms) return -1;
  pending_ = false;
  return turn_;
}

std::optional<AnswerInFlight::Pace> AnswerInFlight::Paced(int idx, MonoTime now) {
  if (idx < 0 || idx != turn_ || schedule_ == nullptr) return std::nullopt;
  Pace p{schedule_, paced_at_};
  paced_at_ = now;
  return p;
}

void PendingEnd::Arm(AfterSpeech what, std::string reason, int64_t at_ms) {
  end_ = End{what, std::move(reason)};
  at_ms_ = at_ms;
}

void PendingEnd::Postpone(int64_t at_ms) {
  if (armed()) at_ms_ = at_ms;
}

std::optional<PendingEnd::End> PendingEnd::TakeIfDue(int64_t now, bool paused) {
  if (!armed() || paused || now < at_ms_) return std::nullopt;
  End e = std::move(end_);
  end_ = End{};
  return e;
}

SilenceTimer::Action SilenceTimer::Tick(bool quiet, int frame_ms) {
  quiet_ms_ = quiet ? quiet_ms_ + frame_ms : 0;
  if (quiet_ms_ < (holding_ ? hold_after_ms_ : after_ms_)) return Action::kNone;
  quiet_ms_ = 0;
  holding_ = false;
  if (reprompts_ >= max_reprompts_) return Action::kGoodbye;
  ++reprompts_;
  return Action::kReprompt;
}

void KeypadEntry::Press(char digit, int64_t now_ms) {
  if (digit == '*') {
    digits_.clear();
    return;
  }
  if (digits_.size() < kMaxDigits) digits_.push_back(digit);
  last_ms_ = now_ms;
}

std::string KeypadEntry::Take() {
  std::string digits = std::move(digits_);
  digits_.clear();
  last_ms_ = -1;
  return digits;
}

}  // namespace hotline::pipeline
