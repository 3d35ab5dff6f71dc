#include "engine/batch_scheduler.h"

#include <algorithm>
#include <limits>
#include <string>

#include "common/log.h"
#include "engine/batch_scheduler_internal.h"

namespace hotline::engine {

using batch_internal::Before;
using batch_internal::EngineMetrics;
using batch_internal::Ms;

struct RequestHandle::Wake {
  std::mutex mu;
  std::condition_variable cv;
  bool cancel_pending = false;  // under mu: a handle was cancelled since the last look
};

BatchSchedulerConfig BatchSchedulerConfig::FromEngine(const EngineConfig& c) {
  BatchSchedulerConfig b;
  b.max_batch_size = c.max_batch_size;
  b.max_num_batched_tokens = c.max_num_batched_tokens;
  b.join_max_tokens = c.join_max_tokens;
  b.kv_block_tokens = c.kv_block_tokens;
  b.kv_cache_bytes = c.kv_cache_bytes;
  b.speculative_tokens = c.speculative_tokens;
  b.speculative_max_batch = c.speculative_max_batch;
  b.speculative_min_acceptance = c.speculative_min_acceptance;
  b.speculative_adaptive = c.speculative_adaptive;
  b.speculative_cache_tokens = c.speculative_cache_tokens;
  return b;
}

Status BatchSchedulerConfig::Validate() const {
  if (max_batch_size < 1 || max_batch_size > 1024) {
    return InvalidArgumentError("max_batch_size must be in [1, 1024], got " +
                                std::to_string(max_batch_size));
  }
  if (max_num_batched_tokens < max_batch_size || max_num_batched_tokens > 65536) {
    return InvalidArgumentError("max_num_batched_tokens must be in [max_batch_size, 65536], got " +
                                std::to_string(max_num_batched_tokens));
  }
  if (kv_block_tokens < 1 || kv_block_tokens > 65536) {
    return InvalidArgumentError("kv_block_tokens must be in [1, 65536]");
  }
  if (join_max_tokens < 0 || join_max_tokens > 65536) {
    return InvalidArgumentError("join_max_tokens must be in [0, 65536], got " +
                                std::to_string(join_max_tokens));
  }
  if (defer_horizon_ms < 0 || defer_horizon_ms > 600000) {
    return InvalidArgumentError("defer_horizon_ms must be in [0, 600000] (0 = off), got " +
                                std::to_string(defer_horizon_ms));
  }
  if (max_queue < 1) return InvalidArgumentError("max_queue must be positive");
  if (speculative_tokens < 0 || speculative_tokens > 32) {
    return InvalidArgumentError("speculative_tokens must be in [0, 32] (0 = off), got " +
                                std::to_string(speculative_tokens));
  }
  if (speculative_max_batch < 1 || speculative_max_batch > 1024) {
    return InvalidArgumentError("speculative_max_batch must be in [1, 1024], got " +
                                std::to_string(speculative_max_batch));
  }
  if (!(speculative_min_acceptance >= 0 && speculative_min_acceptance <= 1)) {
    return InvalidArgumentError("speculative_min_acceptance must be in [0, 1]");
  }
  if (speculative_cache_tokens < 0 || speculative_cache_tokens > (1 << 24)) {
    return InvalidArgumentError("speculative_cache_tokens must be in [0, 16777216], got " +
                                std::to_string(speculative_cache_tokens));
  }
  return Status::Ok();
}

void RequestHandle::Cancel() {
  if (cancel_.exchange(true)) return;
  if (wake_) {
    {
      std::lock_guard<std::mutex> lock(wake_->mu);
      wake_->cancel_pending = true;
    }
    wake_->cv.notify_all();
  }
}

void RequestHandle::Reschedule(int priority, std::chrono::steady_clock::time_point deadline) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    new_priority_ = priority;
    new_deadline_ = deadline;
  }
  rescheduled_.store(true, std::memory_order_release);
}

bool RequestHandle::done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

BatchResult RequestHandle::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return done_; });
  return result_;
}

bool RequestHandle::WaitFor(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [&] { return done_; });
}

BatchScheduler::BatchScheduler(Engine& engine, const BatchSchedulerConfig& config)
    : engine_(engine),
      config_(config),
      max_seq_len_(engine.max_seq_len()),
      forward_(engine.model(), engine.compute_pool(), engine.config().flash_attention),
      governor_(config.speculative_max_batch),
      wake_(std::make_shared<RequestHandle::Wake>()) {
  if (config.speculative_tokens > 0 && config.speculative_cache_tokens > 0) {
    answers_ = std::make_unique<AnswerNgramCache>(draft_config_, config.speculative_cache_tokens);
  }
}

Result<std::unique_ptr<BatchScheduler>> BatchScheduler::Create(Engine& engine,
                                                               const BatchSchedulerConfig& config,
                                                               MetricsRegistry* metrics) {
  RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<BatchScheduler> s(new BatchScheduler(engine, config));
  s->metrics_ =
      std::make_unique<EngineMetrics>(metrics != nullptr ? *metrics : MetricsRegistry::Global());
  const ModelHParams& hp = engine.model().hparams();
  ASSIGN_OR_RETURN(KvType kv_type, ParseKvType(engine.config().kv_type));
  const KvLayout layout{hp.n_layer, hp.n_head_kv, hp.head_dim, kv_type};
  uint64_t bytes = config.kv_cache_bytes;
  if (bytes == 0) {
    const uint64_t block_bytes = uint64_t(layout.row_bytes()) * uint64_t(config.kv_block_tokens) *
                                 2 * uint64_t(layout.n_layer);
    const uint64_t blocks_per_seq =
        uint64_t((s->max_seq_len_ + config.kv_block_tokens - 1) / config.kv_block_tokens);
    bytes = block_bytes * blocks_per_seq * uint64_t(config.max_batch_size);
  }
  ASSIGN_OR_RETURN(s->kv_,
                   PagedKvCache::Create(layout, config.kv_block_tokens, s->max_seq_len_, bytes));
  s->Publish();
  HLOG_INFO(
      "engine: batching up to {} sequences / {} tokens per pass, KV pool {} blocks of {} "
      "tokens ({:.1f} MB)",
      config.max_batch_size, config.max_num_batched_tokens, s->kv_->total_blocks(),
      config.kv_block_tokens,
      static_cast<double>(s->kv_->block_bytes()) * s->kv_->total_blocks() / 1e6);
  s->thread_ = std::thread([p = s.get()] { p->Loop(); });
  return s;
}

BatchScheduler::~BatchScheduler() {
  {
    std::lock_guard<std::mutex> lock(wake_->mu);
    stopping_ = true;
  }
  wake_->cv.notify_all();
  if (thread_.joinable()) thread_.join();
}

Result<std::shared_ptr<RequestHandle>> BatchScheduler::Submit(BatchRequest request) {
  if (request.prompt.empty()) return InvalidArgumentError("a request needs at least one token");
  const int n_vocab = engine_.model().hparams().n_vocab;
  for (int32_t t : request.prompt) {
    if (t < 0 || t >= n_vocab) {
      return InvalidArgumentError("prompt token " + std::to_string(t) +
                                  " is outside the vocabulary [0, " + std::to_string(n_vocab) +
                                  ")");
    }
  }
  if (request.prompt.size() > static_cast<size_t>(max_seq_len_)) {
    return InvalidArgumentError("the prompt has " + std::to_string(request.prompt.size()) +
                                " tokens, more than max_seq_len " + std::to_string(max_seq_len_) +
                                "; shorten it (keep the system prompt and the latest turns)");
  }
  if (!request.prefill_only) RETURN_IF_ERROR(request.sampling.Validate());
  const int64_t prompt_blocks =
      (int64_t(request.prompt.size()) + config_.kv_block_tokens - 1) / config_.kv_block_tokens;
  if (prompt_blocks > kv_->total_blocks()) {  // total_blocks is fixed at creation
    return ResourceExhaustedError("the prompt needs " + std::to_string(prompt_blocks) +
                                  " KV blocks, the pool has " +
                                  std::to_string(kv_->total_blocks()) + "; raise kv_cache_bytes");
  }
  auto seq = std::make_unique<Seq>(std::move(request));
  seq->handle = std::make_shared<RequestHandle>();
  seq->handle->wake_ = wake_;
  seq->tokens = seq->req.prompt;
  kv_->BlockHashes(seq->tokens, &seq->hashes);  // pure: safe beside the scheduler thread
  seq->priority = seq->req.priority;
  seq->submitted = Clock::now();
  if (seq->req.deadline_hint_ms >= 0) {
    seq->deadline = seq->submitted + std::chrono::milliseconds(seq->req.deadline_hint_ms);
  }
  seq->result.timings.prompt_tokens = static_cast<int>(seq->tokens.size());
  std::shared_ptr<RequestHandle> handle = seq->handle;
  {
    std::lock_guard<std::mutex> lock(wake_->mu);
    if (stopping_) return UnavailableError("the engine scheduler is shutting down");
    if (incoming_.size() + size_t(stats_.waiting) >= size_t(config_.max_queue)) {
      return ResourceExhaustedError("the engine has " +
                                    std::to_string(incoming_.size() + size_t(stats_.waiting)) +
                                    " requests waiting; try again later");
    }
    seq->arrival = next_arrival_++;
    incoming_.push_back(std::move(seq));
    has_incoming_.store(true, std::memory_order_release);
  }
  wake_->cv.notify_all();
  return handle;
}

void BatchScheduler::Pause() {
  std::lock_guard<std::mutex> lock(wake_->mu);
  paused_ = true;
}

void BatchScheduler::Resume() {
  {
    std::lock_guard<std::mutex> lock(wake_->mu);
    paused_ = false;
  }
  wake_->cv.notify_all();
}

SchedulerStats BatchScheduler::stats() const {
  std::lock_guard<std::mutex> lock(wake_->mu);
  SchedulerStats s = stats_;
  s.waiting += static_cast<int>(incoming_.size());
  return s;
}

void BatchScheduler::Publish() {
  SchedulerStats s;
  s.waiting = static_cast<int>(waiting_.size());
  s.running = static_cast<int>(running_.size());
  s.kv_blocks_total = kv_->total_blocks();
  s.kv_blocks_in_use = kv_->blocks_in_use();
  s.kv_blocks_cached = kv_->cached_blocks();
  s.prefix_hit_tokens = kv_->prefix_hit_tokens();
  s.steps = steps_;
  s.batched_tokens = batched_tokens_;
  s.preemptions = preemptions_;
  s.joined = joined_;
  s.deferred = deferred_;
  s.copied_prefix_tokens = copied_prefix_tokens_;
  s.drafted_tokens = drafted_tokens_;
  s.accepted_tokens = accepted_tokens_;
  s.last_batch_sequences = last_batch_sequences_;
  s.max_batch_sequences = max_batch_sequences_;
  EngineMetrics& m = *metrics_;
  m.running.Set(s.running);
  m.kv_blocks_total.Set(s.kv_blocks_total);
  m.kv_blocks_in_use.Set(s.kv_blocks_in_use);
  m.kv_blocks_cached.Set(s.kv_blocks_cached);
  m.prefix_hit_tokens.Increment(s.prefix_hit_tokens - published_.prefix_hit_tokens);
  m.preemptions.Increment(s.preemptions - published_.preemptions);
  m.joined.Increment(s.joined - published_.joined);
  m.copied_prefix_tokens.Increment(s.copied_prefix_tokens - published_.copied_prefix_tokens);
  m.drafted_tokens.Increment(s.drafted_tokens - published_.drafted_tokens);
  m.accepted_tokens.Increment(s.accepted_tokens - published_.accepted_tokens);
  m.steps.Increment(s.steps - published_.steps);
  published_ = s;
  std::lock_guard<std::mutex> lock(wake_->mu);
  stats_ = s;
  m.waiting.Set(s.waiting + static_cast<double>(incoming_.size()));
}

void BatchScheduler::Loop() {
  for (;;) {
    bool paused = false;
    {
      std::unique_lock<std::mutex> lock(wake_->mu);
      wake_->cv.wait(lock, [&] {
        return stopping_ || wake_->cancel_pending || !incoming_.empty() || !running_.empty() ||
               (!paused_ && !waiting_.empty());
      });
      wake_->cancel_pending = false;
      for (auto& s : incoming_) waiting_.push_back(std::move(s));
      incoming_.clear();
      has_incoming_.store(false, std::memory_order_relaxed);
      paused = paused_;
      if (stopping_) break;
    }
    Step(paused);
    Publish();
    Deliver();
  }
  const Status down = UnavailableError("the engine scheduler is shutting down");
  for (auto& s : running_) Finish(*s, FinishReason::kCancelled, down);
  for (auto& s : waiting_) Finish(*s, FinishReason::kCancelled, down);
  running_.clear();
  waiting_.clear();
  Publish();
  Deliver();
}

void BatchScheduler::Admit(Seq& s) {
  s.id = next_seq_id_++;
  const int max_attach = s.req.prefill_only ? static_cast<int>(s.tokens.size())
                                            : static_cast<int>(s.tokens.size()) - 1;
  kv_->BlockHashes(s.tokens, &s.hashes);
  s.n_computed = kv_->AttachCachedPrefix(s.id, s.tokens, s.hashes, max_attach);
  CopyFromPartialBlock(s, max_attach);
  if (!s.ever_admitted) {
    s.ever_admitted = true;
    s.admitted_at = Clock::now();
    s.result.timings.queue_ms = Ms(s.admitted_at - s.submitted);
    s.result.timings.cached_prompt_tokens = s.n_computed;
    if (s.req.on_admit) s.req.on_admit();
  }
}

void BatchScheduler::CopyFromPartialBlock(Seq& s, int limit) {
  // The cached full blocks end at s.n_computed; the prompt may go on into a running sequence's
  // last, partial block (or its not yet committed one). Rows of identical tokens at identical
  // positions are identical, so copy them rather than compute them.
  const int bt = config_.kv_block_tokens;
  const int start = s.n_computed;
  const int block_end = (start / bt + 1) * bt;
  Seq* donor = nullptr;
  int best = start;
  for (const auto& rp : running_) {
    Seq& r = *rp;
    if (&r == &s || r.id < 0 || r.finished || r.preempted) continue;
    const int n = std::min({limit, r.n_computed, block_end});
    if (n <= best) continue;
    const auto diff = std::mismatch(s.tokens.begin(), s.tokens.begin() + n, r.tokens.begin());
    const int lcp = static_cast<int>(diff.first - s.tokens.begin());
    if (lcp > best) {
      best = lcp;
      donor = &r;
    }
  }
  if (donor == nullptr || !kv_->EnsureCapacity(s.id, best).ok()) return;
  if (!kv_->CopyPositions(donor->id, s.id, start, best).ok()) return;
  copied_prefix_tokens_ += uint64_t(best - start);
  s.n_computed = best;
}

bool BatchScheduler::WaitsForSharedPrefix(const Seq& w) const {
  // Requests that arrive together with the same system prompt would each compute it: the first
  // computes it, the others wait for its blocks to enter the prefix cache and share them.
  const int bt = config_.kv_block_tokens;
  const size_t limit = w.req.prefill_only ? w.tokens.size() : w.tokens.size() - 1;
  int cached = -1;  // computed on demand
  for (const auto& rp : running_) {
    const Seq& r = *rp;
    if (r.n_computed >= static_cast<int>(r.tokens.size()) - 1) continue;  // not prefilling
    const size_t n = std::min(limit, r.tokens.size());
    size_t lcp = 0;
    while (lcp < n && w.tokens[lcp] == r.tokens[lcp]) ++lcp;
    const int shared = static_cast<int>(lcp) / bt * bt;
    if (shared == 0 || r.n_computed >= shared) continue;
    if (cached < 0) cached = kv_->CachedPrefixTokens(w.tokens, w.hashes, static_cast<int>(limit));
    if (shared > cached) return true;
  }
  return false;
}

void BatchScheduler::Preempt(Seq& s) {
  kv_->RemoveSequence(s.id);
  s.id = -1;
  s.n_computed = 0;
  s.preempted = true;
  ++s.result.timings.preemptions;
  ++preemptions_;
}

void BatchScheduler::Finish(Seq& s, FinishReason reason, Status status) {
  if (s.finished) return;
  s.finished = true;
  if (s.id >= 0) kv_->RemoveSequence(s.id);
  s.id = -1;
  BatchResult& r = s.result;
  if (answers_ && r.status.ok() && !r.tokens.empty() &&
      (reason == FinishReason::kStop || reason == FinishReason::kLength)) {
    // A finished answer, with the end of its prompt (the assistant's turn opening) in front so
    // the next answer's first tokens find it too.
    const size_t lead = std::min(size_t(draft_config_.ngram_max), s.req.prompt.size());
    std::vector<int32_t> answer(s.req.prompt.end() - std::ptrdiff_t(lead), s.req.prompt.end());
    answer.insert(answer.end(), r.tokens.begin(), r.tokens.end());
    answers_->Add(answer);
  }
  r.finish = reason;
  r.status = std::move(status);
  r.timings.generated_tokens = static_cast<int>(r.tokens.size());
  r.timings.total_ms = Ms(Clock::now() - s.submitted);
  if (s.itl_n > 0) r.timings.inter_token_ms_mean = s.itl_sum_ms / s.itl_n;
  // Completion is announced after the step's stats are published (Deliver), so a caller that
  // sees its request done also sees its blocks freed.
  done_.push_back({s.handle, std::move(s.req.on_done), std::move(r)});
}

void BatchScheduler::Deliver() {
  for (Done& d : done_) {
    if (d.on_done) d.on_done(d.result);
    {
      std::lock_guard<std::mutex> lock(d.handle->mu_);
      d.handle->result_ = std::move(d.result);
      d.handle->done_ = true;
    }
    d.handle->cv_.notify_all();
  }
  done_.clear();
}

int BatchScheduler::Reserve(Seq& s, int want) {
  const int bt = config_.kv_block_tokens;
  for (;;) {
    const int need = kv_->BlocksNeeded(s.id, s.n_computed + want);
    if (need <= kv_->allocatable_blocks()) break;
    // Free the blocks of the lowest-ordered running sequence that is after `s` and not packed.
    Seq* victim = nullptr;
    for (auto it = running_.rbegin(); it != running_.rend() && it->get() != &s; ++it) {
      Seq& v = **it;
      if (!v.finished && !v.preempted && v.chunk == 0) {
        victim = &v;
        break;
      }
    }
    if (victim == nullptr) {
      // Nobody left to take from: grow as far as the free blocks allow.
      const int fit = kv_->Capacity(s.id) + kv_->allocatable_blocks() * bt - s.n_computed;
      want = std::min(want, fit);
      if (want <= 0) return 0;
      break;
    }
    Preempt(*victim);
  }
  if (!kv_->EnsureCapacity(s.id, s.n_computed + want).ok()) return 0;
  return want;
}

Status BatchScheduler::RunPass(int budget_left) {
  if (config_.join_max_tokens == 0) budget_left = 0;
  RETURN_IF_ERROR(forward_.Begin(batch_, *kv_));
  // Joining late in a pass would delay the running streams by more than it saves the newcomer.
  const int half = forward_.n_layer() / 2;
  for (int l = 1; l <= half; ++l) {
    RETURN_IF_ERROR(forward_.Advance(l));
    if (layer_observer_) layer_observer_(l);
    if (budget_left > 0 && running_.size() < size_t(config_.max_batch_size) &&
        has_incoming_.load(std::memory_order_acquire)) {
      // One round of joins per pass: each round delays the running streams' token once.
      JoinArrivals(&budget_left);
      break;
    }
  }
  return forward_.End(&logits_);
}

void BatchScheduler::JoinArrivals(int* budget_left) {
  {
    std::lock_guard<std::mutex> lock(wake_->mu);
    if (paused_) return;
    for (auto& s : incoming_) waiting_.push_back(std::move(s));
    incoming_.clear();
    has_incoming_.store(false, std::memory_order_relaxed);
  }
  std::sort(
      waiting_.begin(), waiting_.end(),
      [](const std::unique_ptr<Seq>& a, const std::unique_ptr<Seq>& b) { return Before(*a, *b); });
  const int bt = config_.kv_block_tokens;
  // The catch-up runs every joiner's tokens through the layers done while the running streams
  // wait, so all of them together get join_max_tokens.
  int join_budget = std::min(config_.join_max_tokens, *budget_left);
  join_batch_.clear();
  joiners_.clear();
  // In order, as admission: the first request that may not join stops the ones behind it.
  for (size_t i = 0; i < waiting_.size();) {
    Seq& w = *waiting_[i];
    if (w.handle->cancel_.load(std::memory_order_relaxed) || WaitsForSharedPrefix(w)) {
      ++i;
      continue;
    }
    if (w.req.prefill_only || running_.size() >= size_t(config_.max_batch_size)) break;
    const int size = static_cast<int>(w.tokens.size());
    const int cached = kv_->CachedPrefixTokens(w.tokens, w.hashes, size - 1);
    if (size - cached > join_budget) break;
    const int need = (size + bt - 1) / bt - cached / bt;
    if (need > kv_->allocatable_blocks() - static_cast<int>(running_.size())) break;

    std::unique_ptr<Seq> s = std::move(waiting_[i]);
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
    Admit(*s);  // may copy more rows than the estimate: never fewer tokens to compute
    Seq& j = *s;
    running_.push_back(std::move(s));  // from here on it runs, in this pass or the next step
    const int chunk = size - j.n_computed;
    if (chunk <= 0 || chunk > join_budget || !kv_->EnsureCapacity(j.id, size).ok()) break;
    for (int p = j.n_computed; p < size; ++p) {
      join_batch_.push_back(BatchToken{j.tokens[size_t(p)], j.id, p, p + 1 == size});
    }
    j.chunk = chunk;
    join_budget -= chunk;
    joiners_.push_back(&j);
  }
  if (joiners_.empty()) return;
  // One catch-up pass for all of them: the weights of the layers done are streamed once.
  const Status st = forward_.Join(join_batch_);
  if (!st.ok()) {
    HLOG_WARN("engine: arrivals could not join the pass in flight: {}", st.ToString());
    for (Seq* j : joiners_) j->chunk = 0;  // computed by the next step instead
    return;
  }
  *budget_left -= static_cast<int>(join_batch_.size());
  batch_.insert(batch_.end(), join_batch_.begin(), join_batch_.end());
  for (Seq* j : joiners_) {
    batch_seqs_.push_back(j);
    logit_seqs_.push_back(j);
  }
  joined_ += joiners_.size();
}

}  // namespace hotline::engine
