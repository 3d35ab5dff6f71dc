// `hotline engine bench -m MODEL.gguf [--threads T] [--prompt-tokens P] [--gen-tokens G]
//  [--kernel K] [--json]`
// Measures prefill and decode speed of the engine on MODEL, and the machine's read bandwidth in
// the same run, so decode can be judged against the memory-bus limit.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <vector>

#include "app/cli.h"
#include "engine/bandwidth.h"
#include "engine/compute_pool.h"
#include "engine/engine.h"
#include "engine/matmul.h"

namespace hotline::cli {

// cmd_engine_bench_batch.cc: the batching scheduler's figures (--concurrency).
int RunBatchBench(std::span<const std::string> argv);

namespace {

constexpr char kUsage[] =
    "usage: hotline engine bench -m MODEL.gguf [--threads T] [--prompt-tokens P]\n"
    "                            [--gen-tokens G] [--kernel auto|avx512|avxvnni|avx2|scalar]\n"
    "                            [--json]\n"
    "  Prefill: one P-token prompt (default 256). Decode: G single-token steps (default 64).\n"
    "  Bandwidth: T threads reading a 512 MiB buffer, best of 5 passes, measured in this run.\n"
    "  decode_bandwidth_fraction = weights_bytes x decode tokens/s / bandwidth, where\n"
    "  weights_bytes are the bytes every decode step streams (all matrices; the embedding\n"
    "  table only when it doubles as the output projection).\n"
    "  With --concurrency N1,N2,...: batched decode and prefix-cache figures instead\n"
    "  (`hotline engine bench --concurrency 1 --help` for its options).\n";

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// One sequence's prefill of a fixed `prompt_tokens`-token prompt, then `gen_tokens` greedy decode
// steps, each timed after a warm-up.
struct Speed {
  double prefill_s = 0, decode_s = 0;
};

Result<Speed> MeasureSpeed(engine::Engine& e, int prompt_tokens, int gen_tokens) {
  const int n_vocab = e.model().hparams().n_vocab;
  std::vector<int32_t> prompt(static_cast<size_t>(prompt_tokens));
  for (size_t i = 0; i < prompt.size(); ++i) {
    prompt[i] = static_cast<int32_t>((i * 7919 + 11) % static_cast<size_t>(n_vocab));
  }
  // Warm-up: one short prompt and two steps touch every weight page once (the file is mmap'ed).
  {
    ASSIGN_OR_RETURN(int seq, e.CreateSequence());
    const int32_t warm[] = {prompt[0], prompt[1 % prompt.size()]};
    for (int32_t t : warm) RETURN_IF_ERROR(e.Feed(seq, std::span<const int32_t>(&t, 1)).status());
    e.RemoveSequence(seq);
  }
  ASSIGN_OR_RETURN(int seq, e.CreateSequence());
  Speed speed;
  const auto t0 = std::chrono::steady_clock::now();
  auto logits = e.Feed(seq, prompt);
  const auto t1 = std::chrono::steady_clock::now();
  if (!logits.ok()) return logits.status();
  speed.prefill_s = Seconds(t0, t1);
  // Decode: greedy next token each step (the argmax costs n_vocab compares, negligible).
  auto argmax = [](std::span<const float> l) {
    size_t best = 0;
    for (size_t i = 1; i < l.size(); ++i) {
      if (l[i] > l[best]) best = i;
    }
    return static_cast<int32_t>(best);
  };
  int32_t next = argmax(*logits);
  const auto t2 = std::chrono::steady_clock::now();
  for (int i = 0; i < gen_tokens; ++i) {
    ASSIGN_OR_RETURN(auto r, e.Feed(seq, std::span<const int32_t>(&next, 1)));
    next = argmax(r);
  }
  speed.decode_s = Seconds(t2, std::chrono::steady_clock::now());
  e.RemoveSequence(seq);
  return speed;
}

int RunBench(std::span<const std::string> argv) {
  if (std::find(argv.begin(), argv.end(), "--concurrency") != argv.end()) {
    return RunBatchBench(argv);
  }
  auto args = Args::Parse(argv, {"-m", "--model", "--threads", "--prompt-tokens", "--gen-tokens",
                                 "--kernel"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  std::optional<std::string> model = args->Get("-m");
  if (!model) model = args->Get("--model");
  auto threads = args->GetInt("--threads", 2, 1, 256);
  auto prompt_tokens = args->GetInt("--prompt-tokens", 256, 1, 8192);
  auto gen_tokens = args->GetInt("--gen-tokens", 64, 1, 8192);
  const std::string kernel = args->GetOr("--kernel", "auto");
  const bool json = args->Has("--json");
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  for (const auto* r : {&threads, &prompt_tokens, &gen_tokens}) {
    if (!r->ok()) return UsageError(r->status().message(), kUsage);
  }
  if (!model) return UsageError("missing -m MODEL.gguf", kUsage);
  if (!args->positional().empty()) return UsageError("unexpected argument", kUsage);

  engine::EngineConfig config;
  config.model_path = *model;
  config.threads = static_cast<int>(*threads);
  config.kernel = kernel;
  config.max_seq_len = static_cast<int>(*prompt_tokens + *gen_tokens + 8);
  config.max_batch_tokens = static_cast<int>(std::max<long long>(*prompt_tokens, 1));
  auto engine = engine::Engine::Load(config);
  if (!engine.ok()) return Fail(engine.status());
  engine::Engine& e = **engine;

  auto speed = MeasureSpeed(e, static_cast<int>(*prompt_tokens), static_cast<int>(*gen_tokens));
  if (!speed.ok()) return Fail(speed.status());
  const double prefill_s = speed->prefill_s;
  const double decode_s = speed->decode_s;

  engine::ComputePool bw_pool(static_cast<int>(*threads));
  auto bw = engine::MeasureReadBandwidth(bw_pool);
  if (!bw.ok()) return Fail(bw.status());

  const double prefill_tps = static_cast<double>(*prompt_tokens) / prefill_s;
  const double decode_tps = static_cast<double>(*gen_tokens) / decode_s;
  const double weights_bytes = static_cast<double>(e.model().weights_bytes());
  const double decode_gbps = weights_bytes * decode_tps / 1e9;
  const double fraction = decode_gbps / bw->best_gbps;
  const char* isa = engine::KernelIsaName(engine::ActiveKernelIsa());
  if (json) {
    std::printf(
        "{\"model\": \"%s\", \"threads\": %lld, \"kernel\": \"%s\", \"prompt_tokens\": %lld, "
        "\"gen_tokens\": %lld, \"prefill_tokens_per_s\": %.2f, \"decode_tokens_per_s\": %.2f, "
        "\"prefill_over_decode\": %.2f, \"weights_bytes\": %.0f, \"decode_gbps\": %.2f, "
        "\"memory_bandwidth_gbps\": %.2f, \"memory_bandwidth_median_gbps\": %.2f, "
        "\"decode_bandwidth_fraction\": %.3f}\n",
        model->c_str(), *threads, isa, *prompt_tokens, *gen_tokens, prefill_tps, decode_tps,
        prefill_tps / decode_tps, weights_bytes, decode_gbps, bw->best_gbps, bw->median_gbps,
        fraction);
  } else {
    std::printf("model %s, %lld threads, kernel %s\n", model->c_str(), *threads, isa);
    std::printf("prefill  %lld tokens: %.2f tokens/s\n", *prompt_tokens, prefill_tps);
    std::printf("decode   %lld tokens: %.2f tokens/s (%.2f GB/s of %.0f weight bytes/step)\n",
                *gen_tokens, decode_tps, decode_gbps, weights_bytes);
    std::printf("memory bandwidth: %.2f GB/s best, %.2f median; decode uses %.1f %%\n",
                bw->best_gbps, bw->median_gbps, 100 * fraction);
  }
  return 0;
}

const CommandRegistrar kBench({"engine bench",
                               "measure prefill/decode speed against the memory bandwidth",
                               kUsage, RunBench});

}  // namespace
}  // namespace hotline::cli
