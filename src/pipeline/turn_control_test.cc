// AnswerInFlight, PendingEnd, SilenceTimer and KeypadEntry: the answer a call is preparing (its
// time-out and model pacing), the hang-up or transfer that waits for the agent's last words, the
// re-prompts of a silent caller and the keypad digits being typed.
#include "pipeline/turn_control.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <utility>

namespace hotline::pipeline {
namespace {

using std::chrono::milliseconds;

const MonoTime kT0 = MonoTime(std::chrono::seconds(100));

TEST(AnswerInFlight, AStartedAnswerIsUrgentUntilItsTurnIsDone) {
  AnswerInFlight a;
  EXPECT_FALSE(a.pending());
  auto schedule = a.Start(3, kT0);
  ASSERT_NE(schedule, nullptr);
  EXPECT_TRUE(a.pending());
  EXPECT_EQ(schedule->Get().priority, 0);
  EXPECT_EQ(schedule->Get().deadline, kT0);
  a.Done(2);  // another turn's result changes nothing
  EXPECT_TRUE(a.pending());
  a.Done(3);
  EXPECT_FALSE(a.pending());
  a.Start(4, kT0);
  a.Drop();
  EXPECT_FALSE(a.pending());
}

TEST(AnswerInFlight, TimesOutOnceAfterItsLimit) {
  FakeClock clock;
  clock.Set(kT0);
  AnswerInFlight a;
  EXPECT_EQ(a.TakeTimedOut(clock, 1000), -1);  // nothing pending
  a.Start(5, kT0);
  clock.Set(kT0 + milliseconds(1000));
  EXPECT_EQ(a.TakeTimedOut(clock, 1000), -1);  // at the limit: not yet
  clock.Set(kT0 + milliseconds(1001));
  EXPECT_EQ(a.TakeTimedOut(clock, 1000), 5);
  EXPECT_FALSE(a.pending());
  clock.Set(kT0 + milliseconds(5000));
  EXPECT_EQ(a.TakeTimedOut(clock, 1000), -1);  // once
  a.Start(6, kT0);
  a.Done(6);
  EXPECT_EQ(a.TakeTimedOut(clock, 1000), -1);  // answered in time
}

TEST(AnswerInFlight, PacesOnlyItsOwnTurnFromWhenItsAudioWasLastSent) {
  AnswerInFlight a;
  EXPECT_FALSE(a.Paced(0, kT0).has_value());  // nothing started
  auto schedule = a.Start(1, kT0);
  EXPECT_FALSE(a.Paced(0, kT0).has_value());
  EXPECT_FALSE(a.Paced(-1, kT0).has_value());
  auto first = a.Paced(1, kT0 + milliseconds(300));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->schedule, schedule);
  EXPECT_EQ(first->previous, kT0);  // the answer's start
  a.Done(1);                        // its last sentences are still being spoken
  auto second = a.Paced(1, kT0 + milliseconds(900));
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->previous, kT0 + milliseconds(300));
  auto next = a.Start(2, kT0 + milliseconds(2000));  // a new answer: a new schedule
  EXPECT_NE(next, schedule);
  EXPECT_FALSE(a.Paced(1, kT0 + milliseconds(2100)).has_value());
}

TEST(PendingEnd, HappensOnceWhenItsAudioHasPlayedAndNoPauseHoldsIt) {
  PendingEnd e;
  EXPECT_FALSE(e.armed());
  EXPECT_FALSE(e.TakeIfDue(10'000, false).has_value());
  e.Arm(AfterSpeech::kTransfer, "caller asked for a person", 2000);
  EXPECT_TRUE(e.armed());
  EXPECT_FALSE(e.TakeIfDue(1999, false).has_value());  // still playing
  EXPECT_FALSE(e.TakeIfDue(2000, true).has_value());   // a pause holds the audio
  auto due = e.TakeIfDue(2000, false);
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(due->what, AfterSpeech::kTransfer);
  EXPECT_EQ(due->reason, "caller asked for a person");
  EXPECT_FALSE(e.armed());
  EXPECT_FALSE(e.TakeIfDue(3000, false).has_value());
}

TEST(PendingEnd, APostponedEndWaitsForTheResentAudioAndACancelledOneNeverHappens) {
  PendingEnd e;
  e.Postpone(5000);  // nothing armed: nothing to move
  e.Arm(AfterSpeech::kHangup, "goodbye", 1000);
  e.Postpone(4000);  // held audio sent again after a pause
  EXPECT_FALSE(e.TakeIfDue(3999, false).has_value());
  EXPECT_TRUE(e.TakeIfDue(4000, false).has_value());
  e.Arm(AfterSpeech::kHangup, "goodbye", 1000);
  e.Cancel();  // the caller barged in on the goodbye
  EXPECT_FALSE(e.armed());
  EXPECT_FALSE(e.TakeIfDue(9000, false).has_value());
}

TEST(SilenceTimer, RepromptsAfterTheQuietThenSaysGoodbye) {
  SilenceTimer t(/*after_ms=*/100, /*hold_after_ms=*/300, /*max_reprompts=*/2);
  using A = SilenceTimer::Action;
  auto ticks_until_action = [&](bool quiet) {
    for (int i = 1; i <= 100; ++i) {
      if (A a = t.Tick(quiet, 20); a != A::kNone) return std::make_pair(i, a);
    }
    return std::make_pair(0, A::kNone);
  };
  EXPECT_EQ(ticks_until_action(true), std::make_pair(5, A::kReprompt));  // 100 ms of quiet
  EXPECT_EQ(ticks_until_action(true), std::make_pair(5, A::kReprompt));
  EXPECT_EQ(ticks_until_action(true), std::make_pair(5, A::kGoodbye));  // after two re-prompts
  EXPECT_EQ(ticks_until_action(false), std::make_pair(0, A::kNone));    // nothing while not quiet
}

TEST(SilenceTimer, SpeechRestartsTheQuietAndAnAnsweredTurnTheReprompts) {
  SilenceTimer t(100, 300, 1);
  using A = SilenceTimer::Action;
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t.Tick(true, 20), A::kNone);
  t.Heard();  // 80 ms, then a sound: the quiet starts again
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t.Tick(true, 20), A::kNone);
  EXPECT_EQ(t.Tick(true, 20), A::kReprompt);
  t.Answered();  // the caller came back: the next silence re-prompts again, not goodbye
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t.Tick(true, 20), A::kNone);
  EXPECT_EQ(t.Tick(true, 20), A::kReprompt);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t.Tick(true, 20), A::kNone);
  EXPECT_EQ(t.Tick(true, 20), A::kGoodbye);
}

TEST(SilenceTimer, AHoldWaitsLongerOnce) {
  SilenceTimer t(100, 300, 5);
  using A = SilenceTimer::Action;
  t.Hold();
  for (int i = 0; i < 14; ++i) EXPECT_EQ(t.Tick(true, 20), A::kNone);
  EXPECT_EQ(t.Tick(true, 20), A::kReprompt);  // 300 ms
  for (int i = 0; i < 4; ++i) EXPECT_EQ(t.Tick(true, 20), A::kNone);
  EXPECT_EQ(t.Tick(true, 20), A::kReprompt);  // back to 100 ms after the hold's re-prompt
}

TEST(KeypadEntry, CollectsDigitsStartsOverOnStarAndIsDueAfterTheTimeout) {
  KeypadEntry k;
  EXPECT_TRUE(k.empty());
  EXPECT_FALSE(k.Due(10'000, 2000));
  k.Press('1', 1000);
  k.Press('2', 1500);
  EXPECT_FALSE(k.Due(3499, 2000));
  EXPECT_TRUE(k.Due(3500, 2000));
  k.Press('*', 3400);  // start over
  EXPECT_TRUE(k.empty());
  EXPECT_FALSE(k.Due(9000, 2000));
  k.Press('4', 4000);
  k.Press('2', 4100);
  EXPECT_EQ(k.Take(), "42");
  EXPECT_TRUE(k.empty());
  EXPECT_FALSE(k.Due(9000, 2000));
}

TEST(KeypadEntry, KeepsAtMostItsMaximumOfDigits) {
  KeypadEntry k;
  for (size_t i = 0; i < KeypadEntry::kMaxDigits + 10; ++i) k.Press('7', 100);
  EXPECT_EQ(k.Take(), std::string(KeypadEntry::kMaxDigits, '7'));
}

}  // namespace
}  // namespace hotline::pipeline
