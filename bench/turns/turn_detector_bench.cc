// The turn detector's cost: what one call adds per 20 ms frame (prosody + decision) and per new
// partial transcript (the words model's look-up), with the shipped model.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "asr/turn_detector.h"

namespace {

using namespace hotline;

std::shared_ptr<const asr::TurnEndModel> Model() {
  static auto m = asr::LoadTurnEndModel(asr::TurnDetectorConfig{});
  if (!m.ok()) {
    std::fprintf(stderr, "%s\n", m.status().message().c_str());
    return nullptr;
  }
  return *m;
}

std::vector<int16_t> Voiced(int rate) {
  std::vector<int16_t> f(static_cast<size_t>(rate / 50));
  for (size_t i = 0; i < f.size(); ++i) {
    const double t = static_cast<double>(i) / rate;
    f[i] = static_cast<int16_t>(6000 * std::sin(2 * M_PI * 140 * t) +
                                2000 * std::sin(2 * M_PI * 420 * t));
  }
  return f;
}

void BM_TurnDetectorFrame(benchmark::State& state) {
  const int rate = static_cast<int>(state.range(0));
  auto model = Model();
  if (!model) return state.SkipWithError("no turn-end model");
  asr::TurnDetector d(asr::TurnDetectorConfig{}, model);
  d.OnPartial("can you send me a copy of my invoice", 0);
  const std::vector<int16_t> frame = Voiced(rate);
  int64_t now = 0;
  for (auto _ : state) {
    now += 20;
    d.OnFrame(audio::AudioView(frame, rate), true, now);
    benchmark::DoNotOptimize(d.WaitMs(now));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TurnDetectorFrame)->Arg(8000)->Arg(16000);

void BM_TurnDetectorPartial(benchmark::State& state) {
  auto model = Model();
  if (!model) return state.SkipWithError("no turn-end model");
  asr::TurnDetector d(asr::TurnDetectorConfig{}, model);
  const char* partials[] = {"can you send me a copy of", "can you send me a copy of my invoice"};
  int64_t now = 0;
  int i = 0;
  for (auto _ : state) {
    d.OnPartial(partials[i ^= 1], now += 100);
    benchmark::DoNotOptimize(d.WaitMs(now));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_TurnDetectorPartial);

}  // namespace

BENCHMARK_MAIN();
