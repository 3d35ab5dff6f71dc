// The pieces of a call's turn control beside the TurnBook: the answer being prepared
// (AnswerInFlight: which turn, since when, and the pacing of its model request), what ends the
// call once the agent's last words have played (PendingEnd: a hang-up or a transfer), the
// re-prompts of a silent caller (SilenceTimer) and the keypad digits being typed (KeypadEntry).
//
//   AnswerInFlight a;
//   auto schedule = a.Start(idx, now);        // the model request follows `schedule`
//   int late = a.TakeTimedOut(clock, 8000);   // the turn whose answer took too long, or -1
//   a.Done(idx);                              // the answer came back
//
//   PendingEnd end;
//   end.Arm(AfterSpeech::kHangup, "goodbye", playout.StartOfNext(now));
//   if (auto e = end.TakeIfDue(now, playout.paused())) sink->Hangup(e->reason);
//
//   SilenceTimer silence(call.reprompt_after_ms, call.hold_reprompt_after_ms, call.reprompt_max);
//   switch (silence.Tick(quiet, 20)) { ... }  // per 20 ms frame: kReprompt, kGoodbye or kNone
//
// Thread-compatible: CallSession::Core guards AnswerInFlight and PendingEnd with its mutex; the
// SilenceTimer and the KeypadEntry belong to its listen strand.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/clock.h"
#include "llm/language_model.h"

namespace hotline::pipeline {

// What a turn's speech leads to once it has played.
enum class AfterSpeech { kNone, kHangup, kTransfer };

// The one answer a call prepares at a time (a new turn drops the old one's).
class AnswerInFlight {
 public:
  // Turn `idx`'s answer starts at `now`; nothing of it is heard yet, so its model tokens are
  // needed at once. Returns the schedule its model request follows.
  std::shared_ptr<llm::GenerationSchedule> Start(int idx, MonoTime now);
  // Turn `idx`'s answer is back (or abandoned): no longer pending. Nothing for another turn.
  void Done(int idx);
  // Whatever answer is pending is abandoned (a new turn began, the call hung up).
  void Drop() { pending_ = false; }
  // The pending answer has waited more than `timeout_ms` by `clock`: it is dropped and its turn
  // returned; else -1. The clock is read only while an answer is pending (this runs per frame).
  int TakeTimedOut(const Clock& clock, int timeout_ms);
  // Turn `idx` has sent more audio at `now`: the schedule of its model request and when its
  // audio was sent before (the answer's start the first time); nullopt for any other turn.
  // Pacing goes on after the answer is back: its last sentences are still being spoken.
  struct Pace {
    std::shared_ptr<llm::GenerationSchedule> schedule;
    MonoTime previous;
  };
  std::optional<Pace> Paced(int idx, MonoTime now);

  bool pending() const { return pending_; }

 private:
  bool pending_ = false;
  int turn_ = -1;
  MonoTime started_{};
  std::shared_ptr<llm::GenerationSchedule> schedule_;
  MonoTime paced_at_{};  // when the answer started, then when its last audio was sent
};

// A hang-up or transfer waiting for the agent's last words to play.
class PendingEnd {
 public:
  struct End {
    AfterSpeech what = AfterSpeech::kNone;
    std::string reason;
  };
  // `what` (not kNone) once the inbound stream reaches `at_ms`, for `reason`.
  void Arm(AfterSpeech what, std::string reason, int64_t at_ms);
  // Nothing ends the call (an interrupted goodbye does not hang up; a new turn supersedes it).
  void Cancel() { end_.what = AfterSpeech::kNone; }
  // The audio it waited for was held by a pause and sent again: it now waits until `at_ms`.
  void Postpone(int64_t at_ms);
  // The end, once due at `now` and no pause holds the audio; it is taken (happens once).
  std::optional<End> TakeIfDue(int64_t now, bool paused);

  bool armed() const { return end_.what != AfterSpeech::kNone; }

 private:
  End end_;
  int64_t at_ms_ = 0;
};

// Re-prompts for a caller who says nothing while the agent is idle: after `after_ms` of quiet
// (`hold_after_ms` once the caller asked to hold), a re-prompt; after `max_reprompts` of them
// with no turn from the caller in between, goodbye.
class SilenceTimer {
 public:
  enum class Action { kNone, kReprompt, kGoodbye };
  SilenceTimer(int after_ms, int hold_after_ms, int max_reprompts)
      : after_ms_(after_ms), hold_after_ms_(hold_after_ms), max_reprompts_(max_reprompts) {}

  // One frame of `frame_ms` went by; `quiet`: nobody talked and nothing was pending in it.
  Action Tick(bool quiet, int frame_ms);
  // The caller made a sound: the quiet starts again.
  void Heard() { quiet_ms_ = 0; }
  // A turn of the caller's was answered: they are back, re-prompts start again from none.
  void Answered() {
    reprompts_ = 0;
    holding_ = false;
  }
  // "Hold on, let me find my card": the next re-prompt waits hold_after_ms.
  void Hold() { holding_ = true; }

 private:
  int after_ms_, hold_after_ms_, max_reprompts_;
  int quiet_ms_ = 0;
  int reprompts_ = 0;
  bool holding_ = false;
};

// The keypad digits a caller is typing: '*' starts over, '#' (the caller's) submits, and the
// digits are submitted too once `timeout_ms` passes without another key.
class KeypadEntry {
 public:
  static constexpr size_t kMaxDigits = 32;  // more are dropped

  // A digit 0-9 at inbound time `now_ms` ('*' clears; '#' is the caller's to handle).
  void Press(char digit, int64_t now_ms);
  // Typing stopped `timeout_ms` ago with digits entered.
  bool Due(int64_t now_ms, int timeout_ms) const {
    return !digits_.empty() && last_ms_ >= 0 && now_ms - last_ms_ >= timeout_ms;
  }
  // The digits entered (cleared).
  std::string Take();
  bool empty() const { return digits_.empty(); }

 private:
  std::string digits_;
  int64_t last_ms_ = -1;
};

}  // namespace hotline::pipeline
