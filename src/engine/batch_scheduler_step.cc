// One step of the batching scheduler (BatchScheduler::Step): take the handles' hints, admit,
// pack, run the forward pass, sample. The rest of the scheduler is in batch_scheduler.cc.
#include <algorithm>
#include <string>

#include "common/log.h"
#include "engine/batch_scheduler_internal.h"

namespace hotline::engine {

using batch_internal::Before;
using batch_internal::EngineMetrics;
using batch_internal::Ms;

namespace {

// Orders the scheduler's queues (std::unique_ptr<Seq>) by priority, deadline, arrival.
constexpr auto InOrder = [](const auto& a, const auto& b) { return Before(*a, *b); };

}  // namespace

void BatchScheduler::Step(bool paused) {
  TakeHints();
  if (!paused) AdmitWaiting();
  const int budget_left = Pack();
  if (batch_.empty()) {
    Unstick();
  } else {
    Forward(paused ? 0 : budget_left);
  }

  // Preempted sequences wait again (recomputed when admitted); finished ones leave.
  for (auto& sp : running_) {
    if (sp->preempted && !sp->finished) {
      sp->preempted = false;
      waiting_.push_back(std::move(sp));
    }
  }
  std::erase_if(running_, [](const auto& s) { return s == nullptr || s->finished; });
}

void BatchScheduler::TakeHints() {
  // Cancellations first: their blocks are free for this step. New scheduling hints too.
  for (auto* list : {&running_, &waiting_}) {
    for (auto& s : *list) {
      if (s->handle->cancel_.load(std::memory_order_relaxed)) Finish(*s, FinishReason::kCancelled);
      if (s->handle->rescheduled_.exchange(false, std::memory_order_acquire)) {
        std::lock_guard<std::mutex> lock(s->handle->mu_);
        s->priority = s->handle->new_priority_;
        s->deadline = s->handle->new_deadline_;
      }
    }
    std::erase_if(*list, [](const auto& s) { return s->finished; });
  }
  std::sort(waiting_.begin(), waiting_.end(), InOrder);
  std::sort(running_.begin(), running_.end(), InOrder);
}

void BatchScheduler::AdmitWaiting() {
  const int bt = config_.kv_block_tokens;
  for (size_t i = 0; i < waiting_.size();) {
    Seq& w = *waiting_[i];
    kv_->BlockHashes(w.tokens, &w.hashes);  // no-op unless a preempted request grew since
    if (WaitsForSharedPrefix(w)) {
      ++i;  // admitted once the blocks it shares with a running prompt are computed
      continue;
    }
    if (running_.size() >= size_t(config_.max_batch_size)) {
      Seq& last = *running_.back();
      if (w.priority >= last.priority) break;
      Preempt(last);
      last.preempted = false;
      waiting_.push_back(std::move(running_.back()));
      running_.pop_back();
    }
    if (!running_.empty()) {
      // Admit only what can start without at once preempting others: the uncached part of the
      // prompt, plus a block of growth for each running sequence.
      const int cached =
          kv_->CachedPrefixTokens(w.tokens, w.hashes, static_cast<int>(w.tokens.size()) - 1);
      const int need = (static_cast<int>(w.tokens.size()) + bt - 1) / bt - cached / bt;
      if (need > kv_->allocatable_blocks() - static_cast<int>(running_.size())) break;
    }
    std::unique_ptr<Seq> s = std::move(waiting_[i]);
    waiting_.erase(waiting_.begin() + static_cast<std::ptrdiff_t>(i));
    Admit(*s);
    running_.push_back(std::move(s));
  }
  std::sort(running_.begin(), running_.end(), InOrder);
}

int BatchScheduler::Pack() {
  // Packing: decode tokens first (one each, in order), then prompt chunks in order. A sequence
  // with a deadline beyond the horizon sits out while one without that slack has work.
  for (auto& s : running_) s->chunk = 0;
  const auto horizon = config_.defer_horizon_ms > 0
                           ? Clock::now() + std::chrono::milliseconds(config_.defer_horizon_ms)
                           : Clock::time_point::max();
  auto relaxed = [&](const Seq& s) {
    return s.deadline != Clock::time_point::max() && s.deadline > horizon;
  };
  // One look at the batch: does anyone without slack have work (then the relaxed sit out), and
  // how many sequences decode one token, and how many of those may draft this pass.
  bool urgent_work = false;
  int decoding = 0, relaxed_decoding = 0, may_draft = 0, relaxed_may_draft = 0;
  for (auto& sp : running_) {
    const Seq& s = *sp;
    if (s.finished || s.preempted) continue;
    const int remaining = static_cast<int>(s.tokens.size()) - s.n_computed;
    const bool is_relaxed = relaxed(s);
    if (!is_relaxed && remaining > 0) urgent_work = true;
    if (remaining != 1) continue;
    (is_relaxed ? relaxed_decoding : decoding) += 1;
    (is_relaxed ? relaxed_may_draft : may_draft) += MayDraft(s) ? 1 : 0;
  }
  if (!urgent_work) {  // nobody sits out: the relaxed decode too
    decoding += relaxed_decoding;
    may_draft += relaxed_may_draft;
  }
  auto sits_out = [&](const Seq& s) { return urgent_work && relaxed(s); };
  // Drafts only pay while the pass is small: a large batch already uses the weights it streams.
  // The governor is asked (and counts a pass) only when some sequence may draft at all.
  const bool speculate = config_.speculative_tokens > 0 && may_draft >= 1 &&
                         decoding <= config_.speculative_max_batch &&
                         (!config_.speculative_adaptive || governor_.Choose(decoding));
  pass_decoders_ = 0;
  pass_prefill_ = pass_drafted_ = false;
  int budget = config_.max_num_batched_tokens;
  for (auto& sp : running_) {
    Seq& s = *sp;
    s.draft.clear();
    if (s.finished || s.preempted) continue;
    const int remaining = static_cast<int>(s.tokens.size()) - s.n_computed;
    if (remaining == 0) {  // a prefetch whose whole prompt was cached
      Finish(s, FinishReason::kLength);
      continue;
    }
    if (sits_out(s)) {
      ++deferred_;
      continue;
    }
    if (remaining != 1 || budget == 0) continue;
    s.chunk = Reserve(s, 1);
    if (s.chunk == 1 && speculate && budget > 1 &&
        Draft(s, std::min(budget - 1, config_.speculative_tokens)) > 0) {
      // The drafts' positions only from free blocks: a guess never preempts anyone.
      const int want = 1 + static_cast<int>(s.draft.size());
      if (kv_->BlocksNeeded(s.id, s.n_computed + want) <= kv_->allocatable_blocks() &&
          kv_->EnsureCapacity(s.id, s.n_computed + want).ok()) {
        s.chunk = want;
      } else {
        s.draft.clear();
      }
    }
    budget -= s.chunk;
    pass_decoders_ += s.chunk > 0;
    pass_drafted_ = pass_drafted_ || !s.draft.empty();
  }
  for (auto& sp : running_) {
    Seq& s = *sp;
    if (budget == 0) break;
    if (s.finished || s.preempted || s.chunk > 0 || sits_out(s)) continue;
    const int remaining = static_cast<int>(s.tokens.size()) - s.n_computed;
    if (remaining <= 1) continue;
    s.chunk = Reserve(s, std::min(remaining, budget));
    budget -= s.chunk;
    pass_prefill_ = pass_prefill_ || s.chunk > 0;
  }

  batch_.clear();
  batch_seqs_.clear();
  logit_seqs_.clear();
  for (auto& sp : running_) {
    Seq& s = *sp;
    if (s.chunk == 0 || s.finished || s.preempted) continue;
    const int end = s.n_computed + s.chunk;
    const int n_tokens = static_cast<int>(s.tokens.size());
    for (int p = s.n_computed; p < end; ++p) {
      // The last token, and each draft behind it, gives a logits row (a sequence's rows are
      // consecutive).
      const bool logits = p + 1 >= n_tokens && !s.req.prefill_only;
      const int32_t tok = p < n_tokens ? s.tokens[size_t(p)] : s.draft[size_t(p - n_tokens)];
      batch_.push_back(BatchToken{tok, s.id, p, logits});
      if (logits) logit_seqs_.push_back(&s);
    }
    batch_seqs_.push_back(&s);
  }
  return budget;
}

void BatchScheduler::Unstick() {
  // Everyone running is stuck for blocks: make room by preempting the lowest one, or fail a
  // sequence that cannot fit the pool even alone.
  std::vector<Seq*> active;
  for (auto& sp : running_) {
    if (!sp->finished && !sp->preempted) active.push_back(sp.get());
  }
  if (active.size() > 1) {
    Preempt(*active.back());
  } else if (active.size() == 1) {
    Finish(*active[0], FinishReason::kContextFull,
           ResourceExhaustedError("the KV cache pool (" + std::to_string(kv_->total_blocks()) +
                                  " blocks of " + std::to_string(config_.kv_block_tokens) +
                                  " tokens) cannot hold this sequence; raise kv_cache_bytes"));
  }
}

void BatchScheduler::Forward(int budget_left) {
  const auto start = Clock::now();
  Status st = RunPass(budget_left);
  ++steps_;
  batched_tokens_ += batch_.size();
  last_batch_sequences_ = static_cast<int>(batch_seqs_.size());
  max_batch_sequences_ = std::max(max_batch_sequences_, last_batch_sequences_);
  metrics_->batch_sequences.Observe(last_batch_sequences_);
  metrics_->batch_tokens.Observe(static_cast<double>(batch_.size()));
  if (step_observer_) {
    step_observer_(last_batch_sequences_, static_cast<int>(batch_.size()));
  }
  if (!st.ok()) {
    HLOG_WARN("engine: batched forward pass failed: {}", st.ToString());
    for (Seq* s : batch_seqs_) Finish(*s, FinishReason::kCancelled, st);
  } else {
    for (Seq* s : batch_seqs_) {
      // A speculating sequence's drafts count as computed only once they are accepted.
      s->n_computed += s->draft.empty() ? s->chunk : 1;
      kv_->CommitTokens(s->id, std::span<const int32_t>(s->tokens.data(), size_t(s->n_computed)),
                        s->hashes);
      if (s->req.prefill_only && s->n_computed == static_cast<int>(s->tokens.size())) {
        Finish(*s, FinishReason::kLength);
      }
    }
    pass_tokens_ = 0;
    SampleNextTokens();
    // Decode-only passes (no prompt chunks, nobody joined) time the drafts' worth.
    if (config_.speculative_tokens > 0 && !pass_prefill_ && pass_decoders_ > 0 &&
        batch_seqs_.size() == size_t(pass_decoders_)) {
      governor_.Record(pass_decoders_, pass_drafted_, Ms(Clock::now() - start), pass_tokens_);
    }
  }
}

void BatchScheduler::SampleNextTokens() {
  const size_t n_vocab = size_t(forward_.n_vocab());
  auto row = [&](size_t i) {
    return std::span<const float>(logits_.data() + i * n_vocab, n_vocab);
  };
  // Sampling reads a whole vocabulary row per sequence: spread the sequences' first rows over
  // the compute threads (each sequence has its own sampler) instead of leaving them idle
  // meanwhile. A speculating sequence's further rows are sampled below, one after another and
  // only while its drafts hold, so its sampler draws and penalizes exactly as without drafts.
  sampled_.resize(logit_seqs_.size());
  engine_.compute_pool().ParallelFor(
      static_cast<int64_t>(logit_seqs_.size()), 1, [&](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) {
          if (i > 0 && logit_seqs_[size_t(i)] == logit_seqs_[size_t(i - 1)]) continue;
          Seq& s = *logit_seqs_[size_t(i)];
          sampled_[size_t(i)] = s.sampler.Sample(row(size_t(i)), s.tokens);
        }
      });
  for (size_t i = 0; i < logit_seqs_.size();) {
    Seq& s = *logit_seqs_[i];
    size_t rows = 1;
    while (i + rows < logit_seqs_.size() && logit_seqs_[i + rows] == &s) ++rows;
    Emit(s, sampled_[i]);
    int accepted = 0;
    // Row j's logits follow draft j-1: valid while every draft so far is what was sampled.
    for (size_t j = 1; j < rows && !s.finished && s.tokens.back() == s.draft[j - 1]; ++j) {
      ++accepted;
      ++s.n_computed;
      kv_->CommitTokens(s.id, std::span<const int32_t>(s.tokens.data(), size_t(s.n_computed)),
                        s.hashes);
      Emit(s, s.sampler.Sample(row(i + j), s.tokens));
    }
    pass_tokens_ += 1 + accepted;
    if (!s.draft.empty()) {
      const int drafted = static_cast<int>(s.draft.size());
      drafted_tokens_ += uint64_t(drafted);
      accepted_tokens_ += uint64_t(accepted);
      s.result.timings.drafted_tokens += drafted;
      s.result.timings.accepted_tokens += accepted;
      s.window_drafted += drafted;
      s.window_accepted += accepted;
      if (s.window_drafted >= 16) {
        if (s.window_accepted < config_.speculative_min_acceptance * s.window_drafted) {
          s.pause_until = static_cast<int>(s.result.tokens.size()) + 32;
        }
        s.window_drafted = s.window_accepted = 0;
      }
      s.draft.clear();
    }
    i += rows;
  }
}

void BatchScheduler::Emit(Seq& s, int32_t tok) {
  const auto now = Clock::now();
  if (!s.prompt_done) {
    s.prompt_done = true;
    s.result.timings.prefill_ms = Ms(now - s.admitted_at);
  }
  const auto& stops = engine_.stop_tokens();
  if (!s.req.ignore_stop_tokens && std::find(stops.begin(), stops.end(), tok) != stops.end()) {
    Finish(s, FinishReason::kStop);
    return;
  }
  metrics_->generated_tokens.Increment();
  if (s.result.tokens.empty()) {
    s.result.timings.first_token_ms = Ms(now - s.submitted);
    metrics_->first_token_s.Observe(s.result.timings.first_token_ms / 1000.0);
  } else {
    const double itl = Ms(now - s.last_token);
    metrics_->inter_token_s.Observe(itl / 1000.0);
    s.itl_sum_ms += itl;
    ++s.itl_n;
    s.result.timings.inter_token_ms_max = std::max(s.result.timings.inter_token_ms_max, itl);
  }
  s.last_token = now;
  s.tokens.push_back(tok);
  s.result.tokens.push_back(tok);
  if (s.req.on_token && !s.req.on_token(tok)) {
    Finish(s, FinishReason::kCallback);
  } else if (static_cast<int>(s.result.tokens.size()) >= s.req.sampling.max_tokens) {
    Finish(s, FinishReason::kLength);
  } else if (s.n_computed >= max_seq_len_) {
    Finish(s, FinishReason::kContextFull);
  }
}

bool BatchScheduler::MayDraft(const Seq& s) {
  return s.req.speculate && !s.req.prefill_only &&
         static_cast<int>(s.result.tokens.size()) >= s.pause_until;
}

int BatchScheduler::Draft(Seq& s, int max_tokens) {
  s.draft.clear();
  if (!MayDraft(s)) return 0;
  const int generated = static_cast<int>(s.result.tokens.size());
  // Never past what the request may still generate (this pass hands out up to 1 + drafts) or
  // the positions the context holds.
  max_tokens = std::min(
      {max_tokens, s.req.sampling.max_tokens - generated - 1, max_seq_len_ - s.n_computed - 1});
  if (max_tokens <= 0) return 0;
  // The longer matched n-gram wins; on a tie, the sequence's own context (its passages).
  int matched = 0;
  DraftFromContext(s.tokens, draft_config_, max_tokens, &s.draft, &matched);
  if (answers_) {
    other_draft_.clear();
    int other_matched = 0;
    answers_->Draft(s.tokens, max_tokens, &other_draft_, &other_matched);
    if (other_matched > matched) s.draft.swap(other_draft_);
  }
  return static_cast<int>(s.draft.size());
}

}  // namespace hotline::engine
