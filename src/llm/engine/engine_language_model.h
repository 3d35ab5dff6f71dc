// EngineLanguageModel: the embedded backend ("engine"): an engine::Engine in this process, behind
// the LanguageModel interface.
//
// Scheduling: the Engine is single-threaded, so one scheduler thread owns it (and its tokenizer
// state, sequences and prefix cache) and serves a queue ordered by (priority, deadline, arrival);
// prefetch jobs are background work behind every caller. Generate renders and tokenizes the
// messages on the calling thread, queues the request and blocks until it is done. Text deltas are
// produced on the scheduler thread and handed to `on_text` on the calling thread, so a slow
// consumer never stalls the engine (it only lets deltas pile up, at most max_tokens of them).
//
// Prefix reuse: up to `prefix_cache_sequences` engine sequences are kept with the tokens they
// hold. A request takes the sequence sharing the longest common prefix with its prompt, truncates
// it to that prefix and feeds only the rest (GenerateStats::cached_prompt_tokens says how many
// were reused). A conversation's next turn therefore pays only for the new turn, and a Prefetch()
// of the messages so far (while the caller is still talking) makes the final request pay only for
// its last few tokens. Greedy output with reuse is identical to a cold run (the KV cache rows of a
// position do not depend on what followed it).
//
// Cancellation: a raised CancelToken removes a queued request from the queue (noticed within
// kPollMs) or ends a running one at its next token (or next prefill pass); both finish with
// FinishReason::kCancelled, not an error.
//
// Threads: Generate/Prefetch/CountTokens/name from any number of threads. REQUIRES: no call in
// flight when the object is destroyed; the destructor fails requests still queued (Unavailable)
// and joins the scheduler.
// Blocking: Create loads the model (seconds for large files); Generate blocks until its answer is
// complete; Prefetch only queues.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/chat_template.h"
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

  static Result<std::unique_ptr<EngineLanguageModel>> Create(const LlmEngineConfig& config);
  ~EngineLanguageModel() override;

  Result<GenerateStats> Generate(const GenerateRequest& request,
                                 const TextCallback& on_text) override;
  Status Prefetch(const std::vector<Message>& messages) override;
  int CountTokens(std::string_view text) const override;
  std::string name() const override;

  // The prompt tokens of `messages` as Generate feeds them (with the assistant's opening when
  // `add_generation_prompt`). For tests and prompt budgeting.
  Result<std::vector<int32_t>> EncodeMessages(const std::vector<Message>& messages,
                                              bool add_generation_prompt) const;
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

  struct Job;

 private:
  EngineLanguageModel() = default;
  void SchedulerLoop();
  void RunGenerate(Job& job);
  void RunPrefetch(Job& job);
  // Picks (and truncates) the cached sequence to feed `prompt` into; *reused = tokens kept.
  // `keep_last` leaves at least one prompt token unfed (Generate needs one).
  Result<int> AcquireSequence(const std::vector<int32_t>& prompt, bool keep_last, int* reused);
  // Feeds prompt[from, to) into `seq` in passes of max_batch_tokens. Stops early (OK, *fed short)
  // when `stop()` says so between passes.
  template <class StopFn>
  Status FeedRange(int seq, const std::vector<int32_t>& prompt, size_t from, size_t to,
                   StopFn stop, size_t* fed);
  void Touch(int seq);
  // With a KV budget: frees idle cached sequences (LRU first, never `seq`) until `seq` can grow
  // to n_tokens.
  void MakeRoom(int seq, int n_tokens);
  Status Enqueue(const std::shared_ptr<Job>& job);
  void Deliver(Job& job, std::string text);

  LlmEngineConfig config_;
  std::unique_ptr<engine::Engine> engine_;
  std::shared_ptr<const engine::Tokenizer> tokenizer_;
  std::unique_ptr<engine::ChatTemplate> template_;
  std::vector<int32_t> stop_tokens_;

  // Scheduler-thread state: the prefix cache (sequence id -> last use tick).
  struct CachedSequence {
    int seq = 0;
    uint64_t last_used = 0;
  };
  std::vector<CachedSequence> cached_;
  uint64_t tick_ = 0;

  // Shared state, under mu_.
  mutable std::mutex mu_;
  std::condition_variable queue_cv_;
  std::vector<std::shared_ptr<Job>> queue_;
  uint64_t next_arrival_ = 0;
  bool stopping_ = false;
  bool paused_ = false;
  Counters counters_;
  std::thread scheduler_;
};

}  // namespace hotline::llm
