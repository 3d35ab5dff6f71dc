// EngineLanguageModel: the embedded backend ("engine"): an engine::Engine in this process, behind
// the LanguageModel interface.
//
// Scheduling: the Engine is driven by an engine::BatchScheduler (one owner thread, continuous
// batching): every Generate and Prefetch becomes a request of the scheduler, so concurrent calls
// share each forward pass over the weights (decode tokens of running answers and chunks of new
// prompts in one pass, up to engine.max_batch_size sequences). Requests are ordered by
// (priority, deadline, arrival): priority first, then GenerateRequest::deadline, handed to the
// scheduler as a deadline hint; prefetch jobs (kPrefetchPriority) come after every caller and are
// preempted when a caller needs their slot or KV blocks. Generate renders and tokenizes the
// messages on the calling thread, submits, and blocks until done. Text deltas are produced on
// the scheduler thread and handed to `on_text` on the calling thread, so a slow consumer never
// stalls the engine (it only lets deltas pile up, at most max_tokens of them).
//
// Prefix reuse: the scheduler's paged KV cache keeps every full block of computed tokens
// (engine.kv_block_tokens each) keyed by its prefix, in an LRU bounded by engine.kv_cache_bytes.
// A request reuses the longest cached run of whole blocks of its prompt, even while another
// request still holds those blocks (GenerateStats::cached_prompt_tokens says how many tokens). A
// conversation's next turn therefore pays only for the new turn (plus at most one partial
// block), and a Prefetch() of the messages so far makes the final request pay only for its last
// few tokens. Greedy output with reuse is identical to a cold run (the KV rows of a position do
// not depend on what followed it).
//
// Cancellation: a raised CancelToken removes a queued request at once (noticed within kPollMs)
// or ends a running one at the scheduler's next step, which frees its KV blocks; both finish
// with FinishReason::kCancelled, not an error.
//
// Threads: Generate/Prefetch/CountTokens/name from any number of threads. REQUIRES: no call in
// flight when the object is destroyed; the destructor fails requests still queued (Unavailable)
// and joins the scheduler.
// Blocking: Create loads the model (seconds for large files); Generate blocks until its answer is
// complete; Prefetch only queues.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/metrics.h"
#include "engine/batch_scheduler.h"
#include "engine/chat_template.h"
#include "engine/context_fit.h"
#include "engine/engine.h"
#include "engine/tokenizer.h"
#include "llm/language_model.h"
#include "llm/llm_config.h"

namespace hotline::llm {

class EngineLanguageModel final : public LanguageModel {
 public:
  // Priority of Prefetch jobs: behind every request of a waiting caller.
  static constexpr int kPrefetchPriority = 1000;
  // How often a blocked Generate looks at its CancelToken.
  static constexpr int kPollMs = 5;

  // `metrics`: where the hotline_llm_* series and its batch scheduler's hotline_engine_* series
  // go (null: the process's global registry); it must outlive the model.
  static Result<std::unique_ptr<EngineLanguageModel>> Create(const LlmEngineConfig& config,
                                                             MetricsRegistry* metrics = nullptr);
  ~EngineLanguageModel() override;

  Result<GenerateStats> Generate(const GenerateRequest& request,
                                 const TextCallback& on_text) override;
  Status Prefetch(const std::vector<Message>& messages, int max_tokens) override;
  int CountTokens(std::string_view text) const override;
  std::string name() const override;

  // The prompt tokens of `messages` as Generate feeds them (with the assistant's opening when
  // `add_generation_prompt`). For tests and prompt budgeting.
  Result<std::vector<int32_t>> EncodeMessages(const std::vector<Message>& messages,
                                              bool add_generation_prompt) const;
  // The prompt tokens Generate feeds for `messages` under the truncation policy of
  // engine/context_fit.h (oldest turns dropped whole; OutOfRange "context_length_exceeded" when
  // the system prompt and the last user turn leave too little room).
  Result<engine::ContextFit> FitMessages(const std::vector<Message>& messages,
                                         bool add_generation_prompt,
                                         const engine::ContextLimits& limits) const;
  const engine::Tokenizer& tokenizer() const { return *tokenizer_; }

  // Holds queued work without starting it (the running job finishes) until Resume(): for
  // maintenance and for tests that need a known queue.
  void Pause();
  void Resume();
  // Requests and prefetch jobs waiting (not the running one).
  int queue_depth() const;

  // Counters since start (tests, diagnostics).
  struct Counters {
    uint64_t requests = 0;          // Generate calls that reached the queue
    uint64_t prefetches_run = 0;    // prefetch jobs that fed tokens
    uint64_t cached_tokens = 0;     // prompt tokens served from the prefix cache
    uint64_t prefilled_tokens = 0;  // prompt tokens computed
  };
  Counters counters() const;
  // The batching scheduler's gauges (queue, batch, KV blocks, prefix hits) for /metrics.
  engine::SchedulerStats scheduler_stats() const { return batch_->stats(); }

  struct Job;

 private:
  EngineLanguageModel() = default;
  // Registers `job` as queued (superseding older prefetches it extends) and submits it.
  Status Enqueue(const std::shared_ptr<Job>& job, engine::BatchRequest request);
  void Deliver(Job& job, std::string text);
  // Generate's steps: the request's prompt tokens (a raw prompt, never cut; or the messages
  // fitted to the context); the scheduler's request for `job` (sampling, priority, deadline, the
  // token callback) with the schedule's `hints` as sent; and the wait that streams the job's text
  // to `on_text`, passes on new hints and cancels.
  Result<std::vector<int32_t>> PromptTokens(const GenerateRequest& request);
  engine::BatchRequest SchedulerRequest(const GenerateRequest& request, Job* job,
                                        const GenerationSchedule::Value& hints);
  Result<GenerateStats> AwaitText(const std::shared_ptr<Job>& job, const GenerateRequest& request,
                                  const TextCallback& on_text, GenerationSchedule::Value hints);
  // Scheduler thread: the request ended.
  void OnDone(const std::shared_ptr<Job>& job, const engine::BatchResult& r);

  struct Metrics;

  LlmEngineConfig config_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<engine::Engine> engine_;
  std::shared_ptr<const engine::Tokenizer> tokenizer_;
  std::unique_ptr<engine::ChatTemplate> template_;
  // Declared after engine_: destroyed (and joined) before the Engine it drives.
  std::unique_ptr<engine::BatchScheduler> batch_;

  // Shared state, under mu_.
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Job>> queued_;  // submitted, not yet admitted
  Counters counters_;
};

}  // namespace hotline::llm
