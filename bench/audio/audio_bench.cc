// Audio hot paths, measured per 20 ms frame as a call would run them.
//
// Each benchmark reports `rt_streams`: seconds of audio processed per second of one core, i.e.
// how many real-time streams one core could convert (ignoring everything else a call does).
// Baselines in the same run: the table-free G.711 reference, and the other libsamplerate
// converters next to the default sinc_medium.
//
//   build/bench/audio/audio_bench --benchmark_min_time=0.2s
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <memory>
#include <vector>

#include "audio/g711.h"
#include "audio/resampler.h"

namespace hotline::audio {
namespace {

constexpr double kFrameSeconds = kFrameMs / 1000.0;

std::vector<int16_t> Speechy(int rate, size_t n) {
  // A few harmonics with a slow envelope: exercises all G.711 segments, like voice does.
  std::vector<int16_t> s(n);
  for (size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / rate;
    const double env = 0.5 + 0.5 * std::sin(2 * M_PI * 3 * t);
    const double v = std::sin(2 * M_PI * 180 * t) + 0.5 * std::sin(2 * M_PI * 720 * t) +
                     0.25 * std::sin(2 * M_PI * 2100 * t);
    s[i] = static_cast<int16_t>(std::lround(12000 * env * v));
  }
  return s;
}

void SetStreams(benchmark::State& state, int64_t samples_per_iter) {
  state.SetItemsProcessed(state.iterations() * samples_per_iter);
  state.counters["rt_streams"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kFrameSeconds,
                         benchmark::Counter::kIsRate);
}

// One 20 ms frame at 8 kHz (160 samples), the G.711 frame of every telephone call.
constexpr size_t kG711Frame = 160;

void BM_MulawEncode(benchmark::State& state) {
  const auto pcm = Speechy(8000, kG711Frame);
  std::vector<uint8_t> out(kG711Frame);
  for (auto _ : state) {
    EncodeMulaw(pcm, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  SetStreams(state, kG711Frame);
}
BENCHMARK(BM_MulawEncode);

void BM_MulawEncodeReference(benchmark::State& state) {
  const auto pcm = Speechy(8000, kG711Frame);
  std::vector<uint8_t> out(kG711Frame);
  for (auto _ : state) {
    for (size_t i = 0; i < kG711Frame; ++i) out[i] = LinearToMulawReference(pcm[i]);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  SetStreams(state, kG711Frame);
}
BENCHMARK(BM_MulawEncodeReference);

void BM_MulawDecode(benchmark::State& state) {
  const auto pcm = Speechy(8000, kG711Frame);
  std::vector<uint8_t> codes(kG711Frame);
  EncodeMulaw(pcm, codes);
  std::vector<int16_t> out(kG711Frame);
  for (auto _ : state) {
    DecodeMulaw(codes, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  SetStreams(state, kG711Frame);
}
BENCHMARK(BM_MulawDecode);

void BM_AlawEncode(benchmark::State& state) {
  const auto pcm = Speechy(8000, kG711Frame);
  std::vector<uint8_t> out(kG711Frame);
  for (auto _ : state) {
    EncodeAlaw(pcm, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  SetStreams(state, kG711Frame);
}
BENCHMARK(BM_AlawEncode);

void BM_AlawEncodeReference(benchmark::State& state) {
  const auto pcm = Speechy(8000, kG711Frame);
  std::vector<uint8_t> out(kG711Frame);
  for (auto _ : state) {
    for (size_t i = 0; i < kG711Frame; ++i) out[i] = LinearToAlawReference(pcm[i]);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  SetStreams(state, kG711Frame);
}
BENCHMARK(BM_AlawEncodeReference);

void BM_AlawDecode(benchmark::State& state) {
  const auto pcm = Speechy(8000, kG711Frame);
  std::vector<uint8_t> codes(kG711Frame);
  EncodeAlaw(pcm, codes);
  std::vector<int16_t> out(kG711Frame);
  for (auto _ : state) {
    DecodeAlaw(codes, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  SetStreams(state, kG711Frame);
}
BENCHMARK(BM_AlawDecode);

// Gain in dB of a steady tone at `hz` through a fresh resampler (1 s, edges skipped).
double ToneGainDb(int from, int to, const ResamplerConfig& cfg, double hz) {
  std::vector<int16_t> in(static_cast<size_t>(from));
  for (size_t i = 0; i < in.size(); ++i) {
    in[i] = static_cast<int16_t>(std::lround(10000 * std::sin(2 * M_PI * hz * i / from)));
  }
  auto out = Resample(AudioView(in, from), to, cfg);
  if (!out.ok()) return 0;
  auto rms = [](std::span<const int16_t> s) {
    double e = 0;
    for (int16_t v : s) e += static_cast<double>(v) * v;
    return std::sqrt(e / static_cast<double>(s.size()));
  };
  const size_t skip_in = in.size() / 10, skip_out = out->size() / 10;
  const double gain = rms(std::span<const int16_t>(out->samples).subspan(skip_out, out->size() - 2 * skip_out)) /
                      rms(std::span<const int16_t>(in).subspan(skip_in, in.size() - 2 * skip_in));
  return 20 * std::log10(gain);
}

const char* const kConverters[] = {"sinc_medium", "sinc_fastest", "sinc_best", "linear"};

// Args: input rate, output rate, converter index. Streams 20 ms frames through one Resampler,
// reusing the output vector (the steady state of a call).
void BM_Resample(benchmark::State& state) {
  const int from = static_cast<int>(state.range(0));
  const int to = static_cast<int>(state.range(1));
  ResamplerConfig cfg;
  cfg.converter = kConverters[state.range(2)];
  auto r = Resampler::Create(from, to, cfg);
  if (!r.ok()) {
    state.SkipWithError(r.status().ToString().c_str());
    return;
  }
  const size_t frame = SamplesForMs(from, kFrameMs);
  // A second of varied input, consumed frame by frame, so the filter sees real signal.
  const auto input = Speechy(from, static_cast<size_t>(from));
  std::vector<int16_t> out;
  out.reserve(SamplesForMs(to, kFrameMs) + 64);
  size_t pos = 0;
  for (auto _ : state) {
    out.clear();
    if (!(*r)->Process(std::span<const int16_t>(input).subspan(pos, frame), out).ok()) {
      state.SkipWithError("Process failed");
      return;
    }
    benchmark::DoNotOptimize(out.data());
    pos = pos + 2 * frame <= input.size() ? pos + frame : 0;
  }
  SetStreams(state, static_cast<int64_t>(frame));
  state.counters["lookahead_ms"] = 1000.0 * (*r)->lookahead_samples() / to;
  // Passband check at 85 % of the lower Nyquist frequency: 3.4 kHz, the top of the telephone
  // band, when one side is 8 kHz.
  state.counters["gain_at_0.85nyq_db"] = ToneGainDb(from, to, cfg, 0.85 * std::min(from, to) / 2);
  state.SetLabel(cfg.converter);
}
BENCHMARK(BM_Resample)
    ->ArgNames({"from", "to", "conv"})
    ->Args({8000, 16000, 0})
    ->Args({16000, 8000, 0})
    ->Args({24000, 8000, 0})
    ->Args({48000, 16000, 0})
    ->Args({22050, 16000, 0})
    ->Args({44100, 16000, 0})
    ->Args({8000, 16000, 1})
    ->Args({16000, 8000, 1})
    ->Args({24000, 8000, 1})
    ->Args({48000, 16000, 1})
    ->Args({8000, 16000, 2})
    ->Args({16000, 8000, 2})
    ->Args({24000, 8000, 2})
    ->Args({48000, 16000, 2})
    ->Args({8000, 16000, 3})
    ->Args({16000, 8000, 3});

}  // namespace
}  // namespace hotline::audio

BENCHMARK_MAIN();
