#include "audio/prosody.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace hotline::audio {
namespace {

// A voiced frame: a pulse-like harmonic tone at `hz`, continuing the phase across frames.
std::vector<int16_t> Tone(double hz, double amplitude, int rate, double& phase) {
  std::vector<int16_t> f(static_cast<size_t>(rate / 50));
  for (auto& s : f) {
    double v = 0;
    for (int h = 1; h <= 4; ++h) v += std::sin(h * phase) / h;
    s = static_cast<int16_t>(amplitude * v);
    phase += 2 * M_PI * hz / rate;
  }
  return f;
}

TEST(ProsodyTracker, FindsThePitchAt8And16Khz) {
  for (int rate : {8000, 16000}) {
    for (double hz : {110.0, 200.0, 300.0}) {
      ProsodyTracker t;
      double phase = 0;
      for (int i = 0; i < 5; ++i) {
        auto f = Tone(hz, 8000, rate, phase);
        t.Push(AudioView(f, rate), true);
      }
      EXPECT_NEAR(t.last_pitch_hz(), hz, hz * 0.05) << rate << " Hz, " << hz;
    }
  }
}

TEST(ProsodyTracker, SeesAFallingEndAndEnergyDecay) {
  ProsodyTracker t;
  double phase = 0;
  // 600 ms at 200 Hz, then 200 ms falling to 120 Hz and fading: a statement's end.
  for (int i = 0; i < 30; ++i) {
    auto f = Tone(200, 8000, 8000, phase);
    t.Push(AudioView(f, 8000), true);
  }
  for (int i = 0; i < 10; ++i) {
    auto f = Tone(200 - 8.0 * i, 8000 * std::pow(0.8, i), 8000, phase);
    t.Push(AudioView(f, 8000), true);
  }
  const ProsodyFeatures falling = t.features();
  // Silence afterwards leaves the features as they were.
  std::vector<int16_t> quiet(160, 0);
  for (int i = 0; i < 10; ++i) t.Push(AudioView(quiet, 8000), false);
  EXPECT_TRUE(falling.valid);
  EXPECT_GT(falling.pitch_fall_st, 3.0);
  EXPECT_LT(falling.final_slope_st, -3.0);
  EXPECT_GT(falling.energy_drop_db, 5.0);
  EXPECT_FLOAT_EQ(t.features().pitch_fall_st, falling.pitch_fall_st);

  // The same start, ending level and rising: no fall.
  ProsodyTracker r;
  phase = 0;
  for (int i = 0; i < 40; ++i) {
    auto f = Tone(i < 30 ? 200 : 200 + 8.0 * (i - 30), 8000, 8000, phase);
    r.Push(AudioView(f, 8000), true);
  }
  EXPECT_LT(r.features().pitch_fall_st, -1.0);
  EXPECT_NEAR(r.features().energy_drop_db, 0, 1.0);
}

TEST(ProsodyTracker, NoiseIsNotVoiced) {
  ProsodyTracker t;
  uint32_t seed = 1;
  std::vector<int16_t> f(160);
  for (int i = 0; i < 20; ++i) {
    for (auto& s : f) {
      seed = seed * 1664525u + 1013904223u;
      s = static_cast<int16_t>(static_cast<int32_t>(seed >> 16) - 32768) / 4;
    }
    t.Push(AudioView(f, 8000), true);
  }
  EXPECT_FALSE(t.features().valid);
  t.Reset();
  EXPECT_EQ(t.features().voiced_frames, 0);
}

}  // namespace
}  // namespace hotline::audio
