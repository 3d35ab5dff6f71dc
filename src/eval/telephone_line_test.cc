#include "eval/telephone_line.h"

#include <gtest/gtest.h>

#include <cmath>

namespace hotline::eval {
namespace {

// One second of a 440 Hz tone at 16 kHz, with half a second of silence after it.
std::vector<int16_t> Tone() {
  std::vector<int16_t> v(24000, 0);
  for (int i = 0; i < 16000; ++i)
    v[i] = static_cast<int16_t>(8000 * std::sin(2 * M_PI * 440 * i / 16000.0));
  return v;
}

TEST(TelephoneLine, CarriesSpeechAt8kHzThroughMulaw) {
  const std::vector<int16_t> tone = Tone();
  auto line = ThroughTelephoneLine(audio::AudioView(tone, 16000), LineOptions{});
  ASSERT_TRUE(line.ok()) << line.status().message();
  EXPECT_NEAR(static_cast<double>(line->size()), 12000, 20);
  // μ-law keeps a clean tone's power within a few percent.
  const double in = ActiveSpeechPower(tone, 16000);
  EXPECT_NEAR(ActiveSpeechPower(*line, 8000) / in, 1.0, 0.05);
}

TEST(TelephoneLine, AddsNoiseAtTheRequestedSnrAgainstTheActiveSpeech) {
  const std::vector<int16_t> tone = Tone();
  for (double snr : {20.0, 10.0}) {
    LineOptions o;
    o.add_noise = true;
    o.snr_db = snr;
    o.seed = 7;
    auto clean = ThroughTelephoneLine(audio::AudioView(tone, 16000), LineOptions{});
    auto noisy = ThroughTelephoneLine(audio::AudioView(tone, 16000), o);
    ASSERT_TRUE(noisy.ok());
    // The noise is what the silent half second now holds.
    double noise = 0;
    for (size_t i = 8200; i < noisy->size(); ++i) noise += double((*noisy)[i]) * (*noisy)[i];
    noise /= static_cast<double>(noisy->size() - 8200);
    const double measured = 10 * std::log10(ActiveSpeechPower(*clean, 8000) / noise);
    EXPECT_NEAR(measured, snr, 1.0) << snr;
    // Seeded: the same noise every run.
    auto again = ThroughTelephoneLine(audio::AudioView(tone, 16000), o);
    EXPECT_EQ(*again, *noisy);
  }
}

TEST(TelephoneLine, RefusesAnAbsurdSnr) {
  const std::vector<int16_t> tone = Tone();
  LineOptions o;
  o.add_noise = true;
  o.snr_db = 1000;
  EXPECT_FALSE(ThroughTelephoneLine(audio::AudioView(tone, 16000), o).ok());
}

}  // namespace
}  // namespace hotline::eval
