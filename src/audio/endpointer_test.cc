#include "audio/endpointer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "audio/vad.h"

namespace hotline::audio {
namespace {

// Pushes a pattern of frames: 'S' speech, '.' silence; returns the events with their times.
std::vector<EndpointUpdate> Feed(Endpointer& ep, const std::string& pattern) {
  std::vector<EndpointUpdate> events;
  for (char c : pattern) {
    EndpointUpdate u = ep.Push(c == 'S');
    if (u.event != EndpointEvent::kNone) events.push_back(u);
  }
  return events;
}

std::string Frames(char c, int ms) { return std::string(static_cast<size_t>(ms / kFrameMs), c); }

TEST(Endpointer, DefaultConfigIsValidAndWithinTheBrief) {
  EndpointerConfig c;
  EXPECT_TRUE(c.Validate().ok());
  EXPECT_LT(c.trailing_silence_ms, 700);
  EXPECT_GT(c.trailing_silence_ms, 300);
  EndpointerConfig bad;
  bad.complete_silence_ms = bad.trailing_silence_ms + 20;
  EXPECT_FALSE(bad.Validate().ok());
}

TEST(Endpointer, EndsTurnAfterTrailingSilence) {
  EndpointerConfig c;
  Endpointer ep(c);
  auto ev = Feed(ep, Frames('.', 200) + Frames('S', 1000) + Frames('.', 1000));
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].event, EndpointEvent::kSpeechStart);
  EXPECT_EQ(ev[0].speech_start_ms, 200);
  EXPECT_EQ(ev[1].event, EndpointEvent::kEndOfTurn);
  EXPECT_EQ(ev[1].speech_end_ms, 1200);
  EXPECT_EQ(ev[1].now_ms, 1200 + c.trailing_silence_ms);
}

TEST(Endpointer, NeverCutsInsideA300msPause) {
  Endpointer ep(EndpointerConfig{});
  std::string p = Frames('S', 600);
  for (int i = 0; i < 5; ++i) p += Frames('.', 300) + Frames('S', 400);
  auto ev = Feed(ep, p + Frames('.', 1000));
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].event, EndpointEvent::kEndOfTurn);
  EXPECT_EQ(ev[1].speech_end_ms, 600 + 5 * 700);
}

TEST(Endpointer, LooksCompleteHintShortensTheWait) {
  EndpointerConfig c;
  Endpointer ep(c);
  Feed(ep, Frames('S', 800));
  ep.SetLooksComplete(true);
  auto ev = Feed(ep, Frames('.', 1000));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].now_ms - ev[0].speech_end_ms, c.complete_silence_ms);
  // The hint does not carry over to the next utterance.
  ev = Feed(ep, Frames('S', 800) + Frames('.', 1000));
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].now_ms - ev[1].speech_end_ms, c.trailing_silence_ms);
}

TEST(Endpointer, ShortBurstsAreIgnoredOrDiscarded) {
  EndpointerConfig c;  // start 60 ms, min speech 200 ms
  Endpointer ep(c);
  EXPECT_TRUE(Feed(ep, "S.S.SS..S." + Frames('.', 500)).empty());  // never 60 ms in a row
  auto ev = Feed(ep, Frames('S', 100) + Frames('.', 1000));
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].event, EndpointEvent::kDiscarded);
}

TEST(Endpointer, MaxUtteranceLength) {
  EndpointerConfig c;
  c.max_utterance_ms = 2000;
  Endpointer ep(c);
  auto ev = Feed(ep, Frames('S', 5000));
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev[1].event, EndpointEvent::kMaxLength);
  EXPECT_EQ(ev[1].now_ms - ev[1].speech_start_ms, 2000);
}

// Real speech through the real VAD: "go forward ten meters" is one turn, ended promptly.
TEST(Endpointer, RealSpeechIsOneTurn) {
  std::ifstream in("/usr/share/pocketsphinx/test/data/goforward.raw", std::ios::binary);
  std::vector<int16_t> x;
  int16_t s;
  while (in.read(reinterpret_cast<char*>(&s), sizeof(s))) x.push_back(s);
  ASSERT_GT(x.size(), 16000u) << "install pocketsphinx-testdata";
  x.resize(x.size() + 16000, 0);  // a second of silence after the file
  auto vad = Vad::Create(VadConfig{}, 16000);
  ASSERT_TRUE(vad.ok());
  EndpointerConfig c;
  Endpointer ep(c);
  std::vector<EndpointUpdate> ev;
  for (size_t i = 0; i + 320 <= x.size(); i += 320) {
    auto r = vad->Process(AudioView(std::span<const int16_t>(x).subspan(i, 320), 16000));
    ASSERT_TRUE(r.ok());
    auto u = ep.Push(r->speech);
    if (u.event != EndpointEvent::kNone) ev.push_back(u);
  }
  std::vector<EndpointUpdate> turns;
  for (const auto& u : ev) {
    if (u.event == EndpointEvent::kEndOfTurn) turns.push_back(u);
  }
  ASSERT_EQ(turns.size(), 1u);
  EXPECT_NEAR(turns[0].speech_start_ms, 500, 60);
  EXPECT_NEAR(turns[0].speech_end_ms, 2200, 150);
  EXPECT_EQ(turns[0].now_ms - turns[0].speech_end_ms, c.trailing_silence_ms);
}

TEST(Endpointer, ADetectorsSilenceReplacesTheFixedRule) {
  EndpointerConfig c;
  Endpointer ep(c);
  // A long wait: a 600 ms pause does not end the turn, the silence after the last word does.
  auto ev = Feed(ep, Frames('.', 100) + Frames('S', 500));
  ASSERT_EQ(ev.size(), 1u);
  ep.SetSilenceNeededMs(1200);
  ev = Feed(ep, Frames('.', 600) + Frames('S', 400) + Frames('.', 1180));
  EXPECT_TRUE(ev.empty());
  ev = Feed(ep, Frames('.', 20));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].event, EndpointEvent::kEndOfTurn);
  EXPECT_EQ(ev[0].now_ms - ev[0].speech_end_ms, 1200);
  // Cleared at the next utterance: the fixed rule again, and a short wait ends sooner than it,
  // even with the looks-complete hint.
  ev = Feed(ep, Frames('S', 500));
  ep.SetLooksComplete(true);
  ep.SetSilenceNeededMs(100);
  ev = Feed(ep, Frames('.', 100));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].now_ms - ev[0].speech_end_ms, 100);
  ev = Feed(ep, Frames('S', 500) + Frames('.', c.trailing_silence_ms));
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].now_ms - ev[1].speech_end_ms, c.trailing_silence_ms);
}

}  // namespace
}  // namespace hotline::audio
