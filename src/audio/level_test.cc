#include "audio/level.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "audio/audio_config.h"
#include "audio/speech_share.h"
#include "audio/wav.h"
#include "common/config.h"

namespace hotline::audio {
namespace {

std::vector<int16_t> Sine(int rate, size_t n, double hz, double amp) {
  std::vector<int16_t> s(n);
  for (size_t i = 0; i < n; ++i) {
    s[i] = static_cast<int16_t>(std::lround(amp * std::sin(2 * M_PI * hz * i / rate)));
  }
  return s;
}

std::vector<int16_t> Noise(size_t n, double amp, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> d(0.0, amp);
  std::vector<int16_t> s(n);
  for (auto& v : s) v = SaturateToInt16(static_cast<int32_t>(std::lround(d(rng))));
  return s;
}

void Append(std::vector<int16_t>& a, const std::vector<int16_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
}

TEST(Level, RmsAndPeakOfKnownSignals) {
  EXPECT_EQ(RmsDbfs({}), kSilenceDbfs);
  EXPECT_EQ(RmsDbfs(std::vector<int16_t>(160, 0)), kSilenceDbfs);
  EXPECT_NEAR(RmsDbfs(std::vector<int16_t>(160, -32768)), 0.0, 1e-9);  // full-scale square
  EXPECT_NEAR(RmsDbfs(Sine(8000, 8000, 1000, 32767)), -3.01, 0.01);
  EXPECT_NEAR(RmsDbfs(Sine(8000, 8000, 1000, 3277)), -23.01, 0.01);
  EXPECT_EQ(PeakAbs(std::vector<int16_t>{3, -32768, 5}), 32768);
  EXPECT_NEAR(PeakDbfs(32768), 0.0, 1e-12);
  EXPECT_NEAR(PeakDbfs(16384), -6.02, 0.01);
  EXPECT_EQ(PeakDbfs(0), kSilenceDbfs);
}

TEST(Level, TrimSilenceKeepsSoundAndMargins) {
  const int rate = 16000;
  std::vector<int16_t> x(rate / 2, 0);                  // 500 ms silence
  Append(x, Noise(rate / 2, 30, 1));                   // 500 ms line hiss (~ -61 dBFS)
  const size_t tone_at = x.size();
  Append(x, Sine(rate, rate, 300, 8000));              // 1 s of sound
  Append(x, std::vector<int16_t>(rate, 0));            // 1 s silence
  TrimConfig cfg;
  const SampleRange r = FindSoundRange(AudioView(x, rate), cfg);
  EXPECT_EQ(r.begin, tone_at - SamplesForMs(rate, cfg.keep_ms));
  EXPECT_EQ(r.end, tone_at + rate + SamplesForMs(rate, cfg.keep_ms));
  const AudioBuffer t = TrimSilence(AudioView(x, rate), cfg);
  EXPECT_EQ(t.size(), r.end - r.begin);
  EXPECT_EQ(t.sample_rate_hz, rate);

  const AudioBuffer none = TrimSilence(AudioView(std::vector<int16_t>(rate, 0), rate));
  EXPECT_TRUE(none.empty());
}

TEST(SpeechShare, CountsBurstsAboveANoisyFloor) {
  // 4 s: alternating 500 ms of hiss and 500 ms of a louder modulated tone, on top of the hiss.
  const int rate = 8000;
  std::vector<int16_t> x;
  for (int k = 0; k < 4; ++k) {
    Append(x, Noise(rate / 2, 100, 10 + k));
    auto burst = Sine(rate, rate / 2, 220 + 50 * k, 5000);
    const auto hiss = Noise(rate / 2, 100, 20 + k);
    for (size_t i = 0; i < burst.size(); ++i) burst[i] = SaturateToInt16(burst[i] + hiss[i]);
    Append(x, burst);
  }
  const SpeechShare s = MeasureSpeechShare(AudioView(x, rate));
  EXPECT_EQ(s.frames, 200);
  EXPECT_NEAR(s.share, 0.5, 0.03);
  EXPECT_NEAR(s.noise_floor_dbfs, RmsDbfs(Noise(rate, 100, 99)), 3.0);

  // Pure hiss, even loud hiss, is not speech.
  EXPECT_LT(MeasureSpeechShare(AudioView(Noise(4 * rate, 3000, 5), rate)).share, 0.02);
  // Digital silence is not speech.
  EXPECT_EQ(MeasureSpeechShare(AudioView(std::vector<int16_t>(rate, 0), rate)).share, 0.0);
  EXPECT_EQ(MeasureSpeechShare(AudioView(std::vector<int16_t>{}, rate)).frames, 0);
}

TEST(SpeechShare, RealSpeechIsMostlySpeechLike) {
  auto wav = ReadWavFile(
      "/usr/share/pocketsphinx/test/data/librivox/sense_and_sensibility_01_austen_64kb-0870.wav");
  ASSERT_TRUE(wav.ok()) << wav.status() << " (install pocketsphinx-testdata: scripts/setup)";
  const SpeechShare s = MeasureSpeechShare(wav->audio);
  EXPECT_GT(s.share, 0.5);
  EXPECT_LT(s.share, 0.98);  // a read sentence has pauses
}

TEST(AudioConfig, DefaultsValidateAndYamlRoundTrips) {
  AudioConfig cfg;
  EXPECT_TRUE(cfg.wav.Validate().ok());
  EXPECT_TRUE(cfg.resampler.Validate().ok());
  EXPECT_TRUE(cfg.trim.Validate().ok());
  EXPECT_TRUE(cfg.speech_share.Validate().ok());
  TrimConfig bad_trim;
  bad_trim.threshold_dbfs = 3;
  EXPECT_FALSE(bad_trim.Validate().ok());
  SpeechShareConfig bad_share;
  bad_share.floor_rise_db_per_s = 0;
  EXPECT_FALSE(bad_share.Validate().ok());
  WavConfig bad_wav;
  bad_wav.max_channels = 0;
  EXPECT_FALSE(bad_wav.Validate().ok());

  AudioConfig loaded;
  ASSERT_TRUE(ParseConfigYaml("resampler:\n  converter: sinc_fastest\ntrim:\n  keep_ms: 50\n",
                              "test.yaml", loaded)
                  .ok());
  EXPECT_EQ(loaded.resampler.converter, "sinc_fastest");
  EXPECT_EQ(loaded.trim.keep_ms, 50);
  EXPECT_TRUE(ValidateConfig(loaded).ok());
  AudioConfig wrong;
  ASSERT_TRUE(ParseConfigYaml("resampler:\n  converter: cubic\n", "test.yaml", wrong).ok());
  const Status v = ValidateConfig(wrong);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.message().find("resampler"), std::string::npos) << v;
}

}  // namespace
}  // namespace hotline::audio
