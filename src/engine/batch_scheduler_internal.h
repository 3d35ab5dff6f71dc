// What batch_scheduler.cc (submission, admission, the forward pass and its joiners) and
// batch_scheduler_step.cc (one scheduling step) share: a request's state on the scheduler thread
// and the engine's process-wide metrics. Internal to hotline_engine.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "common/metrics.h"
#include "engine/batch_scheduler.h"

namespace hotline::engine {

struct BatchScheduler::Seq {
  explicit Seq(BatchRequest r) : req(std::move(r)), sampler(req.sampling) {}

  std::shared_ptr<RequestHandle> handle;
  BatchRequest req;
  Sampler sampler;
  // Prompt followed by every generated token handed out; positions [0, n_computed) are in the
  // KV cache. The last generated token is computed by the next step (it gives the next logits).
  std::vector<int32_t> tokens;
  // Chained prefix-cache hashes of the full blocks of `tokens` (PagedKvCache::BlockHashes),
  // computed at Submit on the caller's thread and extended when generated tokens fill blocks,
  // so admission never hashes a prompt twice.
  std::vector<uint64_t> hashes;
  int n_computed = 0;
  int id = -1;  // KV cache sequence of the current admission
  int priority = 0;
  Clock::time_point deadline = Clock::time_point::max();
  uint64_t arrival = 0;
  Clock::time_point submitted, admitted_at, last_token;
  bool ever_admitted = false;
  bool prompt_done = false;
  bool finished = false;
  bool preempted = false;  // this step: move back to waiting_
  int chunk = 0;           // positions packed this step
  // Speculative decoding: the tokens guessed behind tokens.back() for this step (packed after
  // it, each with logits; not in `tokens` until the model agrees), the acceptance over the
  // recent drafted tokens, and no drafts until result.tokens reaches pause_until.
  std::vector<int32_t> draft;
  int window_drafted = 0;
  int window_accepted = 0;
  int pause_until = 0;
  double itl_sum_ms = 0;
  int itl_n = 0;
  BatchResult result;
};

namespace batch_internal {

inline double Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

template <class S>
bool Before(const S& a, const S& b) {
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.deadline != b.deadline) return a.deadline < b.deadline;
  return a.arrival < b.arrival;
}

// The batching scheduler's series, in the registry it was given. Schedulers sharing a registry add
// to its counters and histograms; its gauges show the last one to publish.
struct EngineMetrics {
  Gauge& waiting;
  Gauge& running;
  Gauge& kv_blocks_total;
  Gauge& kv_blocks_in_use;
  Gauge& kv_blocks_cached;
  Counter& prefix_hit_tokens;
  Counter& preemptions;
  Counter& joined;
  Counter& copied_prefix_tokens;
  Counter& drafted_tokens;
  Counter& accepted_tokens;
  Counter& generated_tokens;
  Counter& steps;
  Histogram& batch_sequences;
  Histogram& batch_tokens;
  Histogram& first_token_s;
  Histogram& inter_token_s;
  explicit EngineMetrics(MetricsRegistry& r)
      : waiting(r.GetGauge("hotline_engine_queue_depth", "Requests waiting for a batch slot")),
        running(r.GetGauge("hotline_engine_running_sequences", "Sequences in the running batch")),
        kv_blocks_total(
            r.GetGauge("hotline_engine_kv_blocks_capacity", "KV cache blocks in the pool")),
        kv_blocks_in_use(
            r.GetGauge("hotline_engine_kv_blocks_in_use", "KV cache blocks held by sequences")),
        kv_blocks_cached(
            r.GetGauge("hotline_engine_kv_blocks_cached", "KV cache blocks in the prefix cache")),
        prefix_hit_tokens(r.GetCounter("hotline_engine_prefix_hit_tokens_total",
                                       "Prompt tokens served from the prefix cache")),
        preemptions(r.GetCounter("hotline_engine_preemptions_total",
                                 "Sequences preempted for KV blocks or a batch slot")),
        joined(r.GetCounter("hotline_engine_joined_requests_total",
                            "Requests that joined a forward pass already in flight")),
        copied_prefix_tokens(
            r.GetCounter("hotline_engine_prefix_copied_tokens_total",
                         "Prompt tokens copied from another sequence's partial KV block")),
        drafted_tokens(r.GetCounter("hotline_engine_draft_tokens_total",
                                    "Speculative draft tokens fed to the model")),
        accepted_tokens(r.GetCounter("hotline_engine_draft_accepted_tokens_total",
                                     "Speculative draft tokens the model agreed with")),
        generated_tokens(r.GetCounter("hotline_engine_generated_tokens_total", "Tokens generated")),
        steps(r.GetCounter("hotline_engine_steps_total", "Batched forward passes")),
        batch_sequences(r.GetHistogram("hotline_engine_batch_sequences",
                                       "Sequences per forward pass", PowersOfTwoBuckets(1024))),
        batch_tokens(r.GetHistogram("hotline_engine_batch_tokens", "Tokens per forward pass",
                                    PowersOfTwoBuckets(65536))),
        first_token_s(r.GetHistogram("hotline_engine_first_token_seconds", "Submit to first token",
                                     LatencyBucketsSeconds())),
        inter_token_s(r.GetHistogram("hotline_engine_inter_token_seconds",
                                     "Time between two tokens of a request",
                                     LatencyBucketsSeconds())) {}
};

}  // namespace batch_internal

}  // namespace hotline::engine
