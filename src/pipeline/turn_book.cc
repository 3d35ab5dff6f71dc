#include "pipeline/turn_book.h"

#include <utility>

namespace hotline::pipeline {

TurnBook::Begun TurnBook::Begin(TurnReport report) {
  Begun b;
  b.previous = active_;
  if (active_token_) active_token_->Cancel();
  if (active_ >= 0 && at(active_).outcome == TurnOutcome::kPending) {
    at(active_).outcome = TurnOutcome::kSuperseded;
  }
  b.index = static_cast<int>(turns_.size());
  b.token = std::make_shared<CancelToken>();
  report.index = b.index;
  turns_.push_back(std::move(report));
  finished_.push_back(false);
  active_ = b.index;
  active_token_ = b.token;
  return b;
}

void TurnBook::AppendFinished(TurnReport report) {
  report.index = static_cast<int>(turns_.size());
  turns_.push_back(std::move(report));
  finished_.push_back(true);
}

void TurnBook::CancelActive() {
  if (active_token_) active_token_->Cancel();
}

std::shared_ptr<CancelToken> TurnBook::RenewActiveToken() {
  if (active_ < 0) return nullptr;
  CancelActive();
  active_token_ = std::make_shared<CancelToken>();
  return active_token_;
}

bool TurnBook::SettleIfPending(int index, TurnOutcome outcome) {
  if (at(index).outcome != TurnOutcome::kPending) return false;
  at(index).outcome = outcome;
  return true;
}

void TurnBook::Hold(int index) {
  held_ = index;
  finish_deferred_ = false;
}

bool TurnBook::Release(int index) {
  if (held_ != index || index < 0) return false;
  held_ = -1;
  return std::exchange(finish_deferred_, false);
}

std::optional<TurnReport> TurnBook::Finish(int index, double now_ms) {
  if (index < 0) return std::nullopt;
  if (index == held_) {
    finish_deferred_ = true;
    return std::nullopt;
  }
  const size_t i = static_cast<size_t>(index);
  if (finished_[i]) return std::nullopt;
  finished_[i] = true;
  TurnReport& t = turns_[i];
  if (t.outcome == TurnOutcome::kPending) t.outcome = TurnOutcome::kAnswered;
  if (t.ledger.turn_done < 0) t.ledger.turn_done = now_ms;
  return t;
}

}  // namespace hotline::pipeline
