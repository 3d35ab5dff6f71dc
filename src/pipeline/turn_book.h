// TurnBook: the turns of one call as records, from their start to their report. It keeps each
// turn's TurnReport, which turn is active and the cancel token of what it is doing, and the hold
// a speculative start puts on reporting its turn until the final transcript settles it. Its
// rules: a new turn cancels the active one and supersedes it only while that one is pending; a
// result that comes late never overwrites an outcome settled meanwhile (SettleIfPending); a
// turn is reported once, and a turn still pending when reported was answered.
//
//   TurnBook::Begun b = book.Begin(report);      // b.token for the new turn's work
//   if (b.previous >= 0) ... finish b.previous     // superseded (or already settled)
//   book.SettleIfPending(b.index, TurnOutcome::kTransfer);
//   if (auto r = book.Finish(b.index, now_ms)) ... // report *r once
//
// Thread-compatible: CallSession::Core guards it with its mutex.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "common/cancel_token.h"
#include "pipeline/call_session.h"

namespace hotline::pipeline {

class TurnBook {
 public:
  struct Begun {
    int index = -1;     // the new turn's
    int previous = -1;  // the turn that was active (to be finished by the caller), or -1
    std::shared_ptr<CancelToken> token;  // the new turn's work
  };

  // Appends `report` (its index set, outcome as given, normally kPending) as the active turn with
  // a fresh cancel token. The active turn's token is cancelled and, if it is still pending, it is
  // superseded.
  Begun Begin(TurnReport report);
  // Appends a turn that is over as it starts (an echo that was discarded): never active, never
  // reported.
  void AppendFinished(TurnReport report);

  // REQUIRES: 0 <= index < size().
  TurnReport& at(int index) { return turns_[static_cast<size_t>(index)]; }
  const TurnReport& at(int index) const { return turns_[static_cast<size_t>(index)]; }
  size_t size() const { return turns_.size(); }
  const std::vector<TurnReport>& all() const { return turns_; }

  int active() const { return active_; }
  // Cancels the work of the active turn (barge-in, hang-up, a stopped answer).
  void CancelActive();
  // Cancels the active turn's work and gives it a fresh token for what it says instead (the
  // busy prompt of an answer that timed out). Null when no turn is active.
  std::shared_ptr<CancelToken> RenewActiveToken();

  // Settles turn `index` as `outcome` if it is still pending; true if it did.
  bool SettleIfPending(int index, TurnOutcome outcome);

  // Finish(index) reports nothing until Release(index).
  void Hold(int index);
  // Ends the hold on `index` (no-op if it is not held); true when Finish was asked meanwhile, so
  // the caller finishes it now.
  bool Release(int index);
  // Turn `index` is over: its report, once (a pending outcome becomes answered; turn_done is
  // stamped `now_ms` unless set). Nullopt while it is held (the finish waits for Release), when
  // it was reported already, or for an index below 0.
  std::optional<TurnReport> Finish(int index, double now_ms);

 private:
  std::vector<TurnReport> turns_;
  std::vector<bool> finished_;
  int active_ = -1;
  std::shared_ptr<CancelToken> active_token_;
  int held_ = -1;
  bool finish_deferred_ = false;
};

}  // namespace hotline::pipeline
