// CallSession's work before the caller finishes, with fakes: answers prepared from stable
// partials, the speculative start and its check against the final transcript, and the shorter
// end of turn a cached answer allows (call_session_prework.cc, call_session_turns.cc).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/testing/call_session_fixture.h"

namespace hotline::pipeline {
namespace {

using testing::CallSessionTest;
using testing::FakeRecognizer;
using testing::Silence;
using testing::Vowel;
using testing::WaitFor;

// A speculative start whose differently worded final transcript is being checked, with the
// check's look-up hanging on the answer strand until answerer_.Release().
class SpeculationCheckTest : public CallSessionTest {
 protected:
  // The caller's turn ends (inside Say's 700 ms of silence) with the check pending; false when
  // the look-up never started.
  bool StartAHangingCheck() {
    recognizer_.final_says_more = true;
    CachedAnswerForPartials();
    answerer_.free_peeks = 1;  // the partial's look-up answers, the final's hangs
    res_.call.speculation_check_ms = 1000;
    StartCall();
    Say();
    return WaitFor([&] {
      std::lock_guard lock(answerer_.mu);
      return answerer_.peeks.size() == 2;
    });
  }
};

TEST_F(CallSessionTest, PreparedAnswerIsSpokenWithoutAskingAgain) {
  const TurnAnswer prepared = CachedAnswerForPartials();
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return sink_->marks().size() == 1; }));
  ASSERT_TRUE(WaitFor([&] { return sink_->CountEvents("turn") == 1; }));
  EXPECT_EQ(answerer_.answers_started.load(), 0);
  EXPECT_EQ(answerer_.peeks.size(), 1u);
  TurnReport t = LastTurn();
  EXPECT_TRUE(t.prework_used);
  EXPECT_EQ(t.tier, TurnTier::kL3);
  EXPECT_EQ(t.answer, prepared.text);
  EXPECT_EQ(cache_.stats().hits, 1);  // synthesized ahead, played from the cache
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_prework_hits_total", "").value(), 1u);
  // It started before the final pass, which confirmed it; the record has the final's stamps.
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_speculation_hits_total", "").value(), 1u);
  EXPECT_EQ(t.transcript, "where is my order");
  EXPECT_GE(t.ledger.asr_final, 0);
  EXPECT_EQ(t.outcome, TurnOutcome::kAnswered);
  EXPECT_EQ(sink_->clears(), 0);
}

TEST_F(CallSessionTest, APartialNoCachedTierAnswersIsPrefetchedForTheModel) {
  recognizer_.stable_after_frames = 10;  // no peek_answer: the cached tiers have nothing
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return answerer_.answers_started.load() == 1; }));
  {
    std::lock_guard lock(answerer_.mu);
    ASSERT_EQ(answerer_.prefetches.size(), 1u);
    EXPECT_EQ(answerer_.prefetches[0], "where is my order");
  }
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_prefetches_total", "").value(), 1u);
}

TEST_F(CallSessionTest, ASpeculativeStartIsStoppedWhenTheFinalTranscriptDiffers) {
  recognizer_.final_says_more = true;
  CachedAnswerForPartials();
  answerer_.peek_only_for = "where is my order";  // the longer final has no cached answer
  answerer_.reply = "Your order is cancelled.";
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return answerer_.answers_started.load() == 1; }));
  FeedUntilIdle();
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_speculation_misses_total", "").value(), 1u);
  EXPECT_EQ(sink_->clears(), 1);
  auto turns = session_->Turns();
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].outcome, TurnOutcome::kSpeculationMissed);
  EXPECT_EQ(turns[1].transcript, "where is my order and cancel it");
  EXPECT_EQ(turns[1].answer, "Your order is cancelled.");
  EXPECT_EQ(turns[1].outcome, TurnOutcome::kAnswered);
}

TEST_F(CallSessionTest, ADifferentlyWordedFinalWithTheSameCachedAnswerKeepsTheSpeculation) {
  recognizer_.final_says_more = true;
  const TurnAnswer prepared = CachedAnswerForPartials();  // and the final, the same way
  res_.call.speculation_check_ms = 1000;  // on the test's clock: Say() goes on for ~460 ms
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return sink_->CountEvents("turn") == 1; }));
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_speculation_hits_total", "").value(), 1u);
  EXPECT_EQ(sink_->clears(), 0);
  EXPECT_EQ(answerer_.answers_started.load(), 0);
  TurnReport t = LastTurn();
  EXPECT_EQ(t.transcript, "where is my order and cancel it");
  EXPECT_EQ(t.answer, prepared.text);
}

TEST_F(SpeculationCheckTest,
       ASpeculationCheckTheAnswerStrandCannotAnswerHoldsNeitherTheListenStrandNorTheTurn) {
  // The look-up that would confirm a differently worded final hangs on the answer strand: the
  // listen strand goes on taking frames, and once call.speculation_check_ms has passed on the
  // call's clock the final transcript is answered on its own.
  ASSERT_TRUE(StartAHangingCheck());
  Feed(Silence(200));  // taken at once: nothing waits on the hanging look-up
  EXPECT_FALSE(session_->idle());
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_speculation_misses_total", "").value(), 0u);
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_speculation_hits_total", "").value(), 0u);
  Feed(Silence(800));  // past the check's 1000 ms: a miss
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_speculation_misses_total", "").value(), 1u);
  EXPECT_EQ(sink_->clears(), 1);
  answerer_.Release();  // the late look-up's reply is dropped; the final's answer runs
  ASSERT_TRUE(WaitFor([&] { return answerer_.answers_started.load() == 1; }));
  FeedUntilIdle();
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_speculation_hits_total", "").value(), 0u);
  auto turns = session_->Turns();
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].outcome, TurnOutcome::kSpeculationMissed);
  EXPECT_EQ(turns[1].transcript, "where is my order and cancel it");
  EXPECT_EQ(turns[1].answer, "Your order ships tomorrow.");
  EXPECT_EQ(turns[1].outcome, TurnOutcome::kAnswered);
}

TEST_F(SpeculationCheckTest, KeypadDigitsDuringASpeculationCheckSettleItFirst) {
  // A turn that starts while the check is pending (here '#') settles it as a miss first, so the
  // turns keep their order: the speculation, the final transcript's turn, then the digits.
  ASSERT_TRUE(StartAHangingCheck());
  for (char d : std::string("12#")) ASSERT_TRUE(session_->PushDtmf(d).ok());
  // The digits' turn has begun (and superseded the final's) before the answer strand is let go.
  ASSERT_TRUE(WaitFor([&] { return session_->Turns().size() == 3; }));
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_speculation_misses_total", "").value(), 1u);
  answerer_.Release();
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard lock(answerer_.mu);
    return answerer_.pins.size() == 1;
  }));
  FeedUntilIdle();
  auto turns = session_->Turns();
  ASSERT_EQ(turns.size(), 3u);
  EXPECT_EQ(turns[0].outcome, TurnOutcome::kSpeculationMissed);
  EXPECT_EQ(turns[1].transcript, "where is my order and cancel it");
  EXPECT_EQ(turns[1].outcome, TurnOutcome::kSuperseded);
  EXPECT_EQ(turns[2].kind, TurnKind::kDtmf);
  EXPECT_EQ(turns[2].answer, "Thanks, you are verified.");
}

TEST_F(CallSessionTest, WithoutSpeculationThePreparedAnswerWaitsForTheFinal) {
  res_.call.prework_speculate = false;
  recognizer_.final_says_more = true;
  CachedAnswerForPartials();
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return answerer_.answers_started.load() == 1; }));
  FeedUntilIdle();
  EXPECT_EQ(sink_->clears(), 0);
  EXPECT_EQ(session_->Turns().size(), 1u);
}

TEST_F(CallSessionTest, AFinalTheAnswererDoesNotTrustStopsTheSpeculationAndIsAnswered) {
  CachedAnswerForPartials();
  answerer_.trust_floor = 0.95;  // the final pass is 0.9 sure of the same words
  answerer_.reply = "Is this about an order?";
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return answerer_.answers_started.load() == 1; }));
  FeedUntilIdle();
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_speculation_misses_total", "").value(), 1u);
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_speculation_hits_total", "").value(), 0u);
  auto turns = session_->Turns();
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].outcome, TurnOutcome::kSpeculationMissed);
  EXPECT_EQ(turns[1].transcript, "where is my order");
  EXPECT_FALSE(turns[1].prework_used);
  EXPECT_EQ(turns[1].answer, "Is this about an order?");
  std::lock_guard lock(answerer_.mu);
  ASSERT_EQ(answerer_.asr_confidences.size(), 1u);
  EXPECT_NEAR(answerer_.asr_confidences[0].value_or(0), 0.9, 1e-6);
}

TEST_F(CallSessionTest, WithoutSpeculationAFinalTheAnswererDoesNotTrustIsAnsweredNotPrepared) {
  res_.call.prework_speculate = false;
  CachedAnswerForPartials();
  answerer_.trust_floor = 0.95;
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return answerer_.answers_started.load() == 1; }));
  FeedUntilIdle();
  auto turns = session_->Turns();
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_FALSE(turns[0].prework_used);
  EXPECT_EQ(turns[0].answer, answerer_.reply);
  EXPECT_EQ(sink_->clears(), 0);
}

TEST_F(CallSessionTest, ACachedAnswerForThePartialShortensEndpointing) {
  CachedAnswerForPartials();
  StartCall();
  Feed(Silence(200));
  Feed(Vowel(600));
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard lock(answerer_.mu);
    return answerer_.peeks.size() == 1;
  }));
  // Let the hint reach the listen worker (posted from the answer worker) before the silence.
  ASSERT_TRUE(WaitFor([&] { return session_->queued_audio() == 0; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Feed(Silence(700));
  ASSERT_TRUE(WaitFor([&] { return sink_->CountEvents("turn") == 1; }));
  TurnReport t = LastTurn();
  EXPECT_TRUE(t.prework_used);
  // complete_silence_ms (240) instead of trailing_silence_ms (500), give or take one frame.
  EXPECT_NEAR(t.ledger.end_of_turn - t.ledger.speech_end, res_.endpointer.complete_silence_ms,
              20.0);
}

// A stable partial of `words`, then silence: the end of turn after the caller's last word.
class UnderstoodPartialTest : public CallSessionTest {
 protected:
  // `looked_up`: the partial goes to the answer worker (Peek, Understands, then Prefetch).
  double EndOfTurnAfterSpeech(const std::string& words, bool looked_up = true) {
    recognizer_ = std::make_unique<FakeRecognizer>(std::vector<std::string>{words});
    recognizer_->stable_after_frames = 10;
    res_.recognizer = recognizer_.get();
    StartCall();
    Feed(Silence(200));
    Feed(Vowel(600));
    // The look-up has finished (the prefetch comes after any hint it posts), and the listen
    // worker has run what it posted: the silence below meets the hint, if there is one.
    if (looked_up) {
      EXPECT_TRUE(WaitFor([&] {
        std::lock_guard lock(answerer_.mu);
        return answerer_.prefetches.size() == 1;
      }));
    }
    EXPECT_TRUE(WaitFor([&] { return session_->queued_audio() == 0; }));
    Feed(Silence(700));
    EXPECT_TRUE(WaitFor([&] { return sink_->CountEvents("turn") >= 1; }));
    TurnReport t = session_->Turns().front();
    return t.ledger.end_of_turn - t.ledger.speech_end;
  }
  std::unique_ptr<FakeRecognizer> recognizer_;
};

TEST_F(UnderstoodPartialTest, APartialTheLineUnderstandsShortensEndpointing) {
  answerer_.understands = true;  // no cached tier answers it, but it reads as a whole question
  EXPECT_NEAR(EndOfTurnAfterSpeech("what was my bill last month"),
              res_.endpointer.complete_silence_ms, 20.0);
  {
    std::lock_guard lock(answerer_.mu);
    EXPECT_EQ(answerer_.understood, (std::vector<std::string>{"what was my bill last month"}));
    EXPECT_EQ(answerer_.prefetches.size(), 1u);  // the model's prompt is still prepared
  }
  ASSERT_TRUE(WaitFor([&] { return answerer_.answers_started.load() == 1; }));
}

TEST_F(UnderstoodPartialTest, WithoutUnderstoodEndsTurnOnlyACachedAnswerShortensEndpointing) {
  answerer_.understands = true;
  res_.call.understood_ends_turn = false;
  EXPECT_NEAR(EndOfTurnAfterSpeech("what was my bill last month"),
              res_.endpointer.trailing_silence_ms, 20.0);
  std::lock_guard lock(answerer_.mu);
  EXPECT_TRUE(answerer_.understood.empty());
}

TEST_F(UnderstoodPartialTest, ARequestForAPersonShortensEndpointingWithoutALookUp) {
  EXPECT_NEAR(EndOfTurnAfterSpeech("can i talk to a real person", /*looked_up=*/false),
              res_.endpointer.complete_silence_ms, 20.0);
  // The transfer waits until the caller has heard transfer_text: the line's time must go on.
  FeedUntilIdle();
  ASSERT_TRUE(WaitFor([&] { return !sink_->transfer().empty(); }));
  std::lock_guard lock(answerer_.mu);
  EXPECT_TRUE(answerer_.peeks.empty());
  EXPECT_TRUE(answerer_.understood.empty());
}

TEST_F(CallSessionTest, WithoutACachedAnswerTheFullSilenceEndsTheTurn) {
  recognizer_.stable_after_frames = 10;
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return sink_->CountEvents("turn") == 1; }));
  TurnReport t = LastTurn();
  EXPECT_NEAR(t.ledger.end_of_turn - t.ledger.speech_end, res_.endpointer.trailing_silence_ms,
              20.0);
}

}  // namespace
}  // namespace hotline::pipeline
