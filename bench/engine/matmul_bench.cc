// MatMul throughput against the memory-bandwidth limit.
//
//   build/bench/engine/engine_matmul_bench [--benchmark_filter=...]
//
// BM_ReadBandwidth       2-thread read bandwidth (the ceiling for decode), same run.
// BM_DecodeModel<type>   one token through the 168 projections of a 0.5B-shaped model (Qwen2.5-0.5B
//                        dims, 24 layers, distinct buffers, ~200 MB in Q4_0) on 2 threads:
//                        bytes_per_second = weight bytes streamed per second.
// BM_DecodeMatrix<type>  one token x one vocabulary-sized matrix (151936 x 896).
// BM_PrefillLayer<type>  256 tokens through one layer's projections (compute bound);
//                        items_per_second = tokens per second for that layer.
// Compare DecodeModel's bytes_per_second with ReadBandwidth's; and PrefillLayer's tokens/s with
// 24 x the reciprocal of DecodeModel's time per token.
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "engine/bandwidth.h"
#include "engine/compute_pool.h"
#include "engine/ggml_types.h"
#include "engine/matmul.h"

namespace hotline::engine {
namespace {

constexpr int kThreads = 2;

// Random codes with valid, small half-float scales: the kernels' speed does not depend on the
// values, and filling bytes is much faster than quantizing floats.
std::vector<uint8_t> RandomWeights(GgmlType t, int64_t rows, int64_t cols, uint32_t seed) {
  const int64_t row_bytes = *RowBytes(t, cols);
  std::vector<uint8_t> w(static_cast<size_t>(rows * row_bytes));
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i + 8 <= w.size(); i += 8) {
    const uint64_t v = rng();
    std::memcpy(&w[i], &v, 8);
  }
  const GgmlTypeInfo* info = GetTypeInfo(t);
  const uint16_t scale = F32ToF16(0.01f);
  if (t == GgmlType::F16 || t == GgmlType::BF16 || t == GgmlType::F32) {
    for (size_t i = 0; i < w.size(); i += 2) std::memcpy(&w[i], &scale, 2);
    return w;
  }
  // d (and m/dmin where present) lead every block except Q6_K, whose d is last.
  const size_t off = t == GgmlType::Q6_K ? 208 : 0;
  for (size_t b = 0; b + static_cast<size_t>(info->block_bytes) <= w.size();
       b += static_cast<size_t>(info->block_bytes)) {
    std::memcpy(&w[b + off], &scale, 2);
    if (t == GgmlType::Q4_1 || t == GgmlType::Q5_1 || t == GgmlType::Q4_K ||
        t == GgmlType::Q5_K) {
      std::memcpy(&w[b + 2], &scale, 2);
    }
  }
  return w;
}

struct Proj {
  std::vector<uint8_t> bytes;
  WeightMatrix w;
  PackedBytes packed;  // the copy the engine's model would make on this path, if any
};

// Packs w as Model::Load does when the active kernel path reads packed weights.
PackedBytes PackLikeTheModel(WeightMatrix& w) {
  if (!KernelIsaUsesPackedWeights(ActiveKernelIsa())) return nullptr;
  auto packed = PackWeights(w);
  if (!packed.ok()) return nullptr;
  w.packed = packed->get();
  return std::move(*packed);
}

// The seven projections of one Qwen2.5-0.5B layer: q, k, v, o, gate, up, down.
std::vector<Proj> MakeLayer(GgmlType t, uint32_t seed) {
  const int64_t dim = 896, kv = 128, ffn = 4864;
  const int64_t shapes[7][2] = {{dim, dim}, {kv, dim}, {kv, dim}, {dim, dim},
                                {ffn, dim}, {ffn, dim}, {dim, ffn}};
  std::vector<Proj> out(7);
  for (int i = 0; i < 7; ++i) {
    out[i].bytes = RandomWeights(t, shapes[i][0], shapes[i][1], seed * 7 + i);
    out[i].w = {t, out[i].bytes.data(), shapes[i][0], shapes[i][1]};
    out[i].packed = PackLikeTheModel(out[i].w);
  }
  return out;
}

void BM_ReadBandwidth(benchmark::State& state) {
  ComputePool pool(kThreads);
  for (auto _ : state) {
    auto r = MeasureReadBandwidth(pool, {size_t{512} << 20, 5});
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    state.counters["best_GBps"] = r->best_gbps;
    state.counters["median_GBps"] = r->median_gbps;
  }
}
BENCHMARK(BM_ReadBandwidth)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DecodeModel(benchmark::State& state) {
  const auto type = static_cast<GgmlType>(state.range(0));
  std::vector<std::vector<Proj>> layers;
  int64_t bytes = 0;
  for (int l = 0; l < 24; ++l) {
    layers.push_back(MakeLayer(type, static_cast<uint32_t>(l)));
    for (const Proj& p : layers.back()) bytes += static_cast<int64_t>(p.bytes.size());
  }
  ComputePool pool(kThreads);
  std::vector<float> x(4864, 0.5f), y(4864);
  for (auto _ : state) {
    for (const auto& layer : layers) {
      for (const Proj& p : layer) MatMul(p.w, x.data(), 1, y.data(), pool);
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * bytes);
  state.SetLabel(std::string(TypeName(type)) + " " + KernelIsaName(ActiveKernelIsa()));
}

void BM_DecodeMatrix(benchmark::State& state) {
  const auto type = static_cast<GgmlType>(state.range(0));
  const int64_t rows = 151936, cols = 896;
  const std::vector<uint8_t> bytes = RandomWeights(type, rows, cols, 1);
  WeightMatrix w{type, bytes.data(), rows, cols};
  const PackedBytes packed = PackLikeTheModel(w);
  ComputePool pool(kThreads);
  std::vector<float> x(cols, 0.5f), y(rows);
  for (auto _ : state) {
    MatMul(w, x.data(), 1, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes.size()));
  state.SetLabel(std::string(TypeName(type)) + " " + KernelIsaName(ActiveKernelIsa()));
}

void BM_PrefillLayer(benchmark::State& state) {
  const auto type = static_cast<GgmlType>(state.range(0));
  const int n_tokens = 256;
  const std::vector<Proj> layer = MakeLayer(type, 3);
  ComputePool pool(kThreads);
  std::vector<float> x(static_cast<size_t>(n_tokens) * 4864, 0.5f), y(x.size());
  for (auto _ : state) {
    for (const Proj& p : layer) MatMul(p.w, x.data(), n_tokens, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(state.iterations() * n_tokens);
  state.SetLabel(std::string(TypeName(type)) + " " + KernelIsaName(ActiveKernelIsa()));
}

void Types(benchmark::internal::Benchmark* b) {
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K,
                     GgmlType::Q5_0, GgmlType::F16}) {
    b->Arg(static_cast<int64_t>(t));
  }
}
BENCHMARK(BM_DecodeModel)->Apply(Types)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_DecodeMatrix)->Apply(Types)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PrefillLayer)->Apply(Types)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace hotline::engine

BENCHMARK_MAIN();
