#include "llm/engine/engine_language_model.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>

#include "common/log.h"
#include "common/metrics.h"
#include "engine/detokenizer.h"
#include "engine/stop_matcher.h"
#include "engine/vocab.h"

namespace hotline::llm {

struct EngineLanguageModel::Job {
  enum class Kind : uint8_t { kGenerate, kPrefetch };
  enum class State : uint8_t { kQueued, kRunning, kDone };

  Kind kind = Kind::kGenerate;
  int priority = 0;
  MonoTime deadline{};
  uint64_t arrival = 0;
  MonoTime enqueued{};
  std::vector<int32_t> prompt;
  engine::SamplingConfig sampling;
  std::vector<std::string> stops;
  const CancelToken* cancel = nullptr;
  // The caller's on_text returned false: the scheduler stops at the next token.
  std::atomic<bool> stop_requested{false};

  // Under the model's mutex.
  State state = State::kQueued;
  std::vector<std::string> deltas;
  std::condition_variable cv;
  Status error;
  GenerateStats stats;
};

namespace {

double MsBetween(MonoTime a, MonoTime b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// Queue order: lower priority value first, then the earlier deadline (none = last), then arrival.
bool Before(const EngineLanguageModel::Job& a, const EngineLanguageModel::Job& b) {
  if (a.priority != b.priority) return a.priority < b.priority;
  const bool ad = a.deadline != MonoTime{};
  const bool bd = b.deadline != MonoTime{};
  if (ad != bd) return ad;
  if (ad && a.deadline != b.deadline) return a.deadline < b.deadline;
  return a.arrival < b.arrival;
}

Status ValidateRequest(const GenerateRequest& r, int max_seq_len) {
  if (r.messages.empty()) return InvalidArgumentError("a generate request needs at least one message");
  if (r.max_tokens < 1 || r.max_tokens > max_seq_len) {
    return InvalidArgumentError("max_tokens must be in [1, " + std::to_string(max_seq_len) +
                                "], got " + std::to_string(r.max_tokens));
  }
  if (!std::isfinite(r.temperature) || r.temperature < 0 || r.temperature > 100) {
    return InvalidArgumentError("temperature must be in [0, 100]");
  }
  if (!(r.top_p > 0 && r.top_p <= 1)) return InvalidArgumentError("top_p must be in (0, 1]");
  if (r.top_k < 0) return InvalidArgumentError("top_k must be >= 0 (0 = off)");
  if (!(r.repetition_penalty > 0 && r.repetition_penalty <= 10)) {
    return InvalidArgumentError("repetition_penalty must be in (0, 10]");
  }
  return Status::Ok();
}

struct Metrics {
  Counter& requests;
  Counter& prompt_tokens;
  Counter& cached_tokens;
  Counter& generated_tokens;
  Histogram& first_token_s;
  Histogram& queue_s;
  static Metrics& Get() {
    static Metrics m{
        MetricsRegistry::Global().GetCounter("hotline_llm_requests_total", "LLM requests",
                                             {{"backend", "engine"}}),
        MetricsRegistry::Global().GetCounter("hotline_llm_prompt_tokens_total",
                                             "Prompt tokens of LLM requests",
                                             {{"backend", "engine"}}),
        MetricsRegistry::Global().GetCounter("hotline_llm_cached_prompt_tokens_total",
                                             "Prompt tokens served from the prefix cache",
                                             {{"backend", "engine"}}),
        MetricsRegistry::Global().GetCounter("hotline_llm_generated_tokens_total",
                                             "Tokens generated", {{"backend", "engine"}}),
        MetricsRegistry::Global().GetHistogram(
            "hotline_llm_first_token_seconds", "Request to first text delta",
            {0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2}, {{"backend", "engine"}}),
        MetricsRegistry::Global().GetHistogram(
            "hotline_llm_queue_seconds", "Time a request waited for the engine",
            {0.001, 0.01, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2}, {{"backend", "engine"}}),
    };
    return m;
  }
};

}  // namespace

Result<std::unique_ptr<EngineLanguageModel>> EngineLanguageModel::Create(
    const LlmEngineConfig& config) {
  RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<EngineLanguageModel> m(new EngineLanguageModel());
  m->config_ = config;
  ASSIGN_OR_RETURN(m->engine_, engine::Engine::Load(config.engine));
  ASSIGN_OR_RETURN(std::shared_ptr<const engine::Vocabulary> vocab,
                   engine::Vocabulary::FromGguf(m->engine_->file()));
  ASSIGN_OR_RETURN(m->tokenizer_, engine::Tokenizer::Create(vocab));
  engine::ChatTemplateConfig tc;
  tc.format = config.chat_template;
  auto tmpl = engine::ChatTemplate::Create(tc, m->tokenizer_->vocab());
  if (!tmpl.ok()) {
    return tmpl.status().WithContext("llm.engine.chat_template for " + config.engine.model_path);
  }
  m->template_ = std::make_unique<engine::ChatTemplate>(*tmpl);
  HLOG_INFO("llm: engine backend on {} (chat format {}, {} cached sequences, queue {})",
            config.engine.model_path, engine::ChatFormatName(m->template_->format()),
            config.prefix_cache_sequences, config.max_queue);
  m->scheduler_ = std::thread([p = m.get()] { p->SchedulerLoop(); });
  return m;
}

EngineLanguageModel::~EngineLanguageModel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  if (scheduler_.joinable()) scheduler_.join();
}

std::string EngineLanguageModel::name() const { return "engine:" + config_.engine.model_path; }

int EngineLanguageModel::CountTokens(std::string_view text) const {
  engine::EncodeOptions o;
  o.add_special = false;
  return static_cast<int>(tokenizer_->Encode(text, o).size());
}

void EngineLanguageModel::Pause() {
  std::lock_guard<std::mutex> lock(mu_);
  paused_ = true;
}

void EngineLanguageModel::Resume() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    paused_ = false;
  }
  queue_cv_.notify_all();
}

int EngineLanguageModel::queue_depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(queue_.size());
}

EngineLanguageModel::Counters EngineLanguageModel::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

Result<std::vector<int32_t>> EngineLanguageModel::EncodeMessages(
    const std::vector<Message>& messages, bool add_generation_prompt) const {
  std::vector<engine::ChatMessage> chat;
  chat.reserve(messages.size());
  for (const Message& m : messages) chat.push_back({m.role, m.content});
  ASSIGN_OR_RETURN(std::vector<engine::PromptSegment> segments,
                   template_->Render(chat, add_generation_prompt));
  return tokenizer_->EncodePrompt(segments, /*add_special=*/true);
}

Status EngineLanguageModel::Enqueue(const std::shared_ptr<Job>& job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return UnavailableError("the embedded language model is shutting down");
    if (job->kind == Job::Kind::kPrefetch) {
      // A caller still talking sends a growing transcript; each rendering closes the user's turn
      // with template markup, so the older one is not an exact prefix of the newer. A queued
      // prefetch that differs from this longer one only in its last kSupersedeTailTokens is the
      // same conversation, superseded. (Two callers whose prompts differ only that late lose one
      // prefetch: a hint, never a wrong answer.)
      constexpr size_t kSupersedeTailTokens = 32;
      std::erase_if(queue_, [&](const std::shared_ptr<Job>& q) {
        if (q->kind != Job::Kind::kPrefetch || q->prompt.size() > job->prompt.size()) return false;
        const size_t lcp = static_cast<size_t>(
            std::mismatch(q->prompt.begin(), q->prompt.end(), job->prompt.begin()).first -
            q->prompt.begin());
        return q->prompt.size() - lcp <= kSupersedeTailTokens;
      });
    }
    if (queue_.size() >= static_cast<size_t>(config_.max_queue)) {
      return ResourceExhaustedError("the embedded language model has " +
                                    std::to_string(queue_.size()) +
                                    " requests waiting (llm.engine.max_queue); try again later");
    }
    job->arrival = next_arrival_++;
    job->enqueued = std::chrono::steady_clock::now();
    if (job->kind == Job::Kind::kGenerate) ++counters_.requests;
    queue_.push_back(job);
  }
  queue_cv_.notify_one();
  return Status::Ok();
}

Result<GenerateStats> EngineLanguageModel::Generate(const GenerateRequest& request,
                                                    const TextCallback& on_text) {
  const MonoTime t0 = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(ValidateRequest(request, engine_->max_seq_len()));
  RETURN_IF_ERROR(engine::StopMatcher::Create(request.stop).status());
  ASSIGN_OR_RETURN(std::vector<int32_t> prompt, EncodeMessages(request.messages, true));
  if (prompt.empty()) return InvalidArgumentError("the messages encode to no tokens");
  if (prompt.size() >= static_cast<size_t>(engine_->max_seq_len())) {
    return InvalidArgumentError("the prompt has " + std::to_string(prompt.size()) +
                                " tokens; llm.engine.max_seq_len allows " +
                                std::to_string(engine_->max_seq_len()) +
                                " for prompt and answer together: shorten the history");
  }
  auto job = std::make_shared<Job>();
  job->kind = Job::Kind::kGenerate;
  job->priority = request.priority;
  job->deadline = request.deadline;
  job->prompt = std::move(prompt);
  job->sampling.temperature = request.temperature;
  job->sampling.top_k = request.top_k;
  job->sampling.top_p = request.top_p;
  job->sampling.repetition_penalty = request.repetition_penalty;
  job->sampling.seed = request.seed;
  job->sampling.max_tokens = request.max_tokens;
  job->stops = request.stop;
  job->cancel = request.cancel;
  RETURN_IF_ERROR(Enqueue(job));
  Metrics::Get().requests.Increment();

  bool first = true;
  bool callback_stopped = false;
  double first_token_ms = 0;
  std::vector<std::string> batch;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    job->cv.wait_for(lock, std::chrono::milliseconds(kPollMs), [&] {
      return !job->deltas.empty() || job->state == Job::State::kDone;
    });
    if (job->state == Job::State::kQueued && IsCancelled(request.cancel)) {
      std::erase(queue_, job);
      GenerateStats stats;
      stats.finish = FinishReason::kCancelled;
      stats.prompt_tokens = static_cast<int>(job->prompt.size());
      stats.queue_ms = stats.total_ms = MsBetween(t0, std::chrono::steady_clock::now());
      return stats;
    }
    batch.swap(job->deltas);
    const bool done = job->state == Job::State::kDone;
    if (!batch.empty() && !callback_stopped) {
      lock.unlock();
      for (const std::string& d : batch) {
        if (first) {
          first = false;
          first_token_ms = MsBetween(t0, std::chrono::steady_clock::now());
        }
        if (on_text && !on_text(d)) {
          callback_stopped = true;
          job->stop_requested.store(true, std::memory_order_relaxed);
          break;
        }
      }
      lock.lock();
    }
    batch.clear();
    // Deltas delivered after `done` was read are picked up by the next round.
    if (done && job->deltas.empty()) break;
  }
  if (!job->error.ok()) return job->error;
  GenerateStats stats = job->stats;
  lock.unlock();
  if (callback_stopped && stats.finish != FinishReason::kCancelled) {
    stats.finish = FinishReason::kCallback;
  }
  stats.first_token_ms = first_token_ms;
  stats.total_ms = MsBetween(t0, std::chrono::steady_clock::now());
  if (!first) Metrics::Get().first_token_s.Observe(first_token_ms / 1000.0);
  return stats;
}

Status EngineLanguageModel::Prefetch(const std::vector<Message>& messages) {
  if (messages.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(std::vector<int32_t> prompt, EncodeMessages(messages, false));
  if (prompt.empty()) return Status::Ok();
  if (prompt.size() >= static_cast<size_t>(engine_->max_seq_len())) {
    return InvalidArgumentError("prefetch of " + std::to_string(prompt.size()) +
                                " tokens exceeds llm.engine.max_seq_len");
  }
  auto job = std::make_shared<Job>();
  job->kind = Job::Kind::kPrefetch;
  job->priority = kPrefetchPriority;
  job->prompt = std::move(prompt);
  return Enqueue(job);
}

void EngineLanguageModel::Deliver(Job& job, std::string text) {
  if (text.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job.deltas.push_back(std::move(text));
  }
  job.cv.notify_one();
}

void EngineLanguageModel::SchedulerLoop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      queue_cv_.wait(lock, [&] { return stopping_ || (!paused_ && !queue_.empty()); });
      if (stopping_) {
        for (const std::shared_ptr<Job>& q : queue_) {
          q->error = UnavailableError("the embedded language model is shutting down");
          q->state = Job::State::kDone;
          q->cv.notify_one();
        }
        queue_.clear();
        break;
      }
      auto best = std::min_element(queue_.begin(), queue_.end(),
                                   [](const auto& a, const auto& b) { return Before(*a, *b); });
      job = *best;
      queue_.erase(best);
      job->state = Job::State::kRunning;
      job->stats.queue_ms = MsBetween(job->enqueued, std::chrono::steady_clock::now());
    }
    if (job->kind == Job::Kind::kGenerate) {
      Metrics::Get().queue_s.Observe(job->stats.queue_ms / 1000.0);
      RunGenerate(*job);
    } else {
      RunPrefetch(*job);
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      job->state = Job::State::kDone;
    }
    job->cv.notify_one();
  }
}

void EngineLanguageModel::MakeRoom(int seq, int n_tokens) {
  const uint64_t budget = config_.engine.kv_cache_bytes;
  if (budget == 0) return;
  const engine::KvCache& kv = engine_->kv_cache();
  const int64_t bt = kv.block_tokens();
  const int64_t tokens = std::min<int64_t>(n_tokens, engine_->max_seq_len());
  const int64_t blocks_needed = (tokens + bt - 1) / bt - (kv.Capacity(seq) + bt - 1) / bt;
  if (blocks_needed <= 0) return;
  const uint64_t need = static_cast<uint64_t>(blocks_needed * bt * kv.layout().row_bytes() * 2 *
                                              kv.layout().n_layer);
  // The KV budget (engine.kv_cache_bytes) held by idle cached conversations is given back, least
  // recently used first: a waiting caller matters more than keeping them warm.
  while (kv.bytes_in_use() + need > budget) {
    auto lru = cached_.end();
    for (auto it = cached_.begin(); it != cached_.end(); ++it) {
      if (it->seq != seq && (lru == cached_.end() || it->last_used < lru->last_used)) lru = it;
    }
    if (lru == cached_.end()) return;  // nothing left to free: the engine will say so
    engine_->RemoveSequence(lru->seq);
    cached_.erase(lru);
  }
}

void EngineLanguageModel::Touch(int seq) {
  for (CachedSequence& c : cached_) {
    if (c.seq == seq) c.last_used = ++tick_;
  }
}

Result<int> EngineLanguageModel::AcquireSequence(const std::vector<int32_t>& prompt,
                                                 bool keep_last, int* reused) {
  const size_t limit = keep_last ? prompt.size() - 1 : prompt.size();
  int best = -1;
  size_t best_lcp = 0;
  uint64_t best_used = 0;
  for (size_t i = 0; i < cached_.size(); ++i) {
    std::span<const int32_t> held = engine_->SequenceTokens(cached_[i].seq);
    const size_t n = std::min(limit, held.size());
    size_t lcp = 0;
    while (lcp < n && held[lcp] == prompt[lcp]) ++lcp;
    if (lcp > best_lcp || (lcp == best_lcp && lcp > 0 && cached_[i].last_used > best_used)) {
      best = static_cast<int>(i);
      best_lcp = lcp;
      best_used = cached_[i].last_used;
    }
  }
  const size_t capacity = static_cast<size_t>(config_.prefix_cache_sequences);
  if (best >= 0) {
    const int seq = cached_[static_cast<size_t>(best)].seq;
    const size_t held = static_cast<size_t>(engine_->SequenceLength(seq));
    const size_t discarded = held - best_lcp;
    // Cutting another conversation's history down to a shared system prompt saves less than it
    // costs that conversation's next turn; take a free slot instead when there is one.
    if (discarded == 0 || cached_.size() >= capacity || best_lcp >= discarded) {
      RETURN_IF_ERROR(engine_->TruncateSequence(seq, static_cast<int>(best_lcp)));
      Touch(seq);
      *reused = static_cast<int>(best_lcp);
      return seq;
    }
  }
  *reused = 0;
  if (cached_.size() >= capacity) {
    auto lru = std::min_element(cached_.begin(), cached_.end(),
                                [](const auto& a, const auto& b) { return a.last_used < b.last_used; });
    engine_->RemoveSequence(lru->seq);
    cached_.erase(lru);
  }
  ASSIGN_OR_RETURN(int seq, engine_->CreateSequence());
  cached_.push_back({seq, ++tick_});
  return seq;
}

template <class StopFn>
Status EngineLanguageModel::FeedRange(int seq, const std::vector<int32_t>& prompt, size_t from,
                                      size_t to, StopFn stop, size_t* fed) {
  *fed = 0;
  const size_t pass = static_cast<size_t>(config_.engine.max_batch_tokens);
  for (size_t begin = from; begin < to; begin += pass) {
    if (stop()) break;
    const size_t end = std::min(to, begin + pass);
    auto logits = engine_->Feed(seq, std::span<const int32_t>(prompt.data() + begin, end - begin));
    if (!logits.ok()) return logits.status();
    *fed += end - begin;
  }
  return Status::Ok();
}

void EngineLanguageModel::RunGenerate(Job& job) {
  GenerateStats& stats = job.stats;
  stats.prompt_tokens = static_cast<int>(job.prompt.size());
  auto stop_now = [&] {
    return IsCancelled(job.cancel) || job.stop_requested.load(std::memory_order_relaxed);
  };
  auto finish_early = [&] {
    stats.finish = IsCancelled(job.cancel) ? FinishReason::kCancelled : FinishReason::kCallback;
  };
  if (stop_now()) return finish_early();

  int reused = 0;
  Result<int> seq = AcquireSequence(job.prompt, /*keep_last=*/true, &reused);
  if (!seq.ok()) {
    job.error = seq.status();
    return;
  }
  stats.cached_prompt_tokens = reused;
  const size_t last = job.prompt.size() - 1;
  size_t fed = 0;
  MakeRoom(*seq, static_cast<int>(job.prompt.size()) + job.sampling.max_tokens);
  Status s = FeedRange(*seq, job.prompt, static_cast<size_t>(reused), last, stop_now, &fed);
  if (!s.ok()) {
    job.error = s.WithContext("prompt processing");
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    counters_.cached_tokens += static_cast<uint64_t>(reused);
    counters_.prefilled_tokens += fed + 1;
  }
  Metrics::Get().prompt_tokens.Increment(job.prompt.size());
  Metrics::Get().cached_tokens.Increment(static_cast<uint64_t>(reused));
  if (static_cast<size_t>(reused) + fed < last) return finish_early();

  // Validated by Generate() before queueing.
  auto matcher = engine::StopMatcher::Create(job.stops);
  if (!matcher.ok()) {
    job.error = matcher.status();
    return;
  }
  engine::DecodeOptions dopt;
  dopt.strip_leading_space = true;  // the answer's first word, not a continuation of the prompt
  engine::StreamingDetokenizer detok(*tokenizer_, dopt);
  std::string piece;
  bool stop_string = false;
  bool stopped_early = false;
  auto result = engine_->Generate(
      *seq, std::span<const int32_t>(&job.prompt[last], 1), job.sampling,
      [&](int32_t id) {
        piece.clear();
        detok.Push(id, &piece);
        engine::StopMatcher::Output o = matcher->Push(piece);
        Deliver(job, std::move(o.text));
        if (o.stopped) {
          stop_string = true;
          return false;
        }
        if (stop_now()) {
          stopped_early = true;
          return false;
        }
        return true;
      });
  if (!result.ok()) {
    job.error = result.status().WithContext("generation");
    return;
  }
  stats.generated_tokens = result->timings.generated_tokens;
  Metrics::Get().generated_tokens.Increment(static_cast<uint64_t>(stats.generated_tokens));
  if (stop_string) {
    stats.finish = FinishReason::kStop;
    return;
  }
  if (stopped_early) return finish_early();
  // Natural end: release what the detokenizer and the stop matcher held back.
  engine::StopMatcher::Output o = matcher->Push(detok.Finish());
  Deliver(job, std::move(o.text));
  if (!o.stopped) Deliver(job, matcher->Flush());
  switch (result->finish) {
    case engine::FinishReason::kLength: stats.finish = FinishReason::kLength; break;
    case engine::FinishReason::kContextFull: stats.finish = FinishReason::kContextFull; break;
    case engine::FinishReason::kCancelled: stats.finish = FinishReason::kCancelled; break;
    case engine::FinishReason::kCallback: stats.finish = FinishReason::kCallback; break;
    case engine::FinishReason::kStop: stats.finish = FinishReason::kStop; break;
  }
  if (o.stopped) stats.finish = FinishReason::kStop;
}

void EngineLanguageModel::RunPrefetch(Job& job) {
  int reused = 0;
  Result<int> seq = AcquireSequence(job.prompt, /*keep_last=*/false, &reused);
  if (!seq.ok()) {
    HLOG_DEBUG("llm: prefetch skipped: {}", seq.status().ToString());
    return;
  }
  // A waiting caller goes first: stop between passes (what was fed stays useful).
  auto caller_waiting = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    return stopping_ || std::any_of(queue_.begin(), queue_.end(), [](const auto& q) {
             return q->priority < kPrefetchPriority;
           });
  };
  size_t fed = 0;
  Status s = FeedRange(*seq, job.prompt, static_cast<size_t>(reused), job.prompt.size(),
                       caller_waiting, &fed);
  if (!s.ok()) HLOG_DEBUG("llm: prefetch stopped: {}", s.ToString());
  std::lock_guard<std::mutex> lock(mu_);
  if (fed > 0) ++counters_.prefetches_run;
  counters_.prefilled_tokens += fed;
}

}  // namespace hotline::llm
