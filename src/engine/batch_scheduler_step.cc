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
  bool urgent_work = false;
  for (auto& sp : running_) {
    const Seq& s = *sp;
    if (!s.finished && !s.preempted && !relaxed(s) &&
        static_cast<int>(s.tokens.size()) > s.n_computed) {
      urgent_work = true;
    }
  }
  auto sits_out = [&](const Seq& s) { return urgent_work && relaxed(s); };
  int budget = config_.max_num_batched_tokens;
  for (auto& sp : running_) {
    Seq& s = *sp;
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
    budget -= s.chunk;
  }
  for (auto& sp : running_) {
    Seq& s = *sp;
    if (budget == 0) break;
    if (s.finished || s.preempted || s.chunk > 0 || sits_out(s)) continue;
    const int remaining = static_cast<int>(s.tokens.size()) - s.n_computed;
    if (remaining <= 1) continue;
    s.chunk = Reserve(s, std::min(remaining, budget));
    budget -= s.chunk;
  }

  batch_.clear();
  batch_seqs_.clear();
  logit_seqs_.clear();
  for (auto& sp : running_) {
    Seq& s = *sp;
    if (s.chunk == 0 || s.finished || s.preempted) continue;
    const int end = s.n_computed + s.chunk;
    for (int p = s.n_computed; p < end; ++p) {
      const bool last = p + 1 == static_cast<int>(s.tokens.size()) && !s.req.prefill_only;
      batch_.push_back(BatchToken{s.tokens[size_t(p)], s.id, p, last});
      if (last) logit_seqs_.push_back(&s);
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
  Status st = RunPass(budget_left);
  ++steps_;
  batched_tokens_ += batch_.size();
  last_batch_sequences_ = static_cast<int>(batch_seqs_.size());
  max_batch_sequences_ = std::max(max_batch_sequences_, last_batch_sequences_);
  EngineMetrics::Get().batch_sequences.Observe(last_batch_sequences_);
  EngineMetrics::Get().batch_tokens.Observe(static_cast<double>(batch_.size()));
  if (step_observer_) {
    step_observer_(last_batch_sequences_, static_cast<int>(batch_.size()));
  }
  if (!st.ok()) {
    HLOG_WARN("engine: batched forward pass failed: {}", st.ToString());
    for (Seq* s : batch_seqs_) Finish(*s, FinishReason::kCancelled, st);
  } else {
    for (Seq* s : batch_seqs_) {
      s->n_computed += s->chunk;
      kv_->CommitTokens(s->id, std::span<const int32_t>(s->tokens.data(), size_t(s->n_computed)),
                        s->hashes);
      if (s->req.prefill_only && s->n_computed == static_cast<int>(s->tokens.size())) {
        Finish(*s, FinishReason::kLength);
      }
    }
    SampleNextTokens();
  }
}

void BatchScheduler::SampleNextTokens() {
  const size_t n_vocab = size_t(forward_.n_vocab());
  // Sampling reads a whole vocabulary row per sequence: spread the rows over the compute
  // threads (each sequence has its own sampler) instead of leaving them idle meanwhile.
  sampled_.resize(logit_seqs_.size());
  engine_.compute_pool().ParallelFor(
      static_cast<int64_t>(logit_seqs_.size()), 1, [&](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) {
          Seq& s = *logit_seqs_[size_t(i)];
          std::span<const float> row(logits_.data() + size_t(i) * n_vocab, n_vocab);
          sampled_[size_t(i)] = s.sampler.Sample(row, s.tokens);
        }
      });
  const auto now = Clock::now();
  for (size_t i = 0; i < logit_seqs_.size(); ++i) {
    Seq& s = *logit_seqs_[i];
    if (!s.prompt_done) {
      s.prompt_done = true;
      s.result.timings.prefill_ms = Ms(now - s.admitted_at);
    }
    const int32_t tok = sampled_[i];
    const auto& stops = engine_.stop_tokens();
    if (!s.req.ignore_stop_tokens &&
        std::find(stops.begin(), stops.end(), tok) != stops.end()) {
      Finish(s, FinishReason::kStop);
      continue;
    }
    const auto t = Clock::now();
    EngineMetrics::Get().generated_tokens.Increment();
    if (s.result.tokens.empty()) {
      s.result.timings.first_token_ms = Ms(t - s.submitted);
      EngineMetrics::Get().first_token_s.Observe(s.result.timings.first_token_ms / 1000.0);
    } else {
      const double itl = Ms(t - s.last_token);
      EngineMetrics::Get().inter_token_s.Observe(itl / 1000.0);
      s.itl_sum_ms += itl;
      ++s.itl_n;
      s.result.timings.inter_token_ms_max = std::max(s.result.timings.inter_token_ms_max, itl);
    }
    s.last_token = t;
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
}

}  // namespace hotline::engine
