#include "llm/engine/engine_language_model.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <optional>

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
  MonoTime t0{};  // Generate/Prefetch entry
  std::vector<int32_t> prompt;
  const CancelToken* cancel = nullptr;
  // The caller's on_text returned false: the scheduler stops at the next token.
  std::atomic<bool> stop_requested{false};

  // Scheduler thread only (token and done callbacks).
  std::unique_ptr<engine::StreamingDetokenizer> detok;
  std::optional<engine::StopMatcher> matcher;
  std::string piece;
  bool stop_string = false;

  // Under the model's mutex.
  std::shared_ptr<engine::RequestHandle> handle;
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

Status ValidateRequest(const GenerateRequest& r, int max_seq_len) {
  if (r.messages.empty() && r.prompt.empty()) {
    return InvalidArgumentError("a generate request needs at least one message or a prompt");
  }
  if (!r.messages.empty() && !r.prompt.empty()) {
    return InvalidArgumentError("a generate request takes messages or a raw prompt, not both");
  }
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

}  // namespace

// The model's series in its registry (label backend="engine").
struct EngineLanguageModel::Metrics {
  explicit Metrics(MetricsRegistry& r)
      : requests(r.GetCounter("hotline_llm_requests_total", "LLM requests", kLabels)),
        prompt_tokens(r.GetCounter("hotline_llm_prompt_tokens_total",
                                   "Prompt tokens of LLM requests", kLabels)),
        cached_tokens(r.GetCounter("hotline_llm_cached_prompt_tokens_total",
                                   "Prompt tokens served from the prefix cache", kLabels)),
        generated_tokens(
            r.GetCounter("hotline_llm_generated_tokens_total", "Tokens generated", kLabels)),
        first_token_s(r.GetHistogram("hotline_llm_first_token_seconds",
                                     "Request to first text delta",
                                     {0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2}, kLabels)),
        queue_s(r.GetHistogram("hotline_llm_queue_seconds", "Time a request waited for the engine",
                               {0.001, 0.01, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2}, kLabels)),
        dropped_messages(r.GetCounter(
            "hotline_llm_dropped_messages_total",
            "Older conversation messages left out to fit llm.engine.max_seq_len", kLabels)) {}

  static inline const Labels kLabels = {{"backend", "engine"}};
  Counter& requests;
  Counter& prompt_tokens;
  Counter& cached_tokens;
  Counter& generated_tokens;
  Histogram& first_token_s;
  Histogram& queue_s;
  Counter& dropped_messages;
};

Result<std::unique_ptr<EngineLanguageModel>> EngineLanguageModel::Create(
    const LlmEngineConfig& config, MetricsRegistry* metrics) {
  RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<EngineLanguageModel> m(new EngineLanguageModel());
  m->config_ = config;
  m->metrics_ =
      std::make_unique<Metrics>(metrics != nullptr ? *metrics : MetricsRegistry::Global());
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
  engine::BatchSchedulerConfig bc = engine::BatchSchedulerConfig::FromEngine(config.engine);
  // The model's own queue bound (max_queue) is enforced before submitting.
  bc.max_queue = std::max(config.max_queue * 2, 16);
  bc.defer_horizon_ms = config.defer_horizon_ms;
  ASSIGN_OR_RETURN(m->batch_, engine::BatchScheduler::Create(*m->engine_, bc, metrics));
  HLOG_INFO("llm: engine backend on {} (chat format {}, batch {}, queue {})",
            config.engine.model_path, engine::ChatFormatName(m->template_->format()),
            config.engine.max_batch_size, config.max_queue);
  return m;
}

EngineLanguageModel::~EngineLanguageModel() {
  // Fails what is still queued or running (Unavailable) and joins the scheduler thread.
  batch_.reset();
}

std::string EngineLanguageModel::name() const { return "engine:" + config_.engine.model_path; }

int EngineLanguageModel::CountTokens(std::string_view text) const {
  engine::EncodeOptions o;
  o.add_special = false;
  return static_cast<int>(tokenizer_->Encode(text, o).size());
}

void EngineLanguageModel::Pause() { batch_->Pause(); }

void EngineLanguageModel::Resume() { batch_->Resume(); }

int EngineLanguageModel::queue_depth() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(queued_.size());
}

EngineLanguageModel::Counters EngineLanguageModel::counters() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counters_;
}

Result<engine::ContextFit> EngineLanguageModel::FitMessages(
    const std::vector<Message>& messages, bool add_generation_prompt,
    const engine::ContextLimits& limits) const {
  std::vector<engine::ChatMessage> chat;
  chat.reserve(messages.size());
  for (const Message& m : messages) chat.push_back({m.role, m.content});
  ASSIGN_OR_RETURN(engine::ContextFit fit, engine::FitChatToContext(*template_, *tokenizer_, chat,
                                                                    add_generation_prompt, limits));
  return fit;
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

Status EngineLanguageModel::Enqueue(const std::shared_ptr<Job>& job, engine::BatchRequest request) {
  std::lock_guard<std::mutex> lock(mu_);
  if (job->kind == Job::Kind::kPrefetch) {
    // A caller still talking sends a growing transcript; each rendering closes the user's turn
    // with template markup, so the older one is not an exact prefix of the newer. A queued
    // prefetch that differs from this longer one only in its last kSupersedeTailTokens is the
    // same conversation, superseded. (Two callers whose prompts differ only that late lose one
    // prefetch: a hint, never a wrong answer.)
    constexpr size_t kSupersedeTailTokens = 32;
    std::erase_if(queued_, [&](const std::shared_ptr<Job>& q) {
      if (q->kind != Job::Kind::kPrefetch || q->prompt.size() > job->prompt.size()) return false;
      const size_t lcp = static_cast<size_t>(
          std::mismatch(q->prompt.begin(), q->prompt.end(), job->prompt.begin()).first -
          q->prompt.begin());
      if (q->prompt.size() - lcp > kSupersedeTailTokens) return false;
      q->handle->Cancel();
      q->state = Job::State::kDone;
      return true;
    });
  }
  if (queued_.size() >= static_cast<size_t>(config_.max_queue)) {
    return ResourceExhaustedError("the embedded language model has " +
                                  std::to_string(queued_.size()) +
                                  " requests waiting (llm.engine.max_queue); try again later");
  }
  // Callbacks capture the job (not `this` state beyond the model, which outlives the scheduler).
  std::weak_ptr<Job> weak = job;
  request.on_admit = [this, weak] {
    auto j = weak.lock();
    if (!j) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (j->state != Job::State::kQueued) return;
    j->state = Job::State::kRunning;
    std::erase(queued_, j);
    j->stats.queue_ms = MsBetween(j->t0, std::chrono::steady_clock::now());
    if (j->kind == Job::Kind::kGenerate) metrics_->queue_s.Observe(j->stats.queue_ms / 1000.0);
  };
  request.on_done = [this, job](const engine::BatchResult& r) { OnDone(job, r); };
  ASSIGN_OR_RETURN(job->handle, batch_->Submit(std::move(request)));
  if (job->kind == Job::Kind::kGenerate) ++counters_.requests;
  queued_.push_back(job);
  return Status::Ok();
}

void EngineLanguageModel::Deliver(Job& job, std::string text) {
  if (text.empty()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    job.deltas.push_back(std::move(text));
  }
  job.cv.notify_one();
}

void EngineLanguageModel::OnDone(const std::shared_ptr<Job>& job, const engine::BatchResult& r) {
  GenerateStats stats;
  stats.prompt_tokens = static_cast<int>(job->prompt.size());
  stats.cached_prompt_tokens = r.timings.cached_prompt_tokens;
  stats.generated_tokens = r.timings.generated_tokens;
  const bool cancelled = IsCancelled(job->cancel) || r.finish == engine::FinishReason::kCancelled;
  switch (r.finish) {
    case engine::FinishReason::kLength: stats.finish = FinishReason::kLength; break;
    case engine::FinishReason::kContextFull: stats.finish = FinishReason::kContextFull; break;
    case engine::FinishReason::kStop: stats.finish = FinishReason::kStop; break;
    case engine::FinishReason::kCancelled: stats.finish = FinishReason::kCancelled; break;
    case engine::FinishReason::kCallback:
      stats.finish = job->stop_string ? FinishReason::kStop
                     : cancelled      ? FinishReason::kCancelled
                                      : FinishReason::kCallback;
      break;
  }
  if (job->kind == Job::Kind::kGenerate && r.status.ok() &&
      (r.finish == engine::FinishReason::kLength || r.finish == engine::FinishReason::kStop ||
       r.finish == engine::FinishReason::kContextFull)) {
    // Natural end: release what the detokenizer and the stop matcher held back.
    engine::StopMatcher::Output o = job->matcher->Push(job->detok->Finish());
    Deliver(*job, std::move(o.text));
    if (!o.stopped) Deliver(*job, job->matcher->Flush());
    if (o.stopped) stats.finish = FinishReason::kStop;
  }
  const int computed = std::max(0, stats.prompt_tokens - stats.cached_prompt_tokens);
  const bool ran = r.status.ok() && r.finish != engine::FinishReason::kCancelled;
  // Counted before the job is done, so a request's tokens are in the metrics once Generate
  // returns.
  if (job->kind == Job::Kind::kGenerate && ran) {
    metrics_->prompt_tokens.Increment(job->prompt.size());
    metrics_->cached_tokens.Increment(static_cast<uint64_t>(stats.cached_prompt_tokens));
    metrics_->generated_tokens.Increment(static_cast<uint64_t>(stats.generated_tokens));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (job->kind == Job::Kind::kGenerate) {
      if (ran || stats.generated_tokens > 0) {
        counters_.cached_tokens += static_cast<uint64_t>(stats.cached_prompt_tokens);
        counters_.prefilled_tokens += static_cast<uint64_t>(computed);
      }
    } else if (ran && computed > 0) {
      ++counters_.prefetches_run;
      counters_.prefilled_tokens += static_cast<uint64_t>(computed);
    }
    if (!r.status.ok()) job->error = r.status;
    stats.queue_ms = job->stats.queue_ms;
    job->stats = stats;
    job->state = Job::State::kDone;
    std::erase(queued_, job);
  }
  job->cv.notify_one();
}

Result<std::vector<int32_t>> EngineLanguageModel::PromptTokens(const GenerateRequest& request) {
  const engine::ContextLimits limits{engine_->max_seq_len(), request.max_tokens,
                                     config_.min_reply_tokens};
  if (!request.prompt.empty()) {  // raw completion: never cut
    engine::EncodeOptions o;      // BOS as the vocabulary asks; control tokens stay plain text
    std::vector<int32_t> prompt = tokenizer_->Encode(request.prompt, o);
    if (prompt.empty()) return InvalidArgumentError("the prompt encodes to no tokens");
    RETURN_IF_ERROR(engine::CheckPromptFits(static_cast<int>(prompt.size()), limits));
    return prompt;
  }
  ASSIGN_OR_RETURN(engine::ContextFit fit, FitMessages(request.messages, true, limits));
  if (fit.dropped_messages > 0) {
    metrics_->dropped_messages.Increment(static_cast<uint64_t>(fit.dropped_messages));
  }
  return std::move(fit.tokens);
}

engine::BatchRequest EngineLanguageModel::SchedulerRequest(const GenerateRequest& request, Job* j,
                                                           const GenerationSchedule::Value& hints) {
  engine::BatchRequest br;
  br.prompt = j->prompt;
  br.sampling.temperature = request.temperature;
  br.sampling.top_k = request.top_k;
  br.sampling.top_p = request.top_p;
  br.sampling.repetition_penalty = request.repetition_penalty;
  br.sampling.seed = request.seed;
  br.sampling.max_tokens = request.max_tokens;
  br.priority = hints.priority;
  if (hints.deadline != MonoTime{}) {
    br.deadline_hint_ms = std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(hints.deadline - j->t0).count());
  }
  // The scheduler's request (holding this callback) ends before the job.
  br.on_token = [this, j](int32_t id) {
    if (IsCancelled(j->cancel) || j->stop_requested.load(std::memory_order_relaxed)) return false;
    j->piece.clear();
    j->detok->Push(id, &j->piece);
    engine::StopMatcher::Output o = j->matcher->Push(j->piece);
    Deliver(*j, std::move(o.text));
    if (o.stopped) {
      j->stop_string = true;
      return false;
    }
    return true;
  };
  return br;
}

Result<GenerateStats> EngineLanguageModel::AwaitText(const std::shared_ptr<Job>& job,
                                                     const GenerateRequest& request,
                                                     const TextCallback& on_text,
                                                     GenerationSchedule::Value hints) {
  const MonoTime t0 = job->t0;
  bool first = true;
  bool callback_stopped = false;
  double first_token_ms = 0;
  std::vector<std::string> batch;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    job->cv.wait_for(lock, std::chrono::milliseconds(kPollMs), [&] {
      return !job->deltas.empty() || job->state == Job::State::kDone;
    });
    if (request.schedule != nullptr && job->state != Job::State::kDone) {
      // What the caller hears changed (a sentence started playing, or its audio ran out).
      const GenerationSchedule::Value now = request.schedule->Get();
      if (now.version != hints.version) {
        hints = now;
        job->handle->Reschedule(now.priority,
                                now.deadline == MonoTime{} ? MonoTime::max() : now.deadline);
      }
    }
    if (IsCancelled(request.cancel) && job->state != Job::State::kDone) {
      job->handle->Cancel();  // the scheduler drops it (and frees its blocks) at its next step
      if (job->state == Job::State::kQueued) {
        std::erase(queued_, job);
        job->state = Job::State::kDone;
        GenerateStats stats;
        stats.finish = FinishReason::kCancelled;
        stats.prompt_tokens = static_cast<int>(job->prompt.size());
        stats.queue_ms = stats.total_ms = MsBetween(t0, std::chrono::steady_clock::now());
        return stats;
      }
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
  if (!job->error.ok()) return job->error.WithContext("generation");
  GenerateStats stats = job->stats;
  lock.unlock();
  if (callback_stopped && stats.finish != FinishReason::kCancelled &&
      stats.finish != FinishReason::kStop) {
    stats.finish = FinishReason::kCallback;
  }
  stats.first_token_ms = first_token_ms;
  stats.total_ms = MsBetween(t0, std::chrono::steady_clock::now());
  if (!first) metrics_->first_token_s.Observe(first_token_ms / 1000.0);
  return stats;
}

Result<GenerateStats> EngineLanguageModel::Generate(const GenerateRequest& request,
                                                    const TextCallback& on_text) {
  const MonoTime t0 = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(ValidateRequest(request, engine_->max_seq_len()));
  ASSIGN_OR_RETURN(engine::StopMatcher matcher, engine::StopMatcher::Create(request.stop));
  ASSIGN_OR_RETURN(std::vector<int32_t> prompt, PromptTokens(request));
  if (IsCancelled(request.cancel)) {
    GenerateStats stats;
    stats.finish = FinishReason::kCancelled;
    stats.prompt_tokens = static_cast<int>(prompt.size());
    stats.total_ms = MsBetween(t0, std::chrono::steady_clock::now());
    return stats;
  }
  // The scheduling hints as sent with the request (read once: the job's queue priority and the
  // scheduler's agree); AwaitText passes on later changes.
  const GenerationSchedule::Value hints =
      request.schedule != nullptr
          ? request.schedule->Get()
          : GenerationSchedule::Value{request.priority, request.deadline, 0};
  auto job = std::make_shared<Job>();
  job->kind = Job::Kind::kGenerate;
  job->priority = hints.priority;
  job->t0 = t0;
  job->prompt = std::move(prompt);
  job->cancel = request.cancel;
  job->matcher.emplace(std::move(matcher));
  engine::DecodeOptions dopt;
  dopt.strip_leading_space = true;  // the answer's first word, not a continuation of the prompt
  job->detok = std::make_unique<engine::StreamingDetokenizer>(*tokenizer_, dopt);

  engine::BatchRequest br = SchedulerRequest(request, job.get(), hints);
  RETURN_IF_ERROR(Enqueue(job, std::move(br)));
  metrics_->requests.Increment();
  return AwaitText(job, request, on_text, hints);
}

Status EngineLanguageModel::Prefetch(const std::vector<Message>& messages, int max_tokens) {
  if (messages.empty()) return Status::Ok();
  // The same policy as Generate with the answer room the coming request will ask for, so a long
  // conversation prefetches exactly the turns that request will keep (unknown: the least room).
  const int answer = max_tokens > 0 ? std::min(max_tokens, engine_->max_seq_len())
                                    : config_.min_reply_tokens;
  const engine::ContextLimits limits{engine_->max_seq_len(), answer, config_.min_reply_tokens};
  ASSIGN_OR_RETURN(engine::ContextFit fit, FitMessages(messages, false, limits));
  std::vector<int32_t> prompt = std::move(fit.tokens);
  auto job = std::make_shared<Job>();
  job->kind = Job::Kind::kPrefetch;
  job->priority = kPrefetchPriority;
  job->t0 = std::chrono::steady_clock::now();
  job->prompt = prompt;
  engine::BatchRequest br;
  br.prompt = std::move(prompt);
  br.priority = kPrefetchPriority;
  br.prefill_only = true;
  return Enqueue(job, std::move(br));
}

}  // namespace hotline::llm
