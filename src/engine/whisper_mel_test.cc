#include "engine/whisper_mel.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <numbers>
#include <random>
#include <vector>

#include "common/build_paths.h"
#include "engine/whisper_format.h"
#include "engine/whisper_ggml.h"

namespace hotline::engine {
namespace {

std::string TinyPath() {
  return std::string(HOTLINE_SHARED_DATA_DIR) + "/asr/whisper/for-tests-ggml-tiny.bin";
}

// log_mel_spectrogram(pcm) written directly from its definition in double precision: reflect
// padding, a direct DFT per frame, the filterbank product, log10 and Whisper's normalization.
std::vector<double> ReferenceLogMel(const std::vector<float>& pcm, const WhisperMelFilters& f,
                                    int* n_frames) {
  const int n = static_cast<int>(pcm.size());
  std::vector<double> padded(static_cast<size_t>(n) + 400);
  for (int i = 0; i < n + 400; ++i) {
    int j = i - 200;
    if (j < 0) j = -j;
    if (j > n - 1) j = 2 * (n - 1) - j;
    padded[static_cast<size_t>(i)] = pcm[static_cast<size_t>(j)];
  }
  const int frames = n / 160;  // 1 + n/160 STFT frames, the last dropped
  std::vector<double> out(static_cast<size_t>(frames) * f.n_mels);
  for (int t = 0; t < frames; ++t) {
    double power[201];
    for (int k = 0; k < 201; ++k) {
      double re = 0, im = 0;
      for (int i = 0; i < 400; ++i) {
        const double w = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * i / 400);
        const double x = w * padded[static_cast<size_t>(t * 160 + i)];
        const double a = 2 * std::numbers::pi * ((static_cast<long>(k) * i) % 400) / 400;
        re += x * std::cos(a);
        im -= x * std::sin(a);
      }
      power[k] = re * re + im * im;
    }
    for (int m = 0; m < f.n_mels; ++m) {
      double s = 0;
      for (int k = 0; k < 201; ++k) s += f.weights[static_cast<size_t>(m * 201 + k)] * power[k];
      out[static_cast<size_t>(t * f.n_mels + m)] = std::log10(std::max(s, 1e-10));
    }
  }
  const double mx = *std::max_element(out.begin(), out.end());
  for (double& v : out) v = (std::max(v, mx - 8.0) + 4.0) / 4.0;
  *n_frames = frames;
  return out;
}

std::vector<float> TestSignal(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.02f);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / 16000.0;
    x[i] = static_cast<float>(0.3 * std::sin(2 * std::numbers::pi * 440 * t) +
                              0.1 * std::sin(2 * std::numbers::pi * (300 + 2000 * t) * t)) +
           noise(rng);
  }
  return x;
}

double MaxAbsDiff(const std::vector<float>& got, const std::vector<double>& want, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  return worst;
}

TEST(WhisperMel, ComputedFilterbankEqualsTheModelFiles) {
  if (!std::filesystem::exists(TinyPath())) {
    GTEST_SKIP() << "missing " << TinyPath() << " (whisper.cpp's for-tests-ggml-tiny.bin in the "
                 << "shared data sets, ../shared/data)";
  }
  auto f = WhisperGgmlFile::Open(TinyPath());
  ASSERT_TRUE(f.ok()) << f.status();
  const WhisperMelFilters mine = WhisperMelFilters::Compute(80);
  ASSERT_EQ(mine.weights.size(), (*f)->mel_filters().size());
  double worst_rel = 0;
  for (size_t i = 0; i < mine.weights.size(); ++i) {
    const double a = mine.weights[i], b = (*f)->mel_filters()[i];
    if (b == 0.0) {
      EXPECT_EQ(a, 0.0) << "weight " << i;
      continue;
    }
    worst_rel = std::max(worst_rel, std::abs(a - b) / std::abs(b));
  }
  std::printf("filterbank: worst relative difference to the file %.3g\n", worst_rel);
  EXPECT_LT(worst_rel, 1e-6);
}

TEST(WhisperMel, FilterbankShapes) {
  for (int n_mels : {80, 128}) {
    const WhisperMelFilters f = WhisperMelFilters::Compute(n_mels);
    ASSERT_EQ(f.weights.size(), static_cast<size_t>(n_mels) * 201);
    for (int m = 0; m < n_mels; ++m) {
      double sum = 0;
      for (int k = 0; k < 201; ++k) {
        const float w = f.weights[static_cast<size_t>(m * 201 + k)];
        EXPECT_GE(w, 0.0f);
        sum += w;
      }
      EXPECT_GT(sum, 0.0) << n_mels << " bands: band " << m << " is empty";
    }
  }
}

TEST(WhisperMel, MatchesADirectDoublePrecisionImplementation) {
  const WhisperMelFilters filters = WhisperMelFilters::Compute(80);
  const WhisperMel mel(filters);
  for (size_t n : {201u, 479u, 480u, 4000u, 16000u + 77u}) {
    const std::vector<float> pcm = TestSignal(n, static_cast<uint32_t>(n));
    auto got = mel.Compute(pcm);
    ASSERT_TRUE(got.ok()) << got.status();
    int frames = 0;
    const std::vector<double> want = ReferenceLogMel(pcm, filters, &frames);
    ASSERT_EQ(got->n_frames, frames) << n;
    ASSERT_EQ(got->n_frames, static_cast<int>(n / 160));
    EXPECT_EQ(got->n_mels, 80);
    ASSERT_EQ(got->mel.size(), want.size());
    EXPECT_LT(MaxAbsDiff(got->mel, want, want.size()), 2e-6) << n;
  }
}

// ComputePadded against Whisper's transcribe(): the spectrogram of pcm + zeros, normalized over
// all of it. 1000 zeros stand in for Whisper's 480000: every frame past the audio is all zeros
// either way (log10 = -10), so the first frames and the maximum are the same.
TEST(WhisperMel, PaddedMatchesWhisperWithZeroPadding) {
  const WhisperMelFilters filters = WhisperMelFilters::Compute(80);
  const WhisperMel mel(filters);
  for (size_t n : {1u, 150u, 201u, 319u, 320u, 321u, 4000u, 16000u + 77u}) {
    std::vector<float> pcm = TestSignal(n, static_cast<uint32_t>(n) + 1);
    auto got = mel.ComputePadded(pcm);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->n_frames, static_cast<int>(2 * ((n + 319) / 320))) << n;
    EXPECT_EQ(got->n_frames % 2, 0);
    pcm.resize(n + 1000, 0.0f);
    int frames = 0;
    const std::vector<double> want = ReferenceLogMel(pcm, filters, &frames);
    ASSERT_GE(frames, got->n_frames);
    ASSERT_EQ(got->mel.size(), static_cast<size_t>(got->n_frames) * 80);
    EXPECT_LT(MaxAbsDiff(got->mel, want, got->mel.size()), 2e-6) << n;
  }
}

TEST(WhisperMel, SilenceGivesOneValue) {
  const WhisperMel mel(WhisperMelFilters::Compute(80));
  auto out = mel.Compute(std::vector<float>(16000, 0.0f));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->n_frames, 100);
  for (float v : out->mel) ASSERT_EQ(v, out->mel[0]);
  EXPECT_FLOAT_EQ(out->mel[0], -1.5f);  // (log10(1e-10) + 4) / 4
  auto padded = mel.ComputePadded(std::vector<float>(100, 0.0f));
  ASSERT_TRUE(padded.ok());
  for (float v : padded->mel) ASSERT_FLOAT_EQ(v, -1.5f);
}

TEST(WhisperMel, AToneLightsItsBand) {
  const WhisperMelFilters filters = WhisperMelFilters::Compute(80);
  const WhisperMel mel(filters);
  // Tones on bin centres (40 Hz apart): the periodic Hann window puts the power in bins k-1, k, k+1
  // at 1/16, 1, 1/16.
  for (double hz : {240.0, 1000.0, 3000.0}) {
    std::vector<float> pcm(16000);
    for (size_t i = 0; i < pcm.size(); ++i) {
      pcm[i] = static_cast<float>(0.5 * std::sin(2 * std::numbers::pi * hz * i / 16000.0));
    }
    auto out = mel.Compute(pcm);
    ASSERT_TRUE(out.ok());
    const float* row = out->mel.data() + 50 * 80;  // a frame in the middle
    const int peak = static_cast<int>(std::max_element(row, row + 80) - row);
    const int bin = static_cast<int>(hz / 40.0);
    auto response = [&](int m) {
      const float* w = filters.weights.data() + static_cast<size_t>(m) * 201;
      return w[bin] + (w[bin - 1] + w[bin + 1]) / 16.0;
    };
    int want = 0;
    for (int m = 1; m < 80; ++m) {
      if (response(m) > response(want)) want = m;
    }
    EXPECT_EQ(peak, want) << hz << " Hz";
    EXPECT_NEAR(row[peak], *std::max_element(out->mel.begin(), out->mel.end()), 0.05);
  }
}

TEST(WhisperMel, LengthEdgeCases) {
  const WhisperMel mel(WhisperMelFilters::Compute(80));
  // Compute() is Whisper's function as is: the reflect padding needs at least 201 samples.
  EXPECT_EQ(mel.Compute({}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mel.Compute(std::vector<float>(200)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mel.Compute(std::vector<float>(201)).value().n_frames, 1);
  EXPECT_EQ(mel.Compute(std::vector<float>(319)).value().n_frames, 1);
  EXPECT_EQ(mel.Compute(std::vector<float>(320)).value().n_frames, 2);
  EXPECT_EQ(mel.Compute(std::vector<float>(480000)).value().n_frames, 3000);
  // ComputePadded() zero-pads first, so any length works; frames come in pairs.
  EXPECT_EQ(mel.ComputePadded({}).value().n_frames, 0);
  EXPECT_EQ(mel.ComputePadded(std::vector<float>(1)).value().n_frames, 2);
  EXPECT_EQ(mel.ComputePadded(std::vector<float>(320)).value().n_frames, 2);
  EXPECT_EQ(mel.ComputePadded(std::vector<float>(321)).value().n_frames, 4);
  EXPECT_EQ(mel.ComputePadded(std::vector<float>(480000)).value().n_frames, 3000);
}

TEST(WhisperMel, FiltersFromGguf) {
  WhisperHparams hp{51865, 80, 1500, 384, 6, 4, 448, 384, 6, 4};
  {
    GgufWriter w;
    WriteWhisperHparams(hp, w);
    auto buf = w.WriteBuffer();
    ASSERT_TRUE(buf.ok());
    auto g = GgufFile::FromBuffer(*buf);
    ASSERT_TRUE(g.ok()) << g.status();
    auto f = WhisperMelFilters::FromGguf(**g);
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_EQ(f->weights, WhisperMelFilters::Compute(80).weights);  // absent: computed
  }
  {
    GgufWriter w;
    WriteWhisperHparams(hp, w);
    std::vector<float> wrong(100 * 80, 0.5f);
    const int64_t dims[2] = {100, 80};
    std::vector<uint8_t> bytes(wrong.size() * 4);
    std::memcpy(bytes.data(), wrong.data(), bytes.size());
    ASSERT_TRUE(w.AddTensor("mel_filters", GgmlType::F32, dims, std::move(bytes)).ok());
    auto buf = w.WriteBuffer();
    ASSERT_TRUE(buf.ok());
    auto g = GgufFile::FromBuffer(*buf);
    ASSERT_TRUE(g.ok());
    auto f = WhisperMelFilters::FromGguf(**g);
    ASSERT_FALSE(f.ok());
    EXPECT_NE(f.status().message().find("mel_filters must be F32 with dims {201, n_mels}"),
              std::string::npos)
        << f.status();
  }
}

TEST(WhisperMel, ThirtySecondsTakeASmallFractionOfRealTime) {
  const WhisperMel mel(WhisperMelFilters::Compute(80));
  const std::vector<float> pcm = TestSignal(480000, 99);
  auto warm = mel.Compute(pcm);  // first touch of the pages
  ASSERT_TRUE(warm.ok());
  double best_ms = 1e9;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = mel.Compute(pcm);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(out.ok());
    ASSERT_EQ(out->n_frames, 3000);
    best_ms = std::min(best_ms, ms);
  }
  std::printf("log-mel of 30 s (3000 frames x 80 bands): %.1f ms, %.2f%% of real time\n", best_ms,
              best_ms / 300.0);
  EXPECT_LT(best_ms, 3000.0);  // 10% of real time, loose for a loaded machine
}

}  // namespace
}  // namespace hotline::engine
