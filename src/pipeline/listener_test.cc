// Listener: frames in, typed events out (speech start, stable partials, end of turn or discard,
// the barge-in stages while the agent plays, errors), with the recognizer's final pass on demand.
#include "pipeline/listener.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "audio/g711.h"
#include "pipeline/call_session.h"
#include "pipeline/testing/fakes.h"

namespace hotline::pipeline {
namespace {

using Kind = Listener::EventKind;
using testing::FakeRecognizer;
using testing::Silence;
using testing::Vowel;

// Counts the samples each stream is fed; fails to open streams on request.
class CountingRecognizer : public asr::Recognizer {
 public:
  bool fail_create = false;
  size_t samples = 0;  // fed to the last stream

  Result<std::unique_ptr<asr::RecognizerStream>> CreateStream(int) override {
    if (fail_create) return UnavailableError("recognizer is down");
    samples = 0;
    return std::unique_ptr<asr::RecognizerStream>(new Stream(*this));
  }
  std::string name() const override { return "counting"; }

 private:
  class Stream : public asr::RecognizerStream {
   public:
    explicit Stream(CountingRecognizer& r) : r_(r) {}
    Status AcceptFrames(audio::AudioView pcm) override {
      r_.samples += pcm.samples.size();
      return Status::Ok();
    }
    const asr::AsrPartial& partial() const override { return partial_; }
    Result<asr::AsrResult> Finish() override { return asr::AsrResult{}; }

   private:
    CountingRecognizer& r_;
    asr::AsrPartial partial_;
  };
};

class ListenerTest : public ::testing::Test {
 protected:
  void Make(asr::Recognizer* recognizer) {
    auto l = Listener::Create(options_, recognizer);
    ASSERT_TRUE(l.ok()) << l.status();
    listener_ = std::move(*l);
  }
  // Sends `pcm` as one μ-law payload per 20 ms; returns the events of every frame, in order.
  std::vector<Listener::Event> Hear(const std::vector<int16_t>& pcm) {
    std::vector<Listener::Event> events;
    std::vector<uint8_t> payload(160);
    for (size_t at = 0; at + 160 <= pcm.size(); at += 160) {
      audio::EncodeMulaw(std::span<const int16_t>(pcm).subspan(at, 160), payload);
      listener_->Decode(payload,
                        [&](audio::AudioView frame) { listener_->Hear(frame, playback_, events); });
    }
    return events;
  }
  static std::vector<Kind> Kinds(const std::vector<Listener::Event>& events) {
    std::vector<Kind> kinds;
    for (const auto& e : events) kinds.push_back(e.kind);
    return kinds;
  }
  // The silence the turn's end waited for after the caller's last speech; -1 if it did not end.
  static int64_t SilenceBeforeTheEnd(const std::vector<Listener::Event>& events) {
    const Listener::Event* end = Find(events, Kind::kEndOfTurn);
    return end == nullptr ? -1 : end->update.now_ms - end->update.speech_end_ms;
  }
  static const Listener::Event* Find(const std::vector<Listener::Event>& events, Kind kind) {
    for (const auto& e : events) {
      if (e.kind == kind) return &e;
    }
    return nullptr;
  }

  ListenerOptions options_;
  Listener::Playback playback_;
  FakeRecognizer recognizer_{{"where is my order"}};
  std::unique_ptr<Listener> listener_;
};

TEST_F(ListenerTest, AQuestionIsHeardAsItsStartAStablePartialAndItsEnd) {
  recognizer_.stable_after_frames = 10;
  Make(&recognizer_);
  std::vector<Listener::Event> events = Hear(Silence(200));
  EXPECT_TRUE(events.empty());
  events = Hear(Vowel(600));
  EXPECT_EQ(Kinds(events), (std::vector<Kind>{Kind::kSpeechStart, Kind::kPartial}));
  EXPECT_EQ(events[1].text, "where is my order");
  EXPECT_TRUE(listener_->in_utterance());
  events = Hear(Silence(700));
  ASSERT_EQ(Kinds(events), std::vector<Kind>{Kind::kEndOfTurn});
  const Listener::Event& end = events[0];
  EXPECT_EQ(end.text, "where is my order");  // the last partial, for a speculative start
  EXPECT_FALSE(end.echo);
  EXPECT_NEAR(end.update.speech_end_ms - end.update.speech_start_ms, 600, 60);
  // trailing_silence_ms, give or take the VAD's hang-over and a frame.
  EXPECT_NEAR(end.update.now_ms - end.update.speech_end_ms, options_.endpointer.trailing_silence_ms,
              60);
  EXPECT_FALSE(listener_->in_utterance());
  auto final = listener_->FinishUtterance();
  ASSERT_TRUE(final.ok()) << final.status();
  EXPECT_EQ(final->text, "where is my order");
  EXPECT_EQ(listener_->FinishUtterance().status().code(), StatusCode::kUnavailable);
}

TEST_F(ListenerTest, DecodeCutsPayloadsIntoTwentyMillisecondFrames) {
  Make(&recognizer_);
  std::vector<uint8_t> payload(400, 0xff);  // μ-law silence: 50 ms
  int frames = 0;
  listener_->Decode(payload, [&](audio::AudioView f) {
    EXPECT_EQ(f.samples.size(), 160u);
    ++frames;
  });
  EXPECT_EQ(frames, 2);  // 10 ms wait for the next payload
  listener_->Decode(std::vector<uint8_t>(80, 0xff), [&](audio::AudioView) { ++frames; });
  EXPECT_EQ(frames, 3);
}

TEST_F(ListenerTest, AHintForThePartialEndsTheTurnAfterTheShorterSilence) {
  recognizer_.stable_after_frames = 10;
  Make(&recognizer_);
  Hear(Silence(200));
  Hear(Vowel(600));
  listener_->HintComplete(PhraseText("where is my order"));
  EXPECT_NEAR(SilenceBeforeTheEnd(Hear(Silence(700))), options_.endpointer.complete_silence_ms, 60);
}

TEST_F(ListenerTest, AHintForAnotherPhraseOrOutsideAnUtteranceIsIgnored) {
  recognizer_.stable_after_frames = 10;
  Make(&recognizer_);
  listener_->HintComplete("where is my order");  // nothing heard yet
  Hear(Silence(200));
  Hear(Vowel(600));
  listener_->HintComplete("where is my refund");  // the caller's partial reads otherwise
  EXPECT_NEAR(SilenceBeforeTheEnd(Hear(Silence(700))), options_.endpointer.trailing_silence_ms, 60);
}

TEST_F(ListenerTest, SpeechTooShortToBeATurnIsDiscarded) {
  Make(&recognizer_);
  Hear(Silence(200));
  EXPECT_EQ(Kinds(Hear(Vowel(120))), std::vector<Kind>{Kind::kSpeechStart});
  EXPECT_EQ(Kinds(Hear(Silence(700))), std::vector<Kind>{Kind::kDiscarded});
  EXPECT_EQ(listener_->FinishUtterance().status().code(), StatusCode::kUnavailable);
}

TEST_F(ListenerTest, CallerSpeechOverTheAgentPausesThenBargesIn) {
  recognizer_.stable_after_frames = 5;  // "where is my order": words that interrupt
  Make(&recognizer_);
  Hear(Silence(200));
  playback_.playing = true;  // the agent's audio is playing, quietly at the caller's end
  // Words other than a backchannel, said at length (backchannel_max_ms): an interruption.
  std::vector<Listener::Event> events = Hear(Vowel(1200));
  std::vector<Kind> kinds = Kinds(events);
  std::erase(kinds, Kind::kPartial);
  ASSERT_GE(kinds.size(), 3u);
  EXPECT_EQ(kinds[0], Kind::kSpeechStart);
  EXPECT_EQ(kinds[1], Kind::kPause);    // pause_after_ms of speech
  EXPECT_EQ(kinds[2], Kind::kBargeIn);
  playback_.playing = false;            // the turn controller stopped it
  events = Hear(Silence(700));
  const Listener::Event* end = Find(events, Kind::kEndOfTurn);
  ASSERT_NE(end, nullptr);
  EXPECT_FALSE(end->echo);  // a real turn, to be answered
}

TEST_F(ListenerTest, ACueWordStopsTheAgentWhenTheCallerStops) {
  recognizer_.SetTexts({"wait"});
  recognizer_.stable_after_frames = 5;
  Make(&recognizer_);
  Hear(Silence(200));
  playback_.playing = true;
  std::vector<Listener::Event> events = Hear(Vowel(400));
  EXPECT_EQ(Find(events, Kind::kBargeIn), nullptr);  // held while the caller speaks
  events = Hear(Silence(700));
  EXPECT_NE(Find(events, Kind::kBargeIn), nullptr);
  const Listener::Event* end = Find(events, Kind::kEndOfTurn);
  ASSERT_NE(end, nullptr);
  EXPECT_FALSE(end->echo);  // a turn to answer
}

TEST_F(ListenerTest, TheAgentsEchoOpensNoUtterance) {
  Make(&recognizer_);
  Hear(Silence(200));
  playback_.playing = true;
  playback_.level_dbfs = -3.0f;  // far louder than the caller: what comes back is its echo
  EXPECT_TRUE(Hear(Vowel(600)).empty());
  EXPECT_TRUE(Hear(Silence(700)).empty());
  EXPECT_FALSE(listener_->in_utterance());
  EXPECT_EQ(recognizer_.streams.load(), 0);  // nor is the recognizer fed the agent's voice
}

TEST_F(ListenerTest, ANewStreamStartsOnThePreroll) {
  CountingRecognizer counting;
  options_.preroll_ms = 200;
  Make(&counting);
  Hear(Silence(400));
  Hear(Vowel(100));
  // The stream opens on the third frame of speech (start_speech_ms, 60 ms): it gets the 200 ms
  // before and including that frame, then the vowel's last 40 ms.
  EXPECT_EQ(counting.samples, static_cast<size_t>(8 * (200 + 40)));
  options_.preroll_ms = 0;
  Make(&counting);
  Hear(Silence(400));
  Hear(Vowel(100));
  EXPECT_EQ(counting.samples, static_cast<size_t>(8 * (20 + 40)));  // the onset frame on
}

TEST_F(ListenerTest, ARecognizerThatCannotOpenIsAnErrorAndTheTurnStillEnds) {
  CountingRecognizer counting;
  counting.fail_create = true;
  Make(&counting);
  Hear(Silence(200));
  std::vector<Listener::Event> events = Hear(Vowel(600));
  ASSERT_EQ(Kinds(events), (std::vector<Kind>{Kind::kSpeechStart, Kind::kError}));
  EXPECT_EQ(events[1].error_kind, "asr");
  EXPECT_NE(events[1].error.message().find("recognizer is down"), std::string::npos);
  events = Hear(Silence(700));
  const Listener::Event* end = Find(events, Kind::kEndOfTurn);
  ASSERT_NE(end, nullptr);
  EXPECT_EQ(end->text, "");
  EXPECT_EQ(listener_->FinishUtterance().status().code(), StatusCode::kUnavailable);
}

TEST(ListenerCreate, RejectsWhatCannotListen) {
  FakeRecognizer recognizer({"x"});
  ListenerOptions options;
  EXPECT_EQ(Listener::Create(options, nullptr).status().code(), StatusCode::kInvalidArgument);
  options.sample_rate_hz = 11025;
  EXPECT_EQ(Listener::Create(options, &recognizer).status().code(), StatusCode::kInvalidArgument);
  options.sample_rate_hz = 8000;
  options.endpointer.trailing_silence_ms = -1;
  auto bad = Listener::Create(options, &recognizer);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("endpointer"), std::string::npos);
}

TEST_F(ListenerTest, ABackchannelOverTheAgentPausesItAndThenLetsItGoOn) {
  recognizer_.SetTexts({"uh huh okay"});
  recognizer_.stable_after_frames = 5;
  Make(&recognizer_);
  Hear(Silence(200));
  playback_.playing = true;
  std::vector<Listener::Event> events = Hear(Vowel(500));
  for (const Listener::Event& e : Hear(Silence(700))) events.push_back(e);
  EXPECT_NE(Find(events, Kind::kPause), nullptr);
  EXPECT_NE(Find(events, Kind::kResume), nullptr);
  EXPECT_EQ(Find(events, Kind::kBargeIn), nullptr);
  const Listener::Event* end = Find(events, Kind::kEndOfTurn);
  ASSERT_NE(end, nullptr);
  EXPECT_TRUE(end->echo);  // not a turn to answer
}

TEST_F(ListenerTest, TheAgentsOwnWordsSaidBackDoNotInterruptIt) {
  recognizer_.SetTexts({"seven business days"});
  recognizer_.stable_after_frames = 5;
  Make(&recognizer_);
  listener_->AgentSays(3, "The refund takes five to seven business days.");
  Hear(Silence(200));
  playback_.playing = true;
  std::vector<Listener::Event> events = Hear(Vowel(1000));  // longer than backchannel_max_ms
  for (const Listener::Event& e : Hear(Silence(700))) events.push_back(e);
  EXPECT_EQ(Find(events, Kind::kBargeIn), nullptr);
  EXPECT_NE(Find(events, Kind::kResume), nullptr);
  // The agent's next turn says other words: the same words, said at length, now interrupt it.
  listener_->AgentSays(4, "Is there anything else?");
  events = Hear(Vowel(1200));
  EXPECT_NE(Find(events, Kind::kBargeIn), nullptr);
}

}  // namespace
}  // namespace hotline::pipeline
