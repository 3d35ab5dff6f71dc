#include "audio/resampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace hotline::audio {
namespace {

std::vector<int16_t> Tone(int rate, size_t n, double hz, double amp = 16000.0) {
  std::vector<int16_t> s(n);
  for (size_t i = 0; i < n; ++i) {
    s[i] = static_cast<int16_t>(std::lround(amp * std::sin(2 * M_PI * hz * i / rate)));
  }
  return s;
}

// SNR in dB of `got` against `ref` over [from, to).
double SnrDb(const std::vector<int16_t>& ref, const std::vector<int16_t>& got, size_t from,
             size_t to) {
  double sig = 0, err = 0;
  for (size_t i = from; i < to; ++i) {
    sig += static_cast<double>(ref[i]) * ref[i];
    const double d = static_cast<double>(got[i]) - ref[i];
    err += d * d;
  }
  return 10 * std::log10(sig / std::max(err, 1e-9));
}

std::vector<int16_t> OneShot(const std::vector<int16_t>& in, int from, int to,
                             const ResamplerConfig& cfg = {}) {
  auto r = Resample(AudioView(in, from), to, cfg);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? r->samples : std::vector<int16_t>{};
}

TEST(Resampler, ToneThroughEightSixteenEightKeepsOver40DbSnr) {
  const auto in = Tone(8000, 8000, 1000.0);  // 1 s of 1 kHz
  const auto up = OneShot(in, 8000, 16000);
  ASSERT_EQ(up.size(), 16000u);
  const auto back = OneShot(up, 16000, 8000);
  ASSERT_EQ(back.size(), 8000u);
  // Skip 20 ms at each end, where the filters see the signal's start/stop edges.
  const double snr = SnrDb(in, back, 160, 8000 - 160);
  RecordProperty("snr_db", std::to_string(snr));
  EXPECT_GT(snr, 40.0) << snr;
}

double RmsOf(const std::vector<int16_t>& s, size_t from, size_t to) {
  double e = 0;
  for (size_t i = from; i < to; ++i) e += static_cast<double>(s[i]) * s[i];
  return std::sqrt(e / static_cast<double>(to - from));
}

TEST(Resampler, DefaultConverterKeepsTheTelephoneBand) {
  // 300 Hz and 3.4 kHz tones at 8 kHz survive 8 -> 16 kHz within 0.5 dB.
  for (double hz : {300.0, 3400.0}) {
    const auto in = Tone(8000, 8000, hz, 10000.0);
    const auto up = OneShot(in, 8000, 16000);
    const double gain_db = 20 * std::log10(RmsOf(up, 1600, 14400) / RmsOf(in, 800, 7200));
    EXPECT_NEAR(gain_db, 0.0, 0.5) << hz << " Hz";
  }
}

TEST(Resampler, StreamingIn20MsFramesEqualsOneShot) {
  for (int from : kCommonRatesHz) {
    for (int to : kCommonRatesHz) {
      if (from == to) continue;
      const size_t n = static_cast<size_t>(from) * 3 / 10 + 7;  // 0.3 s, not a whole frame count
      const auto in = Tone(from, n, 700.0);
      const auto whole = OneShot(in, from, to);
      auto r = Resampler::Create(from, to);
      ASSERT_TRUE(r.ok()) << r.status();
      std::vector<int16_t> streamed;
      const size_t frame = SamplesForMs(from, kFrameMs);
      for (size_t i = 0; i < n; i += frame) {
        ASSERT_TRUE((*r)->Process(std::span<const int16_t>(in).subspan(i, std::min(frame, n - i)),
                                  streamed)
                        .ok());
      }
      ASSERT_TRUE((*r)->Flush(streamed).ok());
      ASSERT_EQ(streamed.size(), whole.size()) << from << "->" << to;
      int max_diff = 0;
      for (size_t i = 0; i < whole.size(); ++i) {
        max_diff = std::max(max_diff, std::abs(streamed[i] - whole[i]));
      }
      EXPECT_LE(max_diff, 2) << from << "->" << to;
    }
  }
}

TEST(Resampler, OutputLengthIsExactForEveryRatePair) {
  for (int from : kCommonRatesHz) {
    for (int to : kCommonRatesHz) {
      for (size_t n : {size_t{0}, size_t{1}, size_t{159}, size_t{2345}}) {
        const auto out = OneShot(std::vector<int16_t>(n, 100), from, to);
        const size_t expected = (n * to + from / 2) / from;
        EXPECT_EQ(out.size(), expected) << from << "->" << to << " n=" << n;
      }
    }
  }
}

TEST(Resampler, NoGlitchAtFrameEdges) {
  // A continuous 440 Hz tone streamed in 20 ms frames: the output's sample-to-sample step never
  // exceeds what the tone itself can do (a click at a frame edge would).
  const int from = 8000, to = 16000;
  const auto in = Tone(from, 16000, 440.0, 20000.0);
  auto r = Resampler::Create(from, to);
  ASSERT_TRUE(r.ok());
  std::vector<int16_t> out;
  for (size_t i = 0; i < in.size(); i += 160) {
    ASSERT_TRUE((*r)->Process(std::span<const int16_t>(in).subspan(i, 160), out).ok());
  }
  const double max_step = 20000.0 * 2 * M_PI * 440.0 / to * 1.05;
  for (size_t i = 400; i < out.size(); ++i) {
    ASSERT_LE(std::abs(out[i] - out[i - 1]), max_step) << "at " << i;
  }
}

TEST(Resampler, SteadyStateDoesNotGrowTheOutputVector) {
  auto r = Resampler::Create(48000, 16000);
  ASSERT_TRUE(r.ok());
  const auto in = Tone(48000, 960, 300.0);
  std::vector<int16_t> out;
  out.reserve(1024);
  const int16_t* data = out.data();
  for (int f = 0; f < 200; ++f) {
    out.clear();
    ASSERT_TRUE((*r)->Process(in, out).ok());
    EXPECT_EQ(out.data(), data);  // no reallocation
  }
  EXPECT_EQ((*r)->input_samples(), 200 * 960);
}

TEST(Resampler, ReportsLookahead) {
  auto r = Resampler::Create(8000, 16000);
  ASSERT_TRUE(r.ok());
  EXPECT_GT((*r)->lookahead_samples(), 0);
  EXPECT_LT((*r)->lookahead_samples(), 16000 / 50);  // under 20 ms
  auto same = Resampler::Create(16000, 16000);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ((*same)->lookahead_samples(), 0);
}

TEST(Resampler, RejectsBadRatesConfigAndUseAfterFlush) {
  EXPECT_FALSE(Resampler::Create(0, 16000).ok());
  EXPECT_FALSE(Resampler::Create(8000, 10000000).ok());
  ResamplerConfig bad;
  bad.converter = "cubic";
  auto r = Resampler::Create(8000, 16000, bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("sinc_medium"), std::string::npos);
  auto ok = Resampler::Create(8000, 16000);
  ASSERT_TRUE(ok.ok());
  std::vector<int16_t> out;
  ASSERT_TRUE((*ok)->Flush(out).ok());
  EXPECT_FALSE((*ok)->Process(std::vector<int16_t>(160), out).ok());
  (*ok)->Reset();
  EXPECT_TRUE((*ok)->Process(std::vector<int16_t>(160), out).ok());
}

}  // namespace
}  // namespace hotline::audio
