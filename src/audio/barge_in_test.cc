#include "audio/barge_in.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <vector>

namespace hotline::audio {
namespace {

std::vector<int16_t> ReadRaw16(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<int16_t> out;
  int16_t s;
  while (in.read(reinterpret_cast<char*>(&s), sizeof(s))) out.push_back(s);
  return out;
}

VadFrame Frame(bool speech, float level) {
  VadFrame f;
  f.speech = speech;
  f.level_dbfs = level;
  return f;
}

constexpr auto kNone = BargeInEvent::kNone;
constexpr auto kPause = BargeInEvent::kPause;
constexpr auto kResume = BargeInEvent::kResume;
constexpr auto kBargeIn = BargeInEvent::kBargeIn;

// The frame index and kind of every event over `speech` (one flag per 20 ms frame).
// The duration rule alone (check_words off): the stages by the length of the caller's speech.
BargeInConfig DurationOnly() {
  BargeInConfig c;
  c.check_words = false;
  return c;
}

std::vector<std::pair<int, BargeInEvent>> Events(BargeInDetector& d, const std::vector<bool>& speech,
                                                 float level = -25) {
  std::vector<std::pair<int, BargeInEvent>> out;
  for (size_t i = 0; i < speech.size(); ++i) {
    BargeInEvent e = d.Process(Frame(speech[i], level), -120);
    if (e != kNone) out.emplace_back(static_cast<int>(i), e);
  }
  return out;
}

using EventList = std::vector<std::pair<int, BargeInEvent>>;

TEST(BargeIn, SustainedCallerSpeechPausesThenInterruptsOnce) {
  BargeInDetector d(DurationOnly());
  EXPECT_EQ(Events(d, std::vector<bool>(50, true)),
            (EventList{{80 / kFrameMs - 1, kPause}, {200 / kFrameMs - 1, kBargeIn}}));
  EXPECT_TRUE(d.triggered());
  EXPECT_FALSE(d.paused());
}

TEST(BargeIn, WithoutThePauseStageOnlyTheBargeInFires) {
  BargeInConfig c = DurationOnly();
  c.pause_after_ms = 0;
  BargeInDetector d(c);
  EXPECT_EQ(Events(d, std::vector<bool>(50, true)), (EventList{{200 / kFrameMs - 1, kBargeIn}}));
}

TEST(BargeIn, ShortBurstsDoNotInterrupt) {
  BargeInDetector d(DurationOnly());
  std::vector<bool> speech(100);
  for (int i = 0; i < 100; ++i) speech[i] = (i % 10) < 3;  // 60 ms "mm" every 200 ms
  EXPECT_EQ(Events(d, speech), EventList{});
}

TEST(BargeIn, ACoughPausesAndResumesWhenItEnds) {
  BargeInDetector d(DurationOnly());
  std::vector<bool> speech(40, false);
  for (int i = 0; i < 6; ++i) speech[i] = true;  // 120 ms
  // Paused at 80 ms; the count resets once the gap passes max_gap_ms (80 ms) after the cough.
  EXPECT_EQ(Events(d, speech), (EventList{{3, kPause}, {6 + 80 / kFrameMs, kResume}}));
  EXPECT_FALSE(d.triggered());
}

TEST(BargeIn, AnUnconfirmedPauseResumesAfterResumeAfterMs) {
  BargeInDetector d(DurationOnly());
  // 20 ms of speech every 80 ms: gaps short enough to keep counting, too sparse to confirm.
  std::vector<bool> speech(60);
  for (int i = 0; i < 60; ++i) speech[i] = i % 4 == 0;
  const EventList events = Events(d, speech);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[0], std::make_pair(12, kPause));  // the 4th speech frame: 80 ms
  EXPECT_EQ(events[1], std::make_pair(12 + 300 / kFrameMs, kResume));
  for (const auto& e : events) EXPECT_NE(e.second, kBargeIn);
}

TEST(BargeIn, ValidatesThePauseStage) {
  BargeInConfig c;
  c.pause_after_ms = c.min_speech_ms;
  EXPECT_FALSE(c.Validate().ok());
  c.pause_after_ms = 0;
  EXPECT_TRUE(c.Validate().ok());
  c.resume_after_ms = 0;
  EXPECT_FALSE(c.Validate().ok());
}

TEST(BargeIn, IgnoresEchoThatFollowsTheOutboundSignal) {
  BargeInConfig c;
  BargeInDetector d(c);
  // Hotline speaks at -15 dBFS; its echo comes back 100 ms later 12 dB down and looks like speech.
  for (int i = 0; i < 175; ++i) {  // ends while Hotline speaks
    float out = (i / 25) % 2 == 0 ? -15.0f : -120.0f;  // 500 ms on, 500 ms off
    bool echo = i >= 5 && ((i - 5) / 25) % 2 == 0;
    EXPECT_EQ(d.Process(Frame(echo, echo ? -27.0f : -70.0f), out), kNone) << i;
  }
  // The echo tail (up to echo_tail_ms after the outbound stops) is ignored as well.
  for (int i = 0; i < c.echo_tail_ms / kFrameMs; ++i) {
    EXPECT_EQ(d.Process(Frame(true, -27), -120), kNone) << i;
  }
}

TEST(BargeIn, CallerLouderThanTheEchoGetsThrough) {
  BargeInDetector d(DurationOnly());
  bool fired = false;
  for (int i = 0; i < 30 && !fired; ++i) fired = d.Process(Frame(true, -20), -15) == kBargeIn;
  EXPECT_TRUE(fired);
  d.Reset();
  EXPECT_FALSE(d.triggered());
}

// Real speech: the outbound signal is goforward.raw; the inbound is its echo (delayed 60 ms,
// attenuated 15 dB, with line noise). No barge-in. Then a caller speaks over it at a normal level
// (the same recording, undelayed, 0 dB): barge-in.
TEST(BargeIn, RealSpeechEchoVersusCaller) {
  auto speech = ReadRaw16("/usr/share/pocketsphinx/test/data/goforward.raw");
  ASSERT_GT(speech.size(), 16000u) << "install pocketsphinx-testdata";
  const size_t n = 320;
  const size_t delay = 960;  // 60 ms
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0, 30);
  for (bool caller : {false, true}) {
    auto vad = Vad::Create(VadConfig{}, 16000);
    ASSERT_TRUE(vad.ok());
    BargeInDetector d(DurationOnly());
    bool fired = false;
    bool paused = false;
    std::vector<int16_t> in(n);
    for (size_t i = 0; i + n <= speech.size(); i += n) {
      for (size_t k = 0; k < n; ++k) {
        size_t j = i + k;
        double v = noise(rng) + (j >= delay ? speech[j - delay] * 0.178 : 0.0);  // -15 dB
        if (caller && j >= 8000) v += speech[j - 8000];
        in[k] = SaturateToInt16(static_cast<int32_t>(v));
      }
      auto r = vad->Process(AudioView(in, 16000));
      ASSERT_TRUE(r.ok());
      float out_level = LevelDbfs(std::span<const int16_t>(speech).subspan(i, n));
      const BargeInEvent e = d.Process(*r, out_level);
      fired |= e == kBargeIn;
      paused |= e == kPause;
    }
    EXPECT_EQ(fired, caller);
    EXPECT_EQ(paused, caller);  // the echo alone never even pauses the agent
  }
}

// check_words: the words decide once min_speech_ms is reached.
using Words = BargeInDetector::Words;

std::vector<std::pair<int, BargeInEvent>> EventsWithWords(BargeInDetector& d,
                                                          const std::vector<bool>& speech,
                                                          Words words) {
  std::vector<std::pair<int, BargeInEvent>> out;
  for (size_t i = 0; i < speech.size(); ++i) {
    BargeInEvent e = d.Process(Frame(speech[i], -25), -120, words);
    if (e != kNone) out.emplace_back(static_cast<int>(i), e);
  }
  return out;
}

// `ms` of speech, then `silence_ms` of silence, one flag per frame.
std::vector<bool> Speech(int ms, int silence_ms) {
  std::vector<bool> v(static_cast<size_t>(ms / kFrameMs), true);
  v.resize(v.size() + static_cast<size_t>(silence_ms / kFrameMs), false);
  return v;
}

constexpr int kPauseAt = 80 / kFrameMs - 1;

TEST(BargeIn, ABackchannelHoldsThePauseAndResumesAfterItsSilence) {
  const BargeInConfig c;  // check_words on by default
  BargeInDetector d(c);
  // "uh huh": 400 ms of speech whose words never interrupt, then silence.
  const int release = 400 / kFrameMs - 1 + c.hold_release_ms / kFrameMs;
  EXPECT_EQ(EventsWithWords(d, Speech(400, 600), Words::kUnknown),
            (EventList{{kPauseAt, kPause}, {release, kResume}}));
  EXPECT_FALSE(d.triggered());
  EXPECT_FALSE(d.holding());
  // Re-armed: the caller's next words over the agent pause it again.
  EXPECT_EQ(EventsWithWords(d, Speech(400, 0), Words::kUnknown), (EventList{{kPauseAt, kPause}}));
  EXPECT_TRUE(d.holding());
}

TEST(BargeIn, OtherWordsSaidBrieflyAreTakenForAMisheardBackchannel) {
  const BargeInConfig c;
  BargeInDetector d(c);
  EXPECT_EQ(EventsWithWords(d, Speech(400, 600), Words::kOther),
            (EventList{{kPauseAt, kPause},
                       {400 / kFrameMs - 1 + c.hold_release_ms / kFrameMs, kResume}}));
}

TEST(BargeIn, OtherWordsSaidAtLengthConfirm) {
  const BargeInConfig c;
  BargeInDetector d(c);
  EXPECT_EQ(EventsWithWords(d, Speech(2000, 0), Words::kOther),
            (EventList{{kPauseAt, kPause}, {c.backchannel_max_ms / kFrameMs - 1, kBargeIn}}));
  EXPECT_TRUE(d.triggered());
  EXPECT_FALSE(d.holding());
}

TEST(BargeIn, ACueConfirmsWhenTheCallerStops) {
  const BargeInConfig c;
  BargeInDetector d(c);
  // "wait": short, but a word that interrupts.
  EXPECT_EQ(EventsWithWords(d, Speech(300, 600), Words::kCue),
            (EventList{{kPauseAt, kPause},
                       {300 / kFrameMs - 1 + c.hold_release_ms / kFrameMs, kBargeIn}}));
}

TEST(BargeIn, LongSpeechConfirmsWhateverItsWords) {
  const BargeInConfig c;
  BargeInDetector d(c);
  EXPECT_EQ(EventsWithWords(d, Speech(2000, 0), Words::kUnknown),
            (EventList{{kPauseAt, kPause}, {c.max_hold_ms / kFrameMs - 1, kBargeIn}}));
}

TEST(BargeIn, WithoutAPauseStageAHoldStillSilencesTheAgent) {
  BargeInConfig c;
  c.pause_after_ms = 0;
  BargeInDetector d(c);
  EXPECT_EQ(EventsWithWords(d, Speech(300, 400), Words::kUnknown),
            (EventList{{200 / kFrameMs - 1, kPause},
                       {300 / kFrameMs - 1 + c.hold_release_ms / kFrameMs, kResume}}));
}

TEST(BargeIn, WithoutTheWordCheckDurationAloneConfirms) {
  BargeInDetector d(DurationOnly());
  EXPECT_EQ(EventsWithWords(d, Speech(1000, 0), Words::kUnknown),
            (EventList{{kPauseAt, kPause}, {200 / kFrameMs - 1, kBargeIn}}));
}

TEST(BargeIn, ValidatesTheHold) {
  BargeInConfig c;
  c.max_hold_ms = c.min_speech_ms - 20;
  EXPECT_FALSE(c.Validate().ok());
  c = BargeInConfig{};
  c.backchannel_max_ms = c.max_hold_ms + 20;
  EXPECT_FALSE(c.Validate().ok());
  c = BargeInConfig{};
  c.hold_release_ms = 0;
  EXPECT_FALSE(c.Validate().ok());
  EXPECT_TRUE(BargeInConfig{}.Validate().ok());
}

}  // namespace
}  // namespace hotline::audio
