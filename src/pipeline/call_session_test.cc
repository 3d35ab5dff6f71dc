// CallSession state machine with fakes: frames in, sink calls out.
#include "pipeline/call_session.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "asr/deadline_recognizer.h"
#include "audio/g711.h"
#include "pipeline/testing/call_session_fixture.h"
#include "pipeline/testing/fakes.h"

namespace hotline::pipeline {
namespace {

using testing::CallSessionTest;
using testing::FakeRecognizer;
using testing::Silence;
using testing::TestSink;
using testing::Vowel;
using testing::WaitFor;

TEST(CallPhrases, MatchWholeWordsAndEndings) {
  EXPECT_EQ(PhraseText("Okay, BYE!"), "okay bye");
  EXPECT_EQ(PhraseText("That's all."), "thats all");
  const std::vector<std::string> bye = {"bye", "that's all"};
  EXPECT_TRUE(MatchesPhrase("okay bye", bye, false));
  EXPECT_TRUE(MatchesPhrase("thats all", bye, false));
  EXPECT_FALSE(MatchesPhrase("bye and where is my order", bye, false));
  EXPECT_FALSE(MatchesPhrase("goodbye", {"bye"}, false));  // whole words only
  EXPECT_TRUE(MatchesPhrase("can i talk to an agent please", {"agent"}, true));
  EXPECT_FALSE(MatchesPhrase("agents of change", {"agent"}, true));
}

TEST(CallPhrases, ChineseAndAccentedTextIsHeard) {
  // A Chinese turn is words (one per character), not an empty "not heard" turn.
  EXPECT_EQ(PhraseText("好的，再见！"), "好 的 再 见");
  EXPECT_EQ(PhraseText("我要转人工"), "我 要 转 人 工");
  EXPECT_EQ(PhraseText("Café — très bien…"), "café très bien");
  EXPECT_TRUE(MatchesPhrase(PhraseText("好的，再见！"), {"再见"}, false));
  EXPECT_TRUE(MatchesPhrase(PhraseText("我要转人工"), {"转人工"}, true));
  EXPECT_FALSE(MatchesPhrase(PhraseText("再见到你真好"), {"再见"}, false));
}

TEST(CallConfig, ValidateNamesTheField) {
  CallConfig c;
  EXPECT_TRUE(c.Validate().ok());
  c.output_chunk_ms = 30;
  EXPECT_NE(c.Validate().message().find("output_chunk_ms"), std::string::npos);
}

TEST_F(CallSessionTest, GreetsAnswersAndRecordsTheLedger) {
  res_.call.greeting_text = "Hello, how can I help?";
  StartCall();
  ASSERT_TRUE(WaitFor([&] { return sink_->marks().size() == 1; }));
  EXPECT_GT(sink_->bytes(), 0u);
  FeedUntilIdle();
  Say();
  ASSERT_TRUE(WaitFor([&] { return sink_->marks().size() == 2; }));
  {
    std::lock_guard lock(answerer_.mu);
    ASSERT_EQ(answerer_.turns.size(), 1u);
    EXPECT_EQ(answerer_.turns[0], "where is my order");
  }
  ASSERT_TRUE(WaitFor([&] { return sink_->CountEvents("turn") == 2; }));
  auto turns = session_->Turns();
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].kind, TurnKind::kGreeting);
  EXPECT_EQ(turns[1].kind, TurnKind::kCaller);
  EXPECT_EQ(turns[1].outcome, TurnOutcome::kAnswered);
  EXPECT_EQ(turns[1].tier, TurnTier::kKnowledgeBase);
  EXPECT_EQ(turns[1].answer, answerer_.reply);
  const TurnLedger& l = turns[1].ledger;
  EXPECT_GE(l.speech_start, 0);
  EXPECT_LT(l.speech_start, l.speech_end);
  EXPECT_LE(l.speech_end, l.end_of_turn);
  EXPECT_GE(l.first_audio_sent, l.asr_final);
  EXPECT_GE(l.understood, l.asr_final);
  EXPECT_LE(l.understood, l.cache_result);
  EXPECT_GE(l.turn_done, l.first_audio_sent);
  EXPECT_LT(l.barge_in, 0);
  // Speech end is ~500 ms (trailing silence) before the end of turn.
  EXPECT_NEAR(l.end_of_turn - l.speech_end, 500, 60);
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_turns_total", "").value(), 1u);
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_answers_total", "", {{"tier", "kb"}}).value(), 1u);
  // What answering added to endpointing, by tier; the greeting is not a caller's turn.
  auto after = [&](const char* tier) {
    return metrics_
        .GetHistogram("hotline_pipeline_after_endpoint_seconds", "", LatencyBucketsSeconds(),
                      {{"tier", tier}})
        .Snap();
  };
  const Histogram::Snapshot kb = after("kb");
  EXPECT_EQ(kb.count, 1u);
  EXPECT_NEAR(kb.sum, (l.first_audio_sent - l.end_of_turn) / 1000.0, 1e-6);
  EXPECT_EQ(after("greeting").count, 0u);
}

TEST_F(CallSessionTest, SecondTimeTheAnswerAudioComesFromTheCache) {
  StartCall();
  Say();
  FeedUntilIdle();
  Say();
  FeedUntilIdle();
  std::lock_guard lock(synth_->mu);
  EXPECT_EQ(synth_->texts.size(), 1u);  // the second answer was an audio-cache hit
  EXPECT_GE(cache_.stats().hits, 1);
}

TEST_F(CallSessionTest, BargeInClearsCancelsAndListens) {
  answerer_.stream_sentences = {"First, let me look that up for you in our records.",
                                "This second sentence is also rather long to speak."};
  answerer_.block = true;  // the answer is still "generating" while its first sentence plays
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return sink_->bytes() > 0; }));
  // The caller talks over the agent, louder than the agent's echo, with words that are more than
  // a backchannel (the recognizer's partial comes after 5 frames), at length.
  recognizer_.stable_after_frames = 5;
  Feed(Vowel(1200, 6000));
  ASSERT_TRUE(WaitFor([&] { return sink_->clears() == 1; }));
  EXPECT_TRUE(WaitFor([&] { return answerer_.saw_cancel.load(); }));
  auto turns = session_->Turns();
  ASSERT_GE(turns.size(), 1u);
  EXPECT_EQ(turns[0].outcome, TurnOutcome::kBargeIn);
  EXPECT_GE(turns[0].ledger.barge_in, 0);
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_barge_ins_total", "").value(), 1u);
  // The interrupting speech is the next turn.
  answerer_.Release();
  Feed(Silence(700));
  ASSERT_TRUE(WaitFor([&] { return answerer_.answers_started.load() == 2; }));
}

// The model is told only what the caller heard of a reply cut short: the history's answer is
// the words played before the barge-in, marked as cut.
TEST_F(CallSessionTest, AfterABargeInTheHistoryKeepsOnlyWhatTheCallerHeard) {
  answerer_.reply =
      "Your refund was sent on Monday and it should reach your card within five to seven "
      "business days, and we will email you as soon as it arrives.";
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return sink_->bytes() > 0; }));
  Feed(Silence(600));  // the caller hears the start of the reply
  recognizer_.stable_after_frames = 5;
  Feed(Vowel(1200, 6000));
  ASSERT_TRUE(WaitFor(
      [&] { return metrics_.GetCounter("hotline_pipeline_barge_ins_total", "").value() == 1; }));
  Feed(Silence(700));
  ASSERT_TRUE(WaitFor([&] { return answerer_.answers_started.load() == 2; }));
  std::lock_guard lock(answerer_.mu);
  ASSERT_EQ(answerer_.histories.size(), 2u);
  const std::vector<answer::ChatMessage>& h = answerer_.histories[1];
  ASSERT_EQ(h.size(), 2u);
  EXPECT_EQ(h[1].role, "assistant");
  ASSERT_TRUE(h[1].content.ends_with(" …")) << h[1].content;
  const std::string heard = h[1].content.substr(0, h[1].content.size() - std::string(" …").size());
  EXPECT_FALSE(heard.empty());
  EXPECT_LT(heard.size(), answerer_.reply.size()) << heard;  // cut short
  EXPECT_TRUE(answerer_.reply.starts_with(heard)) << heard;
}

// Just in time: the model's request is urgent while the caller hears nothing of the answer, and
// once the first sentence is playing its next tokens are due only when that audio ends.
TEST_F(CallSessionTest, TheModelIsUrgentUntilTheFirstSentencePlays) {
  answerer_.stream_sentences = {"First, let me look that up for you in our records."};
  answerer_.block = true;
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return answerer_.schedule.load() != nullptr; }));
  const llm::GenerationSchedule* pace = answerer_.schedule.load();
  {
    std::lock_guard lock(answerer_.mu);
    EXPECT_EQ(answerer_.schedule_at_start.priority, 0);
    EXPECT_LE(answerer_.schedule_at_start.deadline, clock_.Now());
  }
  ASSERT_TRUE(
      WaitFor([&] { return pace->Get().priority == llm::GenerationSchedule::kPlayingPriority; }));
  // The sentence (10 ms of tone per character, ~500 ms) is still to play on the line's clock; the
  // next one is due before it ends, less the time this one took to arrive.
  EXPECT_GT(pace->Get().deadline, clock_.Now());
  answerer_.Release();
  FeedUntilIdle();
  EXPECT_EQ(LastTurn().outcome, TurnOutcome::kAnswered);
}

TEST_F(CallSessionTest, ACoughPausesTheAgentThenItCarriesOn) {
  answerer_.stream_sentences = {"First, let me look that up for you in our records.",
                                "This second sentence is also rather long to speak."};
  StartCall();
  Say();
  // The whole answer has been sent (its end mark too) and is playing.
  ASSERT_TRUE(WaitFor([&] { return sink_->marks().size() == 1; }));
  const size_t sent = sink_->bytes();
  // 120 ms of loud caller sound: enough to pause playback, too short to confirm a barge-in.
  Feed(Vowel(120, 6000));
  EXPECT_EQ(sink_->clears(), 1);
  Feed(Silence(200));
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_barge_in_pauses_total", "").value(), 1u);
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_barge_in_resumes_total", "").value(), 1u);
  EXPECT_EQ(metrics_.GetCounter("hotline_pipeline_barge_ins_total", "").value(), 0u);
  // The unplayed rest of the answer went out again, followed by a fresh end mark.
  EXPECT_GT(sink_->bytes(), sent);
  auto marks = sink_->marks();
  ASSERT_EQ(marks.size(), 2u);
  EXPECT_EQ(marks[1], marks[0] + "-r1");
  FeedUntilIdle();
  EXPECT_EQ(session_->Turns()[0].outcome, TurnOutcome::kAnswered);
  EXPECT_EQ(sink_->clears(), 1);
}

// One text pass: the first-chunk rule (an early cut at a clause once a few words are in) starts
// the turn's speech sooner; the answer's later sentences are spoken whole.
TEST_F(CallSessionTest, OnlyTheTurnsFirstSentenceIsCutEarly) {
  answerer_.stream_sentences = {"First of all, let me look that up for you.",
                                "Your parcel left today, and it arrives on Monday."};
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return sink_->marks().size() == 1; }));
  EXPECT_EQ(Synthesized(),
            "First of all, let me look that up for you.|"
            "Your parcel left today, and it arrives on Monday.|");
  FeedUntilIdle();
}

TEST_F(CallSessionTest, LeadingSilenceOfATurnIsNotSent) {
  answerer_.stream_sentences = {"One.", "Two."};
  synth_->lead_silence_ms = 200;  // the synthesizer opens each utterance with silence
  StartCall();
  Say();
  FeedUntilIdle();
  // "One." and "Two." are 40 ms of tone each (10 ms per character); only the turn's opening
  // silence is dropped, the pause between the sentences stays.
  EXPECT_EQ(sink_->bytes(), (40 + 200 + 40) * 8u);
}

TEST_F(CallSessionTest, LeadTrimOffSendsEverything) {
  answerer_.stream_sentences = {"One.", "Two."};
  synth_->lead_silence_ms = 200;
  res_.call.lead_trim_max_ms = 0;
  StartCall();
  Say();
  FeedUntilIdle();
  EXPECT_EQ(sink_->bytes(), (200 + 40 + 200 + 40) * 8u);
}

TEST_F(CallSessionTest, RepromptsThenSaysGoodbyeAndHangsUp) {
  res_.call.reprompt_after_ms = 1000;
  res_.call.reprompt_max = 1;
  StartCall();
  Feed(Silence(1100));
  ASSERT_TRUE(WaitFor([&] { return sink_->marks().size() == 1; }));
  EXPECT_EQ(LastTurn().kind, TurnKind::kReprompt);
  EXPECT_EQ(LastTurn().answer, res_.call.reprompt_text);
  FeedUntilIdle();
  Feed(Silence(1100));
  FeedUntilIdle();
  ASSERT_TRUE(WaitFor([&] { return !sink_->hangup().empty(); }));
  EXPECT_EQ(sink_->hangup(), "no response from caller");
  EXPECT_TRUE(session_->ended());
  EXPECT_EQ(LastTurn().answer, res_.call.goodbye_text);
}

// At the call's longest length the answer in progress is finished and heard, then the caller
// hears the time-limit goodbye and the call is hung up.
TEST_F(CallSessionTest, TimeLimitLetsTheAnswerFinishThenSaysGoodbye) {
  StartCall(/*max_call_ms=*/2000);
  Feed(Silence(1000));
  Say();  // ends past 2 s: the answer is still being said when the limit comes
  FeedUntilIdle();
  // The call's clock goes on with its audio: under a slow (sanitizer) build the answer may have
  // ended, and the session gone idle, before the limit came, so audio keeps coming meanwhile.
  ASSERT_TRUE(WaitFor([&] {
    if (!sink_->hangup().empty()) return true;
    if (!session_->ended()) Feed(Silence(20));
    return false;
  }));
  EXPECT_EQ(sink_->hangup(), "time limit reached");
  auto turns = session_->Turns();
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].outcome, TurnOutcome::kAnswered);
  EXPECT_EQ(turns[1].kind, TurnKind::kTimeLimit);
  EXPECT_EQ(turns[1].outcome, TurnOutcome::kTimeLimit);
  EXPECT_EQ(turns[1].answer, res_.call.time_limit_text);
  const std::string said = Synthesized();  // the answer whole, then the goodbye
  EXPECT_EQ(said.find(answerer_.reply + "|"), 0u) << said;
  EXPECT_NE(said.find("|We have reached the time limit"), std::string::npos) << said;
  EXPECT_TRUE(session_->ended());
}

// An answer that does not come within the grace is cut short for the goodbye.
TEST_F(CallSessionTest, TimeLimitCutsAStuckAnswerShortAfterTheGrace) {
  res_.call.answer_timeout_ms = 600000;
  answerer_.block = true;
  StartCall(/*max_call_ms=*/1500);
  Say();
  ASSERT_TRUE(WaitFor([&] { return answerer_.answers_started.load() == 1; }));
  Feed(Silence(kTimeLimitGraceMs - 1000));
  EXPECT_TRUE(sink_->hangup().empty());
  EXPECT_EQ(Synthesized(), "");  // still waiting for the answer: nothing said yet
  Feed(Silence(1000));
  FeedUntilIdle();
  ASSERT_TRUE(WaitFor([&] { return !sink_->hangup().empty(); }));
  EXPECT_EQ(sink_->hangup(), "time limit reached");
  // The stuck answer's token was raised (its worker notices within a poll, 2 ms when not loaded).
  EXPECT_TRUE(WaitFor([&] { return answerer_.saw_cancel.load(); }));
  EXPECT_EQ(LastTurn().kind, TurnKind::kTimeLimit);
  answerer_.Release();
}

// With no time-limit text configured the call is hung up at the limit without a word.
TEST_F(CallSessionTest, TimeLimitWithoutATextHangsUpSilently) {
  res_.call.time_limit_text = "";
  StartCall(/*max_call_ms=*/1000);
  Feed(Silence(1100));
  ASSERT_TRUE(WaitFor([&] { return !sink_->hangup().empty(); }));
  EXPECT_EQ(sink_->hangup(), kHangupTimeLimit);
  EXPECT_EQ(Synthesized(), "");
  EXPECT_EQ(LastTurn().outcome, TurnOutcome::kTimeLimit);
  EXPECT_TRUE(session_->ended());
}

TEST_F(CallSessionTest, GoodbyeHangsUpAfterTheGoodbyeHasPlayed) {
  recognizer_.SetTexts({"okay thank you bye"});
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return sink_->marks().size() == 1; }));
  EXPECT_TRUE(sink_->hangup().empty());  // not before the goodbye has played
  FeedUntilIdle();
  ASSERT_TRUE(WaitFor([&] { return !sink_->hangup().empty(); }));
  EXPECT_EQ(sink_->hangup(), "caller said goodbye");
  EXPECT_TRUE(answerer_.turns.empty());
  EXPECT_EQ(session_->Turns().back().outcome, TurnOutcome::kGoodbye);
}

TEST_F(CallSessionTest, AgentRequestTransfers) {
  recognizer_.SetTexts({"can i talk to a real person please"});
  StartCall();
  Say();
  FeedUntilIdle();
  ASSERT_TRUE(WaitFor([&] { return !sink_->transfer().empty(); }));
  EXPECT_EQ(sink_->transfer(), "caller asked for an agent");
  EXPECT_EQ(LastTurn().answer, res_.call.transfer_text);
}

// Social turns are the session's: "say that again" repeats the last reply, a thank-you is
// welcomed with "anything else?", and a "no" to that ends the call. "Please don't hang up" is
// no goodbye: the answer tiers get it.
TEST_F(CallSessionTest, SocialTurnsAreAnsweredByTheSessionAndANoAfterThanksEndsTheCall) {
  recognizer_.SetTexts({"where is my order", "sorry, what was that?", "please don't hang up",
                        "thank you so much", "no"});
  StartCall();
  auto social = [&](const char* act) {
    return metrics_.GetCounter("hotline_pipeline_social_turns_total", "", {{"act", act}}).value();
  };
  Say();
  FeedUntilIdle();
  Say();
  FeedUntilIdle();
  EXPECT_EQ(LastTurn().tier, TurnTier::kSocial);
  EXPECT_EQ(LastTurn().answer, answerer_.reply);  // the first answer once more
  Say();
  FeedUntilIdle();
  EXPECT_EQ(LastTurn().tier, TurnTier::kKnowledgeBase);
  EXPECT_TRUE(sink_->hangup().empty());
  Say();
  FeedUntilIdle();
  EXPECT_EQ(LastTurn().answer, res_.call.thanks_text);
  EXPECT_EQ(LastTurn().outcome, TurnOutcome::kAnswered);
  Say();
  FeedUntilIdle();
  ASSERT_TRUE(WaitFor([&] { return !sink_->hangup().empty(); }));
  EXPECT_EQ(sink_->hangup(), "caller said goodbye");
  {
    std::lock_guard lock(answerer_.mu);
    EXPECT_EQ(answerer_.turns.size(), 2u);  // the order and "please don't hang up"
  }
  EXPECT_EQ(social("repeat"), 1u);
  EXPECT_EQ(social("thanks"), 1u);
}

// A caller about to ask, asking what the line is for, or acknowledging an answer is met by the
// session, not by the answer tiers (which would ask them to rephrase, a step toward a transfer).
// After the line asked a question (the greeting), an "okay" is a reply for the tiers.
TEST_F(CallSessionTest, TurnsThatHoldTheFloorAreTheSessionsOwn) {
  recognizer_.SetTexts({"okay", "i have a question", "what can you help me with",
                        "where is my order", "okay, got it", "yes, one more thing"});
  StartCall();
  auto say = [&] {
    Say();
    FeedUntilIdle();
    return LastTurn();
  };
  EXPECT_EQ(say().tier, TurnTier::kKnowledgeBase);  // "okay" after "how can I help you today?"
  TurnReport t = say();
  EXPECT_EQ(t.tier, TurnTier::kSocial);
  EXPECT_EQ(t.answer, res_.call.go_ahead_text);
  EXPECT_EQ(say().answer, res_.call.help_text);
  EXPECT_EQ(say().tier, TurnTier::kKnowledgeBase);
  EXPECT_EQ(say().answer, res_.call.anything_else_text);
  EXPECT_EQ(say().answer, res_.call.go_ahead_text);  // a "yes" to "anything else?"
  {
    std::lock_guard lock(answerer_.mu);
    EXPECT_EQ(answerer_.turns.size(), 2u);  // the first "okay" and the order
  }
  EXPECT_EQ(
      metrics_.GetCounter("hotline_pipeline_social_turns_total", "", {{"act", "go_ahead"}}).value(),
      2u);
  EXPECT_TRUE(sink_->transfer().empty());
}

// "Hold on, let me find my card": the line says it will wait, and waits
// hold_reprompt_after_ms before asking whether the caller is there; after that, the usual wait.
TEST_F(CallSessionTest, AskingToHoldWaitsLongerBeforeTheReprompt) {
  res_.call.reprompt_after_ms = 1000;
  res_.call.hold_reprompt_after_ms = 3000;
  recognizer_.SetTexts({"hold on, let me find my card"});
  StartCall();
  Say();
  FeedUntilIdle();
  EXPECT_EQ(LastTurn().answer, res_.call.hold_text);
  Feed(Silence(1500));
  FeedUntilIdle();
  EXPECT_EQ(LastTurn().answer, res_.call.hold_text);  // no re-prompt at reprompt_after_ms
  Feed(Silence(1700));
  ASSERT_TRUE(WaitFor([&] { return LastTurn().kind == TurnKind::kReprompt; }));
  FeedUntilIdle();
  const size_t turns = session_->Turns().size();
  Feed(Silence(1100));
  ASSERT_TRUE(WaitFor([&] { return session_->Turns().size() == turns + 1; }));
  EXPECT_EQ(LastTurn().kind, TurnKind::kReprompt);
}

TEST_F(CallSessionTest, SocialRepliesOffSendsThanksToTheAnswerTiers) {
  res_.call.social_replies = false;
  recognizer_.SetTexts({"thank you so much"});
  StartCall();
  Say();
  FeedUntilIdle();
  EXPECT_EQ(LastTurn().tier, TurnTier::kKnowledgeBase);
}

TEST_F(CallSessionTest, TheRecognizersConfidenceReachesTheAnswerAndAGatedTurnSaysWhy) {
  answerer_.fallback = true;
  answerer_.gated = "low_asr_confidence";
  StartCall();
  Say();
  FeedUntilIdle();
  {
    std::lock_guard lock(answerer_.mu);
    ASSERT_EQ(answerer_.asr_confidences.size(), 1u);
    ASSERT_TRUE(answerer_.asr_confidences[0].has_value());
    EXPECT_FLOAT_EQ(static_cast<float>(*answerer_.asr_confidences[0]), 0.9f);  // the final's
  }
  // The gated turn takes the session's usual no-answer path, and records the gate's reason.
  EXPECT_EQ(LastTurn().outcome, TurnOutcome::kRephrase);
  EXPECT_EQ(LastTurn().answer, res_.call.rephrase_text);
  EXPECT_EQ(LastTurn().llm_gate, "low_asr_confidence");
  EXPECT_FLOAT_EQ(static_cast<float>(LastTurn().asr_confidence), 0.9f);
}

// A fallback because a tier failed (the model's server down) is our failure: the caller is told
// so instead of being asked to rephrase, and a second failure in a row goes to a human.
TEST_F(CallSessionTest, AFailedTierIsOwnedUpToNotBlamedOnTheCaller) {
  answerer_.fallback = true;
  answerer_.degraded = true;
  answerer_.reply = "I'm not sure about that. Let me transfer you to an agent.";
  StartCall();
  Say();
  FeedUntilIdle();
  EXPECT_TRUE(sink_->transfer().empty());
  EXPECT_EQ(LastTurn().outcome, TurnOutcome::kRephrase);
  EXPECT_EQ(LastTurn().answer, res_.call.error_text);
  Say();
  FeedUntilIdle();
  ASSERT_TRUE(WaitFor([&] { return !sink_->transfer().empty(); }));
  EXPECT_EQ(sink_->transfer(), "an answer tier failed");
  EXPECT_EQ(LastTurn().outcome, TurnOutcome::kTransfer);
  EXPECT_EQ(LastTurn().answer, res_.call.failure_transfer_text);  // not "I'm not sure about that"
}

TEST_F(CallSessionTest, AnswererFallbackAsksToRephraseThenTransfers) {
  answerer_.fallback = true;
  answerer_.reply = "I'm not sure. Let me transfer you.";
  StartCall();
  Say();
  FeedUntilIdle();
  EXPECT_TRUE(sink_->transfer().empty());
  EXPECT_EQ(LastTurn().outcome, TurnOutcome::kRephrase);
  EXPECT_EQ(LastTurn().answer, res_.call.rephrase_text);
  // The second miss in a row goes to a human.
  Say();
  FeedUntilIdle();
  ASSERT_TRUE(WaitFor([&] { return !sink_->transfer().empty(); }));
  EXPECT_EQ(sink_->transfer(), "no answer tier could answer");
  EXPECT_EQ(LastTurn().outcome, TurnOutcome::kTransfer);
  EXPECT_EQ(LastTurn().answer, answerer_.reply);
}

TEST_F(CallSessionTest, AnswererFallbackTransfersAtOnceWithoutRetries) {
  res_.call.fallback_retries = 0;
  answerer_.fallback = true;
  StartCall();
  Say();
  FeedUntilIdle();
  ASSERT_TRUE(WaitFor([&] { return !sink_->transfer().empty(); }));
  EXPECT_EQ(LastTurn().outcome, TurnOutcome::kTransfer);
}

TEST_F(CallSessionTest, RecognizerErrorIsSpokenAndCounted) {
  recognizer_.fail_finish = true;
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return sink_->marks().size() == 1; }));
  EXPECT_EQ(LastTurn().answer, res_.call.error_text);
  EXPECT_EQ(LastTurn().OutcomeText(), "error:asr");
  EXPECT_EQ(Errors("asr"), 1u);
  EXPECT_TRUE(answerer_.turns.empty());
}

// A recognizer stuck in its final pass: the time-bounded recognizer CallStack builds gives up at
// call.asr_timeout_ms and the caller hears the busy prompt instead of silence.
TEST_F(CallSessionTest, StuckRecognizerTimesOutWithBusyText) {
  recognizer_.finish_delay_ms = 1000;
  res_.call.asr_timeout_ms = 100;
  bounded_ = std::make_unique<asr::DeadlineRecognizer>(recognizer_, std::chrono::milliseconds(100));
  res_.recognizer = bounded_.get();
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return sink_->marks().size() == 1; }));
  EXPECT_EQ(LastTurn().answer, res_.call.busy_text);
  EXPECT_EQ(LastTurn().OutcomeText(), "error:asr_timeout");
  EXPECT_EQ(Errors("asr_timeout"), 1u);
  EXPECT_EQ(bounded_->timeouts(), 1u);
  EXPECT_TRUE(answerer_.turns.empty());
}

TEST_F(CallSessionTest, AnswerErrorIsSpokenAndCounted) {
  answerer_.fail = true;
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return sink_->marks().size() == 1; }));
  ASSERT_TRUE(WaitFor([&] { return sink_->CountEvents("turn") == 1; }));
  EXPECT_EQ(LastTurn().OutcomeText(), "error:answer");
  EXPECT_EQ(Errors("answer"), 1u);
  EXPECT_NE(Synthesized().find("went wrong"), std::string::npos) << Synthesized();
}

TEST_F(CallSessionTest, SlowAnswerTimesOutWithBusyText) {
  answerer_.block = true;
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return answerer_.answers_started.load() == 1; }));
  clock_.Advance(std::chrono::milliseconds(res_.call.answer_timeout_ms + 1));
  Feed(Silence(40));
  ASSERT_TRUE(WaitFor([&] { return sink_->marks().size() == 1; }));
  EXPECT_TRUE(WaitFor([&] { return answerer_.saw_cancel.load(); }));
  EXPECT_EQ(Errors("answer_timeout"), 1u);
  EXPECT_EQ(LastTurn().outcome, TurnOutcome::kBusy);
  EXPECT_NE(Synthesized().find("longer than it should"), std::string::npos) << Synthesized();
}

TEST_F(CallSessionTest, SynthesisErrorFallsBackToErrorText) {
  synth_->fail_when_contains = "ships";
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return sink_->marks().size() == 1; }));
  EXPECT_EQ(Errors("tts"), 1u);
  EXPECT_GT(sink_->bytes(), 0u);  // the spoken fallback
  EXPECT_NE(Synthesized().find("went wrong"), std::string::npos) << Synthesized();
}

TEST_F(CallSessionTest, KeypadDigitsGoToPinEntry) {
  StartCall();
  for (char d : std::string("1234#")) ASSERT_TRUE(session_->PushDtmf(d).ok());
  EXPECT_FALSE(session_->PushDtmf('x').ok());
  ASSERT_TRUE(WaitFor([&] { return sink_->marks().size() == 1; }));
  std::lock_guard lock(answerer_.mu);
  ASSERT_EQ(answerer_.pins.size(), 1u);
  EXPECT_EQ(answerer_.pins[0], "1234");
  EXPECT_EQ(LastTurn().transcript, "<4 keypad digits>");  // digits never kept in the record
}

// The turn strand does not wait for the listen strand: keys pressed while the recognizer makes a
// slow final pass are taken at once.
TEST_F(CallSessionTest, KeysPressedDuringTheFinalPassAreAnsweredAfterTheSpokenTurn) {
  recognizer_.finish_delay_ms = 1000;
  std::atomic<int> finals_at_pin{-1};
  answerer_.on_pin = [&] { finals_at_pin.store(recognizer_.finals_done.load()); };
  StartCall();
  Feed(Silence(200));
  Feed(Vowel(600));
  // The trailing silence is queued without waiting: its end of turn starts the slow final pass.
  std::vector<uint8_t> frame(160, 0xff);  // μ-law silence
  for (int i = 0; i < 35; ++i) {
    clock_.Advance(std::chrono::milliseconds(20));
    ASSERT_TRUE(session_->PushAudio(frame, MediaFormat{}).ok());
  }
  ASSERT_TRUE(WaitFor([&] { return recognizer_.finals_started.load() == 1; }));
  // The keys are taken by the turn strand while the listen strand waits on the recognizer; the
  // '#' submits them only once the spoken turn (which came first) has its transcript.
  for (char d : std::string("1234#")) ASSERT_TRUE(session_->PushDtmf(d).ok());
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard lock(answerer_.mu);
    return answerer_.pins.size() == 1;
  }));
  FeedUntilIdle();
  std::lock_guard lock(answerer_.mu);
  EXPECT_EQ(answerer_.pins[0], "1234");
  EXPECT_EQ(finals_at_pin.load(), 1) << "the keypad turn went ahead of the spoken one";
  // The keypad turn, pressed after the caller spoke, supersedes the spoken one.
  EXPECT_EQ(LastTurn().kind, TurnKind::kDtmf);
}

TEST_F(CallSessionTest, KeypadDigitsAreSubmittedAfterAPause) {
  res_.call.dtmf_timeout_ms = 500;
  StartCall();
  for (char d : std::string("987")) ASSERT_TRUE(session_->PushDtmf(d).ok());
  Feed(Silence(600));
  ASSERT_TRUE(WaitFor([&] { return answerer_.pins.size() == 1; }));
  EXPECT_EQ(answerer_.pins[0], "987");
}

TEST_F(CallSessionTest, FullQueueDropsAudioWithoutBlocking) {
  res_.call.audio_queue_frames = 2;
  ThreadPool one(1, 16);
  res_.pool = &one;
  std::atomic<bool> release{false};
  ASSERT_TRUE(one.Submit([&] { while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1)); }).ok());
  StartCall();
  std::vector<uint8_t> frame(160, 0xff);
  int refused = 0;
  for (int i = 0; i < 10; ++i) {
    Status s = session_->PushAudio(frame, MediaFormat{});
    if (s.code() == StatusCode::kResourceExhausted) ++refused;
  }
  EXPECT_GE(refused, 7);
  EXPECT_GE(session_->stats().frames_dropped, 7u);
  EXPECT_FALSE(session_->PushAudio(std::vector<uint8_t>(70000), MediaFormat{}).ok());
  MediaFormat pcm{audio::Codec::kPcm16, 8000};
  EXPECT_FALSE(session_->PushAudio(frame, pcm).ok());  // not the call's format
  release = true;
  session_.reset();
  one.Shutdown();
}

TEST_F(CallSessionTest, DestroyedMidAnswerSendsNothingMore) {
  answerer_.block = true;
  StartCall();
  Say();
  ASSERT_TRUE(WaitFor([&] { return answerer_.answers_started.load() == 1; }));
  session_.reset();  // the transport dropped the call while the answer was running
  EXPECT_TRUE(WaitFor([&] { return answerer_.saw_cancel.load(); }));
  pool_.Shutdown();
  EXPECT_EQ(sink_->bytes(), 0u);
  EXPECT_TRUE(sink_->marks().empty());
}

TEST_F(CallSessionTest, TurnsAreRecordedInSqlite) {
  const std::string path = ::testing::TempDir() + "/call_records_" + std::to_string(getpid()) + ".db";
  std::filesystem::remove(path);
  auto store = CallRecordStore::Open(path, 16);
  ASSERT_TRUE(store.ok()) << store.status();
  res_.records = store->get();
  recognizer_.SetTexts({"my card number is 4111 1111 1111 1111"});
  StartCall();
  Say();
  FeedUntilIdle();
  ASSERT_TRUE(WaitFor([&] { return sink_->CountEvents("turn") == 1; }));
  (*store)->Flush();
  EXPECT_EQ((*store)->written(), 1u);
  session_.reset();
  pool_.Shutdown();
  store->reset();
  // Read back with a fresh connection: the transcript is redacted.
  auto reopened = CallRecordStore::Open(path, 1);
  ASSERT_TRUE(reopened.ok());
  reopened->reset();
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
}

}  // namespace
}  // namespace hotline::pipeline
