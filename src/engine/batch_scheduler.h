// BatchScheduler: continuous batching of many requests over one Engine.
//
//   auto sched = BatchScheduler::Create(*engine);
//   BatchRequest r;  r.prompt = ids;  r.sampling = greedy;  r.deadline_hint_ms = 120;
//   r.on_token = [&](int32_t t) { ...stream it...; return true; };
//   auto handle = *sched->Submit(std::move(r));
//   BatchResult result = handle->Wait();          // or handle->Cancel() from any thread
//
// One owner thread runs steps. Each step packs, into ONE forward pass (every weight matrix
// streamed once for all of them):
//   - the next decode token of every running sequence that has its prompt computed, and
//   - chunks of pending prompts (prefill), with the tokens left in max_num_batched_tokens,
// for at most max_batch_size sequences. Requests are ordered by (priority, deadline, arrival):
// lower `priority` first; then the earliest deadline, where deadline = submit time +
// deadline_hint_ms ("my caller has N ms of audio queued", so a call waiting for its first word,
// hint 0, goes first); requests without a hint after those with one. The order decides which
// waiting requests are admitted, which prompts get the prefill budget first, and who gets KV
// blocks first.
//
// KV memory is a PagedKvCache (blocks of kv_block_tokens from a kv_cache_bytes pool). A new
// request first takes the longest cached prefix of its prompt (shared blocks, no compute), then
// copies the rows of the positions after it that a running sequence has computed for the same
// tokens (the system prompt's tail in that sequence's partial block); one
// whose prompt shares whole blocks with a prompt still being computed waits for them, so
// requests arriving together with the same system prompt compute it once. When
// blocks run out, the lowest-ordered running sequence is preempted: its blocks are released (its
// full blocks stay in the prefix cache) and it goes back to the waiting list with its prompt and
// the tokens generated so far, to be recomputed when there is room; its output stream continues
// unchanged. A waiting request of a better `priority` also preempts the lowest running one when
// all max_batch_size slots are taken. A request that cannot fit the whole pool on its own fails
// with ResourceExhausted; other sequences are never touched.
//
// A request that arrives while a pass is in flight need not wait for the next: if its prompt has
// at most join_max_tokens left to compute after the prefix cache, it joins the pass in flight
// between two layers of its first half (caught up alone through the layers done, then carried
// on with the rest), so a caller's turn on a cached system prompt gets its first token about a
// pass sooner. Waiting requests of a better order, and the usual admission rules, come first.
//
// Just in time: a request whose deadline is more than defer_horizon_ms away (its caller still
// has that much audio to hear) sits out the passes in which a request without that slack, or
// without a deadline, has work; when only such requests have work they all run, so nothing
// idles. RequestHandle::Reschedule changes a request's priority and deadline while it runs (the
// caller's first sentence started playing: the rest is needed only before it ends).
//
// Speculative decoding (speculative_tokens > 0): in a pass with at most speculative_max_batch
// decoding sequences, each of them (BatchRequest::speculate) may feed, behind its next token, up
// to speculative_tokens guessed ones (engine/speculative.h: prompt lookup in its own tokens, or
// the recent answers of this scheduler), every one with its logits. Sampling then goes row by row
// and keeps a guess only when it equals the token sampled before it, so one pass can hand out
// several tokens while the output stays token for token what one token per pass gives (greedy,
// or seeded sampling: the sampler sees the same rows in the same order). Rejected guesses cost
// compute, never blocks taken from others (drafts use free blocks only) or prefix-cache entries
// (only accepted positions are committed). A sequence whose guesses are accepted less than
// speculative_min_acceptance of the time pauses them for 32 tokens; and with
// speculative_adaptive the scheduler drafts only in passes of a size where its own timings show
// tokens coming faster with drafts than without (a model small enough to be compute-bound, or a
// large batch, gains nothing from them).
//
// Cancellation (RequestHandle::Cancel, any thread) ends the request at the next step, frees its
// blocks there and finishes it with FinishReason::kCancelled.
//
// max_seq_len: a prompt longer than the engine's max_seq_len is refused by Submit
// (InvalidArgument, with the lengths); generation stops with kContextFull when the sequence
// reaches it.
//
// Metrics (in the registry given to Create; the process's, on /metrics, by default):
// hotline_engine_queue_depth, _running_sequences,
// _kv_blocks_{capacity,in_use,cached}, _prefix_hit_tokens_total, _preemptions_total,
// _generated_tokens_total (rate = tokens/s), _steps_total, _draft_tokens_total,
// _draft_accepted_tokens_total, and histograms _batch_sequences,
// _batch_tokens, _first_token_seconds, _inter_token_seconds.
//
// Threads: Submit, stats, Pause/Resume and handles from any thread. Callbacks (on_token,
// on_done) run on the scheduler thread between steps: they must be quick and must not call back
// into the scheduler except RequestHandle::Cancel. The Engine must not be used by anyone else
// while a scheduler exists (they share its compute threads). The destructor fails waiting and
// running requests with Unavailable and joins the thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/status.h"
#include "engine/engine.h"
#include "engine/paged_kv_cache.h"
#include "engine/sampler.h"
#include "engine/speculative.h"

namespace hotline {
class MetricsRegistry;
}

namespace hotline::engine {

struct BatchSchedulerConfig {
  // Sequences in one forward pass (decoding and prefilling together).
  int max_batch_size = 16;
  // Tokens in one forward pass: one per decoding sequence plus prompt chunks. Larger speeds up
  // prefill; smaller bounds how long one step delays every running stream (inter-token latency).
  int max_num_batched_tokens = 512;
  // A request that arrives during a pass, with at most this many prompt tokens left after its
  // cached prefix, joins the pass in flight between layers (ForwardPass::Join) if it comes in the
  // pass's first half and a slot, the token budget and KV blocks allow; 0 = off.
  int join_max_tokens = 64;
  // Just in time: a request whose deadline is more than this many ms away sits out the passes in
  // which any request without that slack (or without a deadline) has work; 0 = never.
  int defer_horizon_ms = 1000;
  // Tokens per KV block; the prefix cache shares whole blocks.
  int kv_block_tokens = 16;
  // KV pool size in bytes; 0 = enough for max_batch_size sequences of max_seq_len.
  uint64_t kv_cache_bytes = 0;
  // Requests waiting for admission; Submit refuses more with ResourceExhausted.
  int max_queue = 1024;
  // Speculative decoding (EngineConfig's speculative_* fields): tokens drafted per decoding
  // sequence and pass (0 = off), the most decoding sequences a pass may have for drafts, the
  // acceptance below which a sequence pauses drafting, whether drafts are used only where timed
  // passes show they pay (SpeculationGovernor), and the answer n-gram cache's size.
  int speculative_tokens = 0;
  int speculative_max_batch = 4;
  double speculative_min_acceptance = 0.25;
  bool speculative_adaptive = true;
  int speculative_cache_tokens = 65536;

  // The engine section's batching fields.
  static BatchSchedulerConfig FromEngine(const EngineConfig& c);
  Status Validate() const;
};

struct RequestTimings {
  int prompt_tokens = 0;
  int cached_prompt_tokens = 0;  // served from the prefix cache at (first) admission
  int generated_tokens = 0;
  int preemptions = 0;
  int drafted_tokens = 0;     // speculative drafts fed to the model
  int accepted_tokens = 0;    // of those, the ones the model agreed with (tokens without a pass)
  double queue_ms = 0;        // submit -> first admitted
  double prefill_ms = 0;      // first admitted -> prompt computed
  double first_token_ms = 0;  // submit -> first token handed to on_token
  double inter_token_ms_mean = 0;
  double inter_token_ms_max = 0;
  double total_ms = 0;
};

struct BatchResult {
  Status status;  // not OK: the request failed (its tokens so far are kept)
  FinishReason finish = FinishReason::kLength;
  std::vector<int32_t> tokens;  // generated, excluding a final end-of-generation token
  RequestTimings timings;
};

struct BatchRequest {
  std::vector<int32_t> prompt;  // at least one token
  SamplingConfig sampling;
  // Lower first (background work uses large values).
  int priority = 0;
  // Milliseconds of audio the caller still has queued; < 0 = no hint (after all hinted requests).
  int64_t deadline_hint_ms = -1;
  // Compute the prompt into the prefix cache and finish without generating (prefetch).
  bool prefill_only = false;
  // Keep generating past end-of-generation tokens (benchmarks of a fixed length).
  bool ignore_stop_tokens = false;
  // Draft tokens for this request when the scheduler speculates (false: one token per pass).
  bool speculate = true;
  // Each generated token (not the end-of-generation one); return false to stop. Scheduler thread.
  TokenCallback on_token;
  // When the request is first admitted (its prompt starts computing). Scheduler thread.
  std::function<void()> on_admit;
  // Once, when the request ends (before Wait returns). Scheduler thread, or the destructor's.
  std::function<void(const BatchResult&)> on_done;
};

class BatchScheduler;
namespace batch_internal {
struct EngineMetrics;
}

class RequestHandle {
 public:
  // Ends the request at the scheduler's next step. Any thread; idempotent.
  void Cancel();
  // New scheduling hints, taken at the scheduler's next step: `priority` as BatchRequest's, and
  // the deadline as a point in time (time_point::max() = none). A caller whose first words are
  // playing gives a later deadline; one whose audio ran out, an earlier one. Any thread.
  void Reschedule(int priority, std::chrono::steady_clock::time_point deadline);
  bool done() const;
  // Blocks until the request ends.
  BatchResult Wait();
  // Waits up to `timeout`; true when done.
  bool WaitFor(std::chrono::milliseconds timeout);

 private:
  friend class BatchScheduler;
  struct Wake;
  std::shared_ptr<Wake> wake_;
  std::atomic<bool> cancel_{false};
  std::atomic<bool> rescheduled_{false};  // new_priority_/new_deadline_ (under mu_) not yet taken
  int new_priority_ = 0;
  std::chrono::steady_clock::time_point new_deadline_{};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  BatchResult result_;
};

struct SchedulerStats {
  int waiting = 0;  // submitted, not running (including preempted)
  int running = 0;
  int kv_blocks_total = 0;
  int kv_blocks_in_use = 0;  // referenced by a sequence
  int kv_blocks_cached = 0;  // in the prefix cache (in use or not)
  uint64_t prefix_hit_tokens = 0;
  uint64_t steps = 0;
  uint64_t batched_tokens = 0;  // over all steps
  uint64_t preemptions = 0;
  uint64_t joined = 0;  // requests that joined a pass in flight
  // Times a request with a far deadline sat out a pass for requests without that slack.
  uint64_t deferred = 0;
  // Prompt tokens copied from a running sequence's partial block (beyond the full-block hits).
  uint64_t copied_prefix_tokens = 0;
  uint64_t drafted_tokens = 0;   // speculative drafts fed to the model
  uint64_t accepted_tokens = 0;  // drafts the model agreed with
  int last_batch_sequences = 0;
  int max_batch_sequences = 0;  // most sequences in one pass so far
};

class BatchScheduler {
 public:
  // Borrows `engine` (must outlive the scheduler) and starts the scheduler thread. Its series
  // go to `metrics` (must outlive the scheduler; null: MetricsRegistry::Global()).
  static Result<std::unique_ptr<BatchScheduler>> Create(Engine& engine,
                                                        const BatchSchedulerConfig& config,
                                                        MetricsRegistry* metrics = nullptr);
  static Result<std::unique_ptr<BatchScheduler>> Create(Engine& engine) {
    return Create(engine, BatchSchedulerConfig::FromEngine(engine.config()));
  }
  ~BatchScheduler();
  BatchScheduler(const BatchScheduler&) = delete;
  BatchScheduler& operator=(const BatchScheduler&) = delete;

  // Errors: InvalidArgument (empty prompt, token outside the vocabulary, prompt longer than
  // max_seq_len, bad sampling), ResourceExhausted (queue full, or the prompt alone needs more KV
  // blocks than the pool has), Unavailable (shutting down).
  Result<std::shared_ptr<RequestHandle>> Submit(BatchRequest request);

  // Admits nothing new until Resume (running sequences continue).
  void Pause();
  void Resume();

  SchedulerStats stats() const;
  const BatchSchedulerConfig& config() const { return config_; }
  int max_seq_len() const { return max_seq_len_; }
  // Called after every step with the number of sequences and tokens in it (metrics). Set before
  // the first Submit.
  void set_step_observer(std::function<void(int sequences, int tokens)> f) {
    step_observer_ = std::move(f);
  }
  // Called on the scheduler thread between two layers of a pass's first half, where arrivals
  // may join it (tests: Submit from here arrives mid-pass). Set before the first Submit.
  void set_layer_observer(std::function<void(int layers_done)> f) {
    layer_observer_ = std::move(f);
  }

 private:
  struct Seq;
  using Clock = std::chrono::steady_clock;
  BatchScheduler(Engine& engine, const BatchSchedulerConfig& config);
  void Loop();
  // One scheduling step (batch_scheduler_step.cc), in this order:
  void Step(bool paused);
  // cancellations and new priorities/deadlines from the handles, both queues sorted;
  void TakeHints();
  // waiting requests admitted in order while slots and blocks allow (a better-ordered one takes
  // the slot of the lowest running one);
  void AdmitWaiting();
  // this step's positions packed into batch_ (decode tokens first, then prompt chunks; far
  // deadlines sit out while others have work); returns the token budget left;
  int Pack();
  // nothing packed because everyone is stuck for blocks: the lowest is preempted, or one that
  // cannot fit the pool alone fails;
  void Unstick();
  // otherwise the forward pass over batch_ (joiners welcome within `budget_left`), its positions
  // committed to the KV cache,
  void Forward(int budget_left);
  // and each logits row's next token sampled and handed out (stop, length and context checks);
  // a speculating sequence's drafted tokens are accepted while they equal the sampled ones.
  void SampleNextTokens();
  // One sampled token handed out to `s`: end-of-generation, timings, on_token, length and
  // context checks.
  void Emit(Seq& s, int32_t token);
  // Guesses up to `max_tokens` next tokens for a decoding `s` into s.draft; returns how many.
  int Draft(Seq& s, int max_tokens);
  // `s` asked for guesses and is not pausing them for low acceptance.
  static bool MayDraft(const Seq& s);
  void Admit(Seq& s);
  // True when a running sequence is still computing whole blocks of `w`'s prompt that `w` could
  // share once they are cached.
  bool WaitsForSharedPrefix(const Seq& w) const;
  // After the cached full blocks: copies the rows of the prompt's next positions from a running
  // sequence whose computed tokens match them (PagedKvCache::CopyPositions), up to `limit`.
  void CopyFromPartialBlock(Seq& s, int limit);
  void Preempt(Seq& s);
  void Finish(Seq& s, FinishReason reason, Status status = Status::Ok());
  // Grows `s` by up to `want` positions, preempting lower-ordered sequences for blocks; returns
  // the positions granted (0: none this step).
  int Reserve(Seq& s, int want);
  // Runs the packed batch_ through the forward pass, letting requests that arrive meanwhile join.
  Status RunPass(int budget_left);
  // Between two layers: admits arrivals that may join the pass in flight (together at most
  // join_max_tokens and the pass's token budget) and runs them into it with one catch-up.
  void JoinArrivals(int* budget_left);
  void Publish();
  void Deliver();

  Engine& engine_;
  BatchSchedulerConfig config_;
  int max_seq_len_ = 0;
  std::unique_ptr<PagedKvCache> kv_;
  ForwardPass forward_;
  std::function<void(int, int)> step_observer_;
  std::function<void(int)> layer_observer_;

  // Scheduler-thread state.
  std::vector<std::unique_ptr<Seq>> running_;  // admitted, in order after each sort
  std::vector<std::unique_ptr<Seq>> waiting_;  // not admitted or preempted
  std::vector<BatchToken> batch_;
  std::vector<BatchToken> join_batch_;  // JoinArrivals: the joiners' tokens
  std::vector<Seq*> joiners_;
  std::vector<Seq*> batch_seqs_;  // per batch entry
  std::vector<Seq*> logit_seqs_;  // per logits row
  std::vector<float> logits_;
  std::vector<int32_t> sampled_;  // per logits row
  struct Done {
    std::shared_ptr<RequestHandle> handle;
    std::function<void(const BatchResult&)> on_done;
    BatchResult result;
  };
  std::vector<Done> done_;  // finished this step, announced by Deliver()
  int next_seq_id_ = 0;
  uint64_t steps_ = 0, batched_tokens_ = 0, preemptions_ = 0, joined_ = 0, deferred_ = 0;
  uint64_t copied_prefix_tokens_ = 0;
  uint64_t drafted_tokens_ = 0, accepted_tokens_ = 0;
  DraftConfig draft_config_;
  SpeculationGovernor governor_;
  // This step's pass: decoding sequences packed, whether it has prompt chunks or drafts, and
  // the tokens it handed out (for the governor's timing of decode-only passes).
  int pass_decoders_ = 0;
  bool pass_prefill_ = false;
  bool pass_drafted_ = false;
  int pass_tokens_ = 0;
  std::unique_ptr<AnswerNgramCache> answers_;  // recent answers to draft from; null when off
  std::vector<int32_t> other_draft_;           // Draft's second candidate
  int last_batch_sequences_ = 0;
  int max_batch_sequences_ = 0;
  std::unique_ptr<batch_internal::EngineMetrics> metrics_;
  SchedulerStats published_;  // last values added to metrics_

  // Shared with Submit and handles.
  std::shared_ptr<RequestHandle::Wake> wake_;
  std::vector<std::unique_ptr<Seq>> incoming_;  // under wake_->mu
  std::atomic<bool> has_incoming_{false};       // incoming_ not empty (read between layers)
  uint64_t next_arrival_ = 0;                   // under wake_->mu
  bool stopping_ = false;                       // under wake_->mu
  bool paused_ = false;                         // under wake_->mu
  SchedulerStats stats_;                        // under wake_->mu
  std::thread thread_;
};

}  // namespace hotline::engine
