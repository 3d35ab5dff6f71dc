// `hotline engine bench -m MODEL.gguf --concurrency 1,2,4,8,16,32 [--prefix-tokens 500] ...`
// The batching scheduler's figures, each against a baseline measured in the same run:
//   - aggregate decode tokens/s with N concurrent sequences, and its ratio to one sequence;
//   - time to first token of a request whose system prompt is in the prefix cache, against the
//     first (cold) request, both while another sequence holds the cached blocks and when idle.
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "app/cli.h"
#include "engine/batch_scheduler.h"
#include "engine/engine.h"
#include "engine/matmul.h"

namespace hotline::cli {

namespace {

constexpr char kBatchUsage[] =
    "usage: hotline engine bench -m MODEL.gguf --concurrency N1,N2,... [--threads T]\n"
    "         [--prompt-tokens P] [--gen-tokens G] [--prefix-tokens S] [--max-batch-size B]\n"
    "         [--prefix-repeats R] [--kernel K] [--json]\n"
    "  Decode: for each N, N sequences with distinct P-token prompts (default 32) are\n"
    "  submitted together to the batching scheduler and generate G tokens each (default 64,\n"
    "  end tokens ignored). Aggregate decode tokens/s = tokens generated after every sequence\n"
    "  had its first token / the time since then; the ratio is to the latest N=1 point before\n"
    "  it (so 1,16,1,16 pairs measurements on a busy machine). B defaults to max(largest N, 16).\n"
    "  Also one N-token prompt in one pass (the same matrix products as N decode tokens: the\n"
    "  kernels' ceiling for a batch of N). Tokens per CPU-second (process CPU time) are\n"
    "  printed beside tokens/s: steadier when other work shares the machine.\n"
    "  Prefix cache (S > 0, default 500): A = S-token system prompt + 8 own tokens, cold;\n"
    "  B = same system prompt + 8 other tokens while A is still generating (holding the\n"
    "  blocks); C = the same after A ended. Prints each time to first token and the ratios.\n"
    "  --prefix-repeats R (default 1) measures A, B, C R times, each with a new system prompt,\n"
    "  and reports the median of each (and of each ratio): steadier on a shared machine.\n";

// CPU seconds used by this process (all threads): on a machine shared with other work, tokens per
// CPU-second tracks what the kernels do far better than wall time.
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double Ms(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

Result<std::vector<int>> ParseList(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > 1024) {
      return InvalidArgumentError("--concurrency wants numbers in [1, 1024] separated by commas");
    }
    out.push_back(static_cast<int>(v));
  }
  if (out.empty()) return InvalidArgumentError("--concurrency is empty");
  return out;
}

std::vector<int32_t> RandomTokens(std::mt19937& rng, int n, int n_vocab) {
  std::uniform_int_distribution<int32_t> d(0, n_vocab - 1);
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int32_t& t : v) t = d(rng);
  return v;
}

struct DecodePoint {
  int concurrency = 0;
  double decode_tps = 0;
  double decode_tokens_per_cpu_s = 0;  // same tokens over the process's CPU time
  // One sequence's N-token prompt in one pass: the same matrix products as a batch of N decode
  // tokens, so the kernels' ceiling for batched decode at this concurrency.
  double pass_tps = 0;
  double mean_itl_ms = 0;
  double mean_ttft_ms = 0;
  long timed_tokens = 0;  // generated after every sequence had its first token
};

using Handle = std::shared_ptr<engine::RequestHandle>;

// Sleeps until `reached()`, or until one of `handles` has ended (a request that fails or stops
// early would never get there).
void WaitUntil(const std::function<bool()>& reached, const std::vector<Handle>& handles) {
  while (!reached()) {
    for (const Handle& h : handles) {
      if (h->done()) return;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

// Cancels and waits for every request still running when a measurement returns (an error path
// included), so no token callback outlives the counters it writes. Declare it after them.
class DrainOnExit {
 public:
  explicit DrainOnExit(std::vector<Handle>& handles) : handles_(handles) {}
  ~DrainOnExit() {
    for (const Handle& h : handles_) {
      h->Cancel();
      (void)h->Wait();  // the outcome was read already, or the measurement failed anyway
    }
  }

 private:
  std::vector<Handle>& handles_;
};

Result<DecodePoint> MeasureDecode(engine::BatchScheduler& sched, int n, int prompt_tokens,
                                  int gen_tokens, int n_vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::atomic<int> first{0};
  std::atomic<long> total{0};
  std::vector<Handle> handles;
  DrainOnExit drain(handles);
  sched.Pause();  // submit together so they start in the same step
  for (int i = 0; i < n; ++i) {
    engine::BatchRequest r;
    r.prompt = RandomTokens(rng, prompt_tokens, n_vocab);
    r.sampling.temperature = 0;
    r.sampling.max_tokens = gen_tokens;
    r.ignore_stop_tokens = true;
    r.on_token = [&, got = false](int32_t) mutable {
      if (!got) {
        got = true;
        first.fetch_add(1);
      }
      total.fetch_add(1);
      return true;
    };
    auto h = sched.Submit(std::move(r));
    if (!h.ok()) {
      sched.Resume();
      return h.status();
    }
    handles.push_back(*h);
  }
  sched.Resume();
  WaitUntil([&] { return first.load() >= n; }, handles);
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = ProcessCpuSeconds();
  const long tokens0 = total.load();
  double itl = 0, ttft = 0;
  for (auto& h : handles) {
    engine::BatchResult r = h->Wait();
    if (!r.status.ok()) return r.status;
    itl += r.timings.inter_token_ms_mean;
    ttft += r.timings.first_token_ms;
  }
  const auto t1 = std::chrono::steady_clock::now();
  const double cpu1 = ProcessCpuSeconds();
  DecodePoint p;
  p.timed_tokens = total.load() - tokens0;
  p.concurrency = n;
  p.decode_tps = static_cast<double>(total.load() - tokens0) * 1000.0 / Ms(t0, t1);
  p.decode_tokens_per_cpu_s =
      cpu1 > cpu0 ? static_cast<double>(total.load() - tokens0) / (cpu1 - cpu0) : 0;
  p.mean_itl_ms = itl / n;
  p.mean_ttft_ms = ttft / n;
  return p;
}

struct PrefixPoint {
  int system_tokens = 0;
  double cold_ttft_ms = 0;
  double shared_busy_ttft_ms = 0;  // while the cold request still holds the blocks
  double shared_idle_ttft_ms = 0;
  double shared_idle_queue_ms = 0, shared_idle_prefill_ms = 0;
  int cached_busy = 0, cached_idle = 0;
  int blocks_before = 0, blocks_with_b = 0;
};

Result<PrefixPoint> MeasurePrefix(engine::BatchScheduler& sched, int system_tokens, int n_vocab,
                                  uint32_t seed) {
  std::mt19937 rng(seed);
  const std::vector<int32_t> system = RandomTokens(rng, system_tokens, n_vocab);
  auto with_suffix = [&](uint32_t seed) {
    std::mt19937 r(seed);
    std::vector<int32_t> p = system;
    for (int32_t t : RandomTokens(r, 8, n_vocab)) p.push_back(t);
    return p;
  };
  PrefixPoint out;
  out.system_tokens = system_tokens;
  std::atomic<int> a_tokens{0};
  std::atomic<int> b_tokens{0};
  std::vector<Handle> live;
  DrainOnExit drain(live);
  // A: cold, then keeps generating (holding the system prompt's blocks) until cancelled.
  engine::BatchRequest a;
  a.prompt = with_suffix(1);
  a.sampling.max_tokens = 200;  // ended by Cancel once B and C are measured
  a.ignore_stop_tokens = true;
  a.on_token = [&](int32_t) {
    a_tokens.fetch_add(1);
    return true;
  };
  const auto ta = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(Handle ha, sched.Submit(std::move(a)));
  live.push_back(ha);
  WaitUntil([&] { return a_tokens.load() >= 1; }, live);
  out.cold_ttft_ms = Ms(ta, std::chrono::steady_clock::now());
  WaitUntil([&] { return a_tokens.load() >= 3; }, live);
  if (ha->done()) return InternalError("the first request ended before it held its blocks");
  out.blocks_before = sched.stats().kv_blocks_in_use;
  // B: same system prompt while A holds it.
  engine::BatchRequest b;
  b.prompt = with_suffix(2);
  b.sampling.max_tokens = 4;
  b.ignore_stop_tokens = true;
  b.on_token = [&](int32_t) {
    b_tokens.fetch_add(1);
    return true;
  };
  ASSIGN_OR_RETURN(Handle hb, sched.Submit(std::move(b)));
  live.push_back(hb);
  WaitUntil([&] { return b_tokens.load() >= 2; }, live);
  // Published after the step that made B's second token, with A and B both holding blocks.
  out.blocks_with_b = sched.stats().kv_blocks_in_use;
  engine::BatchResult rb = hb->Wait();
  if (!rb.status.ok()) return rb.status;
  out.shared_busy_ttft_ms = rb.timings.first_token_ms;
  out.cached_busy = rb.timings.cached_prompt_tokens;
  ha->Cancel();
  engine::BatchResult ra = ha->Wait();
  if (!ra.status.ok()) return ra.status;
  // C: same system prompt, engine idle.
  engine::BatchRequest c;
  c.prompt = with_suffix(3);
  c.sampling.max_tokens = 1;
  ASSIGN_OR_RETURN(Handle hc, sched.Submit(std::move(c)));
  live.push_back(hc);
  engine::BatchResult rc = hc->Wait();
  if (!rc.status.ok()) return rc.status;
  out.shared_idle_ttft_ms = rc.timings.first_token_ms;
  out.shared_idle_queue_ms = rc.timings.queue_ms;
  out.shared_idle_prefill_ms = rc.timings.prefill_ms;
  out.cached_idle = rc.timings.cached_prompt_tokens;
  return out;
}

// The command line, checked.
struct BatchOptions {
  std::string model;
  int threads = 2;
  int prompt_tokens = 32;
  int gen_tokens = 64;
  int prefix_tokens = 500;
  int max_batch = 0;
  int prefix_repeats = 1;
  std::string kernel;
  std::vector<int> levels;
  bool json = false;
};

// Errors are usage errors.
Result<BatchOptions> ParseBatchOptions(Args& args) {
  BatchOptions o;
  std::optional<std::string> model = args.Get("-m");
  if (!model) model = args.Get("--model");
  auto threads = args.GetInt("--threads", 2, 1, 256);
  auto prompt_tokens = args.GetInt("--prompt-tokens", 32, 1, 8192);
  auto gen_tokens = args.GetInt("--gen-tokens", 64, 2, 8192);
  auto prefix_tokens = args.GetInt("--prefix-tokens", 500, 0, 8192);
  auto max_batch = args.GetInt("--max-batch-size", 0, 0, 1024);
  auto prefix_repeats = args.GetInt("--prefix-repeats", 1, 1, 100);
  o.kernel = args.GetOr("--kernel", "auto");
  const std::string conc = args.GetOr("--concurrency", "1,2,4,8,16,32");
  o.json = args.Has("--json");
  RETURN_IF_ERROR(args.Finish());
  for (const auto* r :
       {&threads, &prompt_tokens, &gen_tokens, &prefix_tokens, &max_batch, &prefix_repeats}) {
    RETURN_IF_ERROR(r->status());
  }
  ASSIGN_OR_RETURN(o.levels, ParseList(conc));
  if (!model) return InvalidArgumentError("missing -m MODEL.gguf");
  if (!args.positional().empty()) return InvalidArgumentError("unexpected argument");
  o.model = *model;
  o.threads = static_cast<int>(*threads);
  o.prompt_tokens = static_cast<int>(*prompt_tokens);
  o.gen_tokens = static_cast<int>(*gen_tokens);
  o.prefix_tokens = static_cast<int>(*prefix_tokens);
  o.max_batch = static_cast<int>(*max_batch);
  o.prefix_repeats = static_cast<int>(*prefix_repeats);
  return o;
}

// The engine and its batching scheduler, sized for the largest level and the prefix test.
struct Bench {
  engine::EngineConfig config;
  engine::BatchSchedulerConfig scheduler_config;
  std::unique_ptr<engine::Engine> engine;
  std::unique_ptr<engine::BatchScheduler> scheduler;
};

Result<std::unique_ptr<Bench>> LoadBench(const BatchOptions& o) {
  auto b = std::make_unique<Bench>();
  const int max_n = *std::max_element(o.levels.begin(), o.levels.end());
  engine::EngineConfig& config = b->config;
  config.model_path = o.model;
  config.threads = o.threads;
  config.kernel = o.kernel;
  config.max_seq_len = std::max(o.prompt_tokens + o.gen_tokens, o.prefix_tokens + 8 + 200) + 16;
  // At least 2, so the prefix test's second request runs beside the first.
  config.max_batch_size = o.max_batch > 0 ? o.max_batch : std::max(max_n, 16);
  config.max_num_batched_tokens = std::max(512, config.max_batch_size);
  ASSIGN_OR_RETURN(b->engine, engine::Engine::Load(config));
  engine::BatchSchedulerConfig& bc = b->scheduler_config;
  bc = engine::BatchSchedulerConfig::FromEngine(config);
  // Room for every sequence of the largest level plus the prefix test.
  const int per_seq_blocks = (o.prompt_tokens + o.gen_tokens) / bc.kv_block_tokens + 2;
  const int prefix_blocks = (o.prefix_tokens + 208) / bc.kv_block_tokens + 8;
  const engine::ModelHParams& hp = b->engine->model().hparams();
  const uint64_t block_bytes = uint64_t(hp.n_head_kv) * hp.head_dim * 2 /* f16 */ *
                               uint64_t(bc.kv_block_tokens) * 2 * uint64_t(hp.n_layer);
  bc.kv_cache_bytes =
      block_bytes * uint64_t(std::max(per_seq_blocks * max_n, 2 * prefix_blocks) + 16);
  ASSIGN_OR_RETURN(b->scheduler, engine::BatchScheduler::Create(*b->engine, bc));
  return b;
}

// One sequence's n-token prompt in one pass: the kernels' ceiling for a batch of n, tokens/s.
Result<double> MeasurePass(engine::BatchScheduler& sched, int n, int n_vocab) {
  std::mt19937 rng(7000u + uint32_t(n));
  engine::BatchRequest r;
  r.prompt = RandomTokens(rng, n, n_vocab);
  r.sampling.max_tokens = 1;
  r.ignore_stop_tokens = true;
  ASSIGN_OR_RETURN(Handle h, sched.Submit(std::move(r)));
  engine::BatchResult pr = h->Wait();
  if (!pr.status.ok()) return pr.status;
  return pr.timings.prefill_ms > 0 ? n * 1000.0 / pr.timings.prefill_ms : 0;
}

// Each level's decode figures, with its one-pass ceiling.
Result<std::vector<DecodePoint>> MeasureLevels(engine::BatchScheduler& sched, const BatchOptions& o,
                                               int n_vocab) {
  std::vector<DecodePoint> points;
  for (int n : o.levels) {
    ASSIGN_OR_RETURN(DecodePoint p, MeasureDecode(sched, n, o.prompt_tokens, o.gen_tokens, n_vocab,
                                                  1000u + uint32_t(n)));
    // A model this fast finishes before the last sequence's first token: nothing left to time.
    if (p.timed_tokens < n) {
      return FailedPreconditionError(
          "at concurrency " + std::to_string(n) + " the model generated its " +
          std::to_string(o.gen_tokens) +
          " tokens per sequence before they could be timed (under one per sequence after the "
          "last first token): raise --gen-tokens");
    }
    ASSIGN_OR_RETURN(p.pass_tps, MeasurePass(sched, n, n_vocab));
    points.push_back(p);
    if (!o.json) std::fprintf(stderr, "  concurrency %d: %.2f tokens/s\n", n, p.decode_tps);
  }
  return points;
}

// Each point's baseline for its ratios: the latest one-sequence point measured before it (else
// the first one), so "1,16,1,16" pairs each batch with a baseline taken moments earlier on a busy
// machine. Wall-time and CPU-time baselines.
struct Baselines {
  std::vector<double> wall, cpu;
};

Baselines RatioBaselines(const std::vector<DecodePoint>& points) {
  Baselines b{std::vector<double>(points.size(), 0), std::vector<double>(points.size(), 0)};
  double first = 0, latest = 0, cpu_first = 0, cpu_latest = 0;
  for (const DecodePoint& p : points) {
    if (p.concurrency == 1 && first == 0) {
      first = p.decode_tps;
      cpu_first = p.decode_tokens_per_cpu_s;
    }
  }
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].concurrency == 1) {
      latest = points[i].decode_tps;
      cpu_latest = points[i].decode_tokens_per_cpu_s;
    }
    b.wall[i] = latest > 0 ? latest : first;
    b.cpu[i] = cpu_latest > 0 ? cpu_latest : cpu_first;
  }
  return b;
}

// The prefix-cache figures over the repeats: each timing's median, and the median of each
// repeat's ratio of cold to shared first-token time.
struct PrefixSummary {
  PrefixPoint point;
  double ratio_busy = 0, ratio_idle = 0;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Result<PrefixSummary> MeasurePrefixRepeats(engine::BatchScheduler& sched, const BatchOptions& o,
                                           int n_vocab) {
  // Each repeat uses its own system prompt (a repeat of the same one would start warm).
  std::vector<PrefixPoint> runs;
  std::vector<double> busy, idle;
  for (int i = 0; i < o.prefix_repeats; ++i) {
    ASSIGN_OR_RETURN(PrefixPoint p, MeasurePrefix(sched, o.prefix_tokens, n_vocab,
                                                  4242u + static_cast<uint32_t>(i)));
    runs.push_back(p);
    busy.push_back(p.cold_ttft_ms / p.shared_busy_ttft_ms);
    idle.push_back(p.cold_ttft_ms / p.shared_idle_ttft_ms);
  }
  auto median_of = [&](double PrefixPoint::*field) {
    std::vector<double> v;
    for (const PrefixPoint& r : runs) v.push_back(r.*field);
    return Median(v);
  };
  PrefixSummary s;
  s.point = runs.back();
  s.point.cold_ttft_ms = median_of(&PrefixPoint::cold_ttft_ms);
  s.point.shared_busy_ttft_ms = median_of(&PrefixPoint::shared_busy_ttft_ms);
  s.point.shared_idle_ttft_ms = median_of(&PrefixPoint::shared_idle_ttft_ms);
  s.point.shared_idle_queue_ms = median_of(&PrefixPoint::shared_idle_queue_ms);
  s.point.shared_idle_prefill_ms = median_of(&PrefixPoint::shared_idle_prefill_ms);
  s.ratio_busy = Median(busy);
  s.ratio_idle = Median(idle);
  return s;
}

void PrintBatchJson(const BatchOptions& o, const Bench& b, const std::vector<DecodePoint>& points,
                    const Baselines& bases, const std::optional<PrefixSummary>& prefix) {
  std::printf(
      "{\"model\": \"%s\", \"threads\": %d, \"kernel\": \"%s\", \"prompt_tokens\": %d, "
      "\"gen_tokens\": %d, \"max_batch_size\": %d, \"decode\": [",
      o.model.c_str(), o.threads, engine::KernelIsaName(engine::ActiveKernelIsa()), o.prompt_tokens,
      o.gen_tokens, b.config.max_batch_size);
  for (size_t i = 0; i < points.size(); ++i) {
    const DecodePoint& p = points[i];
    std::printf(
        "%s{\"concurrency\": %d, \"decode_tokens_per_s\": %.2f, \"ratio_to_1\": %.2f, "
        "\"mean_inter_token_ms\": %.2f, \"mean_first_token_ms\": %.1f, "
        "\"one_pass_tokens_per_s\": %.2f, \"decode_tokens_per_cpu_s\": %.2f, "
        "\"cpu_ratio_to_1\": %.2f}",
        i ? ", " : "", p.concurrency, p.decode_tps,
        bases.wall[i] > 0 ? p.decode_tps / bases.wall[i] : 0, p.mean_itl_ms, p.mean_ttft_ms,
        p.pass_tps, p.decode_tokens_per_cpu_s,
        bases.cpu[i] > 0 ? p.decode_tokens_per_cpu_s / bases.cpu[i] : 0);
  }
  std::printf("]");
  if (prefix) {
    const PrefixPoint& x = prefix->point;
    std::printf(
        ", \"prefix\": {\"system_tokens\": %d, \"cold_first_token_ms\": %.2f, "
        "\"shared_busy_first_token_ms\": %.2f, \"shared_idle_first_token_ms\": %.2f, "
        "\"ratio_busy\": %.1f, \"ratio_idle\": %.1f, \"cached_tokens_busy\": %d, "
        "\"cached_tokens_idle\": %d, \"kv_blocks_a\": %d, \"kv_blocks_a_and_b\": %d, "
        "\"repeats\": %d}",
        x.system_tokens, x.cold_ttft_ms, x.shared_busy_ttft_ms, x.shared_idle_ttft_ms,
        prefix->ratio_busy, prefix->ratio_idle, x.cached_busy, x.cached_idle, x.blocks_before,
        x.blocks_with_b, o.prefix_repeats);
  }
  std::printf("}\n");
}

void PrintBatchTable(const BatchOptions& o, const Bench& b, const std::vector<DecodePoint>& points,
                     const Baselines& bases, const std::optional<PrefixSummary>& prefix) {
  std::printf(
      "model %s, %d threads, kernel %s, prompts %d tokens, %d generated each, "
      "max_batch_size %d\n",
      o.model.c_str(), o.threads, engine::KernelIsaName(engine::ActiveKernelIsa()), o.prompt_tokens,
      o.gen_tokens, b.config.max_batch_size);
  std::printf("%12s %13s %7s %12s %7s %12s %13s %13s\n", "concurrency", "decode tok/s", "vs 1",
              "tok/CPU-s", "vs 1", "mean ITL ms", "mean TTFT ms", "pass tok/s");
  for (size_t i = 0; i < points.size(); ++i) {
    const DecodePoint& p = points[i];
    std::printf("%12d %13.2f %6.2fx %12.2f %6.2fx %12.2f %13.1f %13.2f\n", p.concurrency,
                p.decode_tps, bases.wall[i] > 0 ? p.decode_tps / bases.wall[i] : 0,
                p.decode_tokens_per_cpu_s,
                bases.cpu[i] > 0 ? p.decode_tokens_per_cpu_s / bases.cpu[i] : 0, p.mean_itl_ms,
                p.mean_ttft_ms, p.pass_tps);
  }
  std::printf(
      "(tok/CPU-s: the same tokens over this process's CPU time, steadier than wall time on a "
      "shared machine)\n");
  std::printf(
      "(N-token pass: one sequence's N-token prompt in one forward pass, the same "
      "matrix products as N decode tokens: the kernels' ceiling for batch N)\n");
  if (!prefix) return;
  const PrefixPoint& x = prefix->point;
  const int block_tokens = b.scheduler_config.kv_block_tokens;
  std::printf("prefix cache, %d-token system prompt + 8 tokens%s:\n", x.system_tokens,
              o.prefix_repeats > 1 ? " (medians of the repeats; ratios: median of each "
                                     "repeat's ratio)"
                                   : "");
  std::printf("  cold first token        %9.2f ms\n", x.cold_ttft_ms);
  std::printf(
      "  shared, blocks held by a running sequence %9.2f ms (%.1fx lower, %d tokens "
      "reused)\n",
      x.shared_busy_ttft_ms, prefix->ratio_busy, x.cached_busy);
  std::printf(
      "  shared, engine idle     %9.2f ms (%.1fx lower, %d tokens reused; queue %.2f ms, "
      "prefill %.2f ms)\n",
      x.shared_idle_ttft_ms, prefix->ratio_idle, x.cached_idle, x.shared_idle_queue_ms,
      x.shared_idle_prefill_ms);
  std::printf(
      "  KV blocks in use: %d with the first sequence, %d with both (the prompt is %d "
      "blocks)\n",
      x.blocks_before, x.blocks_with_b, (x.system_tokens + 8 + block_tokens - 1) / block_tokens);
}

}  // namespace

// Called by `hotline engine bench` when --concurrency is given.
int RunBatchBench(std::span<const std::string> argv) {
  auto args = Args::Parse(
      argv, {"-m", "--model", "--threads", "--prompt-tokens", "--gen-tokens", "--kernel",
             "--concurrency", "--prefix-tokens", "--max-batch-size", "--prefix-repeats"});
  if (!args.ok()) return UsageError(args.status().message(), kBatchUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kBatchUsage;
    return 0;
  }
  auto options = ParseBatchOptions(*args);
  if (!options.ok()) return UsageError(options.status().message(), kBatchUsage);
  const BatchOptions& o = *options;
  auto bench = LoadBench(o);
  if (!bench.ok()) return Fail(bench.status());
  engine::BatchScheduler& sched = *(*bench)->scheduler;
  const int n_vocab = (*bench)->engine->model().hparams().n_vocab;

  // Warm-up: touch every weight page once (the file is mmap'ed).
  if (auto w = MeasureDecode(sched, 1, 4, 2, n_vocab, 99); !w.ok()) return Fail(w.status());
  auto points = MeasureLevels(sched, o, n_vocab);
  if (!points.ok()) return Fail(points.status());
  const Baselines bases = RatioBaselines(*points);
  std::optional<PrefixSummary> prefix;
  if (o.prefix_tokens > 0) {
    auto p = MeasurePrefixRepeats(sched, o, n_vocab);
    if (!p.ok()) return Fail(p.status());
    prefix = *p;
  }
  if (o.json) {
    PrintBatchJson(o, **bench, *points, bases, prefix);
  } else {
    PrintBatchTable(o, **bench, *points, bases, prefix);
  }
  return 0;
}

}  // namespace hotline::cli
