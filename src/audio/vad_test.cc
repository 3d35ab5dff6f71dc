#include "audio/vad.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <numbers>
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

// Voiced-speech-like signal: harmonics of a 140 Hz voice shaped by two formants, switched on and
// off like syllables.
std::vector<int16_t> Vowel(int rate, int ms, double amplitude) {
  std::vector<int16_t> out(SamplesForMs(rate, ms));
  for (size_t i = 0; i < out.size(); ++i) {
    double t = static_cast<double>(i) / rate;
    double v = 0;
    for (int h = 1; h * 140.0 < 3400; ++h) {
      double f = h * 140.0;
      double gain = 1.0 / (1 + std::pow((f - 700) / 150, 2)) + 0.5 / (1 + std::pow((f - 1200) / 200, 2));
      v += gain * std::sin(2 * std::numbers::pi * f * t);
    }
    out[i] = SaturateToInt16(static_cast<int32_t>(amplitude * v));
  }
  return out;
}

void AddNoise(std::vector<int16_t>& x, double stddev, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, stddev);
  for (auto& s : x) s = SaturateToInt16(static_cast<int32_t>(s + n(rng)));
}

std::vector<bool> RunVad(Vad& vad, const std::vector<int16_t>& x) {
  std::vector<bool> out;
  const size_t n = vad.frame_samples();
  for (size_t i = 0; i + n <= x.size(); i += n) {
    auto r = vad.Process(AudioView(std::span<const int16_t>(x).subspan(i, n), vad.sample_rate_hz()));
    EXPECT_TRUE(r.ok()) << r.status();
    out.push_back(r.ok() && r->speech);
  }
  return out;
}

int Count(const std::vector<bool>& v, size_t from, size_t to) {
  int c = 0;
  for (size_t i = from; i < to && i < v.size(); ++i) c += v[i];
  return c;
}

TEST(Vad, RejectsBadRatesFramesAndConfig) {
  EXPECT_FALSE(Vad::Create(VadConfig{}, 44100).ok());
  VadConfig bad;
  bad.hysteresis_db = 20;
  EXPECT_FALSE(Vad::Create(bad, 8000).ok());
  auto vad = Vad::Create(VadConfig{}, 8000);
  ASSERT_TRUE(vad.ok());
  std::vector<int16_t> frame(320, 0);
  EXPECT_FALSE(vad->Process(AudioView(frame, 8000)).ok());  // 40 ms
  EXPECT_FALSE(vad->Process(AudioView(std::span<const int16_t>(frame).first(160), 16000)).ok());
  EXPECT_TRUE(vad->Process(AudioView(std::span<const int16_t>(frame).first(160), 8000)).ok());
}

TEST(Vad, SilenceAndSteadyNoiseAreNotSpeech) {
  for (int rate : {8000, 16000}) {
    auto vad = Vad::Create(VadConfig{}, rate);
    ASSERT_TRUE(vad.ok());
    std::vector<int16_t> x(SamplesForMs(rate, 4000), 0);
    AddNoise(x, 300, 1);  // about -40 dBFS white noise
    auto v = RunVad(*vad, x);
    EXPECT_LE(Count(v, 10, v.size()), 2) << rate;
  }
}

TEST(Vad, FindsVowelsInNoiseAtBothRates) {
  for (int rate : {8000, 16000}) {
    auto vad = Vad::Create(VadConfig{}, rate);
    ASSERT_TRUE(vad.ok());
    std::vector<int16_t> x(SamplesForMs(rate, 1000), 0);
    auto vowel = Vowel(rate, 600, 1500);
    x.insert(x.end(), vowel.begin(), vowel.end());
    x.resize(x.size() + SamplesForMs(rate, 1000), 0);
    AddNoise(x, 200, 2);
    auto v = RunVad(*vad, x);
    EXPECT_EQ(Count(v, 5, 48), 0) << rate;          // leading noise
    EXPECT_GE(Count(v, 51, 80), 28) << rate;         // the vowel (frames 50-79)
    EXPECT_LE(Count(v, 84, v.size()), 0) << rate;    // trailing noise after the hangover
  }
}

TEST(Vad, LearnsAStepUpInLineNoise) {
  auto vad = Vad::Create(VadConfig{}, 8000);
  ASSERT_TRUE(vad.ok());
  std::vector<int16_t> x(SamplesForMs(8000, 1000), 0);
  AddNoise(x, 100, 3);
  std::vector<int16_t> loud(SamplesForMs(8000, 6000), 0);
  AddNoise(loud, 1500, 4);  // +24 dB
  x.insert(x.end(), loud.begin(), loud.end());
  auto v = RunVad(*vad, x);
  // Taken for speech at first, but learned as noise within the tracker window (2 s).
  EXPECT_EQ(Count(v, 50 + 150, v.size()), 0);
}

TEST(Vad, LongSentenceWithoutAPauseIsNotLearnedAsNoise) {
  // Six seconds of syllables that swing 10 dB but never drop to the line noise: the tracker
  // window (2 s) is full of speech, which must not become the noise floor.
  for (int rate : {8000, 16000}) {
    auto vad = Vad::Create(VadConfig{}, rate);
    ASSERT_TRUE(vad.ok());
    std::vector<int16_t> x(SamplesForMs(rate, 1000), 0);
    auto loud = Vowel(rate, 6000, 1500);
    for (size_t i = 0; i < loud.size(); ++i) {
      const double t = static_cast<double>(i) / rate;
      const double syllable = 0.66 + 0.34 * std::sin(2 * std::numbers::pi * 4.0 * t);  // 4 Hz
      loud[i] = SaturateToInt16(static_cast<int32_t>(loud[i] * syllable));
    }
    x.insert(x.end(), loud.begin(), loud.end());
    AddNoise(x, 30, 5);
    auto v = RunVad(*vad, x);
    EXPECT_GE(Count(v, 52, 350), 290) << rate;  // the whole sentence, 6 s = frames 50-349
  }
}

TEST(Vad, HearsFricativesAboveTheTelephoneBandAt16k) {
  // An "s": 60 tones at random frequencies between 4 and 7 kHz with random phases, nothing in
  // the telephone band, after quiet line noise.
  auto vad = Vad::Create(VadConfig{}, 16000);
  ASSERT_TRUE(vad.ok());
  std::vector<int16_t> x(SamplesForMs(16000, 1000), 0);
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> freq(4000, 7000), phase(0, 2 * std::numbers::pi);
  std::vector<std::pair<double, double>> tones(60);
  for (auto& [f, p] : tones) f = freq(rng), p = phase(rng);
  for (size_t i = 0; i < SamplesForMs(16000, 300); ++i) {
    double v = 0;
    for (const auto& [f, p] : tones) v += std::sin(2 * std::numbers::pi * f * i / 16000.0 + p);
    x.push_back(SaturateToInt16(static_cast<int32_t>(200 * v)));
  }
  x.resize(x.size() + SamplesForMs(16000, 500), 0);
  AddNoise(x, 30, 6);
  auto v = RunVad(*vad, x);
  EXPECT_EQ(Count(v, 5, 48), 0);
  EXPECT_GE(Count(v, 51, 65), 12);  // the fricative, frames 50-64
}

TEST(Vad, RealSpeechGoForward) {
  auto x = ReadRaw16("/usr/share/pocketsphinx/test/data/goforward.raw");
  ASSERT_GT(x.size(), 16000u) << "install pocketsphinx-testdata";
  auto vad = Vad::Create(VadConfig{}, 16000);
  ASSERT_TRUE(vad.ok());
  auto v = RunVad(*vad, x);
  // "go forward ten meters": about 1.4 s of speech in a 3.6 s file with quiet lead-in and tail.
  int speech = Count(v, 0, v.size());
  EXPECT_GE(speech, 45);
  EXPECT_LE(speech, 110);
  // The first 480 ms are room noise with one click (a single frame plus hangover at most).
  EXPECT_LE(Count(v, 0, 24), 3);
  EXPECT_GE(Count(v, 25, 32), 7);  // "go" starts at 500 ms
}

TEST(Vad, LevelDbfs) {
  std::vector<int16_t> full(160, 32767);
  EXPECT_NEAR(LevelDbfs(full), 0.0, 0.01);
  std::vector<int16_t> zero(160, 0);
  EXPECT_EQ(LevelDbfs(zero), -120.0f);
  EXPECT_EQ(LevelDbfs({}), -120.0f);
}

}  // namespace
}  // namespace hotline::audio
