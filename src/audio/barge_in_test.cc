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

TEST(BargeIn, SustainedCallerSpeechInterruptsOnce) {
  BargeInDetector d(BargeInConfig{});
  int fired = 0;
  int at = -1;
  for (int i = 0; i < 50; ++i) {
    if (d.Process(Frame(true, -25), -120)) {
      ++fired;
      at = i;
    }
  }
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(at, 200 / kFrameMs - 1);
}

TEST(BargeIn, ShortBurstsDoNotInterrupt) {
  BargeInDetector d(BargeInConfig{});
  for (int i = 0; i < 100; ++i) {
    bool speech = (i % 10) < 3;  // 60 ms "mm" every 200 ms: gaps longer than max_gap_ms
    EXPECT_FALSE(d.Process(Frame(speech, -25), -120)) << i;
  }
}

TEST(BargeIn, IgnoresEchoThatFollowsTheOutboundSignal) {
  BargeInConfig c;
  BargeInDetector d(c);
  // Hotline speaks at -15 dBFS; its echo comes back 100 ms later 12 dB down and looks like speech.
  for (int i = 0; i < 175; ++i) {  // ends while Hotline speaks
    float out = (i / 25) % 2 == 0 ? -15.0f : -120.0f;  // 500 ms on, 500 ms off
    bool echo = i >= 5 && ((i - 5) / 25) % 2 == 0;
    EXPECT_FALSE(d.Process(Frame(echo, echo ? -27.0f : -70.0f), out)) << i;
  }
  // The echo tail (up to echo_tail_ms after the outbound stops) is ignored as well.
  for (int i = 0; i < c.echo_tail_ms / kFrameMs; ++i) {
    EXPECT_FALSE(d.Process(Frame(true, -27), -120)) << i;
  }
}

TEST(BargeIn, CallerLouderThanTheEchoGetsThrough) {
  BargeInDetector d(BargeInConfig{});
  bool fired = false;
  for (int i = 0; i < 30 && !fired; ++i) fired = d.Process(Frame(true, -20), -15);
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
    BargeInDetector d(BargeInConfig{});
    bool fired = false;
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
      fired |= d.Process(*r, out_level);
    }
    EXPECT_EQ(fired, caller);
  }
}

}  // namespace
}  // namespace hotline::audio
