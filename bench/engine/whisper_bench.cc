// Whisper encoder and decoder speed on random weights (speed does not depend on the values).
//
//   build/bench/engine/engine_whisper_bench [--benchmark_filter=...]
//
// Models: the real tiny (384 wide, 6 heads, 4 + 4 layers) and base (512, 8, 6 + 6) layouts with
// the real 51,865-token vocabulary and 30 s / 448-token contexts, matrices in Q8_0 or F16 (conv
// weights and position tables F16, as in the ggml files). 2 threads.
//
// BM_WhisperEncode/<size>/<type>  one 3 s utterance (300 mel frames -> 150 positions);
//                                 x_realtime = 3 s / encoder time (1 / real-time factor).
// BM_WhisperSetAudio/...          the cross-attention keys/values of every decoder layer for
//                                 those 150 positions (once per utterance).
// BM_WhisperDecodeToken/...       one token with the KV cache (history 4..35 tokens) and the
//                                 last token's logits over the whole vocabulary.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/compute_pool.h"
#include "engine/whisper_forward.h"
#include "engine/whisper_model.h"
#include "engine/whisper_test_util.h"

namespace hotline::engine {
namespace {

constexpr int kThreads = 2;
constexpr int kFrames = 300;  // 3 s at 100 frames a second

struct Size {
  const char* name;
  int state, heads, layers;
};
constexpr Size kSizes[] = {{"tiny", 384, 6, 4}, {"base", 512, 8, 6}};
constexpr GgmlType kTypes[] = {GgmlType::Q8_0, GgmlType::F16};

// Models are built once per (size, type) and kept for the whole run.
const WhisperModel& GetModel(int size, int type) {
  static std::map<std::pair<int, int>, std::unique_ptr<WhisperModel>> models;
  auto& slot = models[{size, type}];
  if (!slot) {
    const Size& s = kSizes[size];
    testing::RandomWhisperSpec spec;
    spec.hp = WhisperHparams{51865,    80,  1500,    s.state, s.heads,
                             s.layers, 448, s.state, s.heads, s.layers};
    spec.type = kTypes[type];
    auto file = testing::MakeRandomWhisper(spec);
    if (!file.ok()) {
      std::fprintf(stderr, "%s\n", file.status().ToString().c_str());
      std::abort();
    }
    auto model = WhisperModel::Load(*file);
    if (!model.ok()) {
      std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
      std::abort();
    }
    slot = std::move(*model);
  }
  return *slot;
}

ComputePool& Pool() {
  static ComputePool pool(kThreads);
  return pool;
}

void Label(benchmark::State& state, int size, int type) {
  state.SetLabel(std::string(kSizes[size].name) + "/" + TypeName(kTypes[type]));
}

void BM_WhisperEncode(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0)), type = static_cast<int>(state.range(1));
  const WhisperModel& model = GetModel(size, type);
  const std::vector<float> mel = testing::RandomMel(kFrames, model.hparams().n_mels, 1);
  WhisperEncoder enc(model, Pool());
  std::vector<float> out;
  for (auto _ : state) {
    if (!enc.Encode(mel, kFrames, &out).ok()) state.SkipWithError("encode failed");
    benchmark::DoNotOptimize(out.data());
  }
  Label(state, size, type);
  // Seconds of audio encoded per second: the inverse of the real-time factor.
  state.counters["x_realtime"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * kFrames / 100.0, benchmark::Counter::kIsRate);
}

void BM_WhisperSetAudio(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0)), type = static_cast<int>(state.range(1));
  const WhisperModel& model = GetModel(size, type);
  const int n = kFrames / 2;
  const std::vector<float> audio = testing::RandomMel(n, model.hparams().n_audio_state, 2);
  WhisperDecoder dec(model, Pool());
  for (auto _ : state) {
    if (!dec.SetAudio(audio, n).ok()) state.SkipWithError("SetAudio failed");
  }
  Label(state, size, type);
}

void BM_WhisperDecodeToken(benchmark::State& state) {
  const int size = static_cast<int>(state.range(0)), type = static_cast<int>(state.range(1));
  const WhisperModel& model = GetModel(size, type);
  const int n = kFrames / 2;
  const std::vector<float> audio = testing::RandomMel(n, model.hparams().n_audio_state, 2);
  WhisperDecoder dec(model, Pool());
  if (!dec.SetAudio(audio, n).ok()) state.SkipWithError("SetAudio failed");
  const int32_t prompt[] = {50258, 50259, 50359, 50363};  // sot, en, transcribe, notimestamps
  std::vector<float> logits;
  int32_t token = 440;
  if (!dec.Decode(prompt, &logits).ok()) state.SkipWithError("prompt failed");
  for (auto _ : state) {
    if (dec.n_past() >= 36) {
      state.PauseTiming();
      dec.Reset();
      if (!dec.Decode(prompt, &logits).ok()) state.SkipWithError("prompt failed");
      state.ResumeTiming();
    }
    if (!dec.Decode(std::span(&token, 1), &logits).ok()) state.SkipWithError("decode failed");
    token = (token * 31 + 7) % 50000;
  }
  Label(state, size, type);
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void Args(benchmark::internal::Benchmark* b) {
  for (int size = 0; size < 2; ++size) {
    for (int type = 0; type < 2; ++type) b->Args({size, type});
  }
  b->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_WhisperEncode)->Apply(Args);
BENCHMARK(BM_WhisperSetAudio)->Apply(Args);
BENCHMARK(BM_WhisperDecodeToken)->Apply(Args);

}  // namespace
}  // namespace hotline::engine

BENCHMARK_MAIN();
