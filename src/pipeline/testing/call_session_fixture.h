// The CallSession test fixture: a session over fakes (recognizer, answerer, synthesizer, sink)
// on a fake clock, fed 20 ms μ-law frames one at a time as a line would. Shared by
// call_session_test.cc and call_session_prework_test.cc.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "asr/deadline_recognizer.h"
#include "audio/g711.h"
#include "pipeline/call_session.h"
#include "pipeline/testing/fakes.h"

namespace hotline::pipeline::testing {

class CallSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    res_.recognizer = &recognizer_;
    res_.answerer = &answerer_;
    res_.make_synthesizer = [shared = synth_]() -> Result<std::unique_ptr<tts::Synthesizer>> {
      return std::unique_ptr<tts::Synthesizer>(new FakeSynthesizer(shared));
    };
    res_.pool = &pool_;
    res_.clock = &clock_;
    res_.metrics = &metrics_;
    res_.audio_cache = &cache_;
    res_.call.greeting_text = "";
    res_.call.reprompt_after_ms = 60000;
  }

  void StartCall(int64_t max_call_ms = 0) {
    CallInfo info;
    info.call_id = "test-call";
    info.caller_id = "+15550100";
    info.max_call_ms = max_call_ms;
    auto s = CallSession::Create(res_, info, sink_);
    ASSERT_TRUE(s.ok()) << s.status();
    session_ = std::move(*s);
    session_->Start();
  }

  // Pushes 8 kHz audio as μ-law 20 ms frames, one at a time as a line would (the fake clock
  // moves 20 ms per frame), each handled to its end by the listen worker before the next.
  void Feed(const std::vector<int16_t>& pcm) {
    std::vector<uint8_t> frame(160);
    for (size_t at = 0; at + 160 <= pcm.size(); at += 160) {
      audio::EncodeMulaw(std::span<const int16_t>(pcm).subspan(at, 160), frame);
      if (session_->ended()) return;
      clock_.Advance(std::chrono::milliseconds(20));
      ASSERT_TRUE(session_->PushAudio(frame, MediaFormat{}).ok());
      ASSERT_TRUE(WaitFor([&] { return session_->queued_audio() == 0; }));
    }
  }
  std::string Synthesized() {
    std::lock_guard lock(synth_->mu);
    std::string all;
    for (const auto& t : synth_->texts) all += t + "|";
    return all;
  }
  // A caller turn: speech, then enough silence for the endpointer to end it.
  void Say(int ms = 600) {
    Feed(Silence(200));
    Feed(Vowel(ms));
    Feed(Silence(700));
  }
  // Silence until the agent is idle (its audio has played) or `max_ms` passed.
  void FeedUntilIdle(int max_ms = 20000) {
    for (int t = 0; t < max_ms && !session_->ended(); t += 100) {
      Feed(Silence(100));
      if (session_->idle()) return;
    }
  }
  // The cached tiers answer every partial with one L3 answer (FakeAnswerer::Peek), so a stable
  // partial has its answer prepared while the caller speaks. Returns that answer.
  TurnAnswer CachedAnswerForPartials() {
    recognizer_.stable_after_frames = 10;
    TurnAnswer prepared;
    prepared.text = "Orders ship within two days.";
    prepared.sentences = {prepared.text};
    prepared.tier = TurnTier::kL3;
    answerer_.peek_answer = prepared;
    return prepared;
  }
  uint64_t Errors(const std::string& kind) {
    return metrics_.GetCounter("hotline_pipeline_errors_total", "", {{"kind", kind}}).value();
  }
  TurnReport LastTurn() {
    auto turns = session_->Turns();
    EXPECT_FALSE(turns.empty());
    return turns.empty() ? TurnReport{} : turns.back();
  }

  FakeRecognizer recognizer_{{"where is my order"}};
  FakeAnswerer answerer_;
  std::shared_ptr<FakeSynthesizer::Shared> synth_ = std::make_shared<FakeSynthesizer::Shared>();
  tts::AudioCache cache_;
  FakeClock clock_;
  MetricsRegistry metrics_;
  std::shared_ptr<TestSink> sink_ = std::make_shared<TestSink>();
  CallResources res_;
  ThreadPool pool_{2, 1024};
  std::unique_ptr<asr::DeadlineRecognizer> bounded_;  // outlives the session, not recognizer_
  std::unique_ptr<CallSession> session_;
};

}  // namespace hotline::pipeline::testing
