#include "llm/openai/openai_language_model.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>
#include <vector>

#include "common/log.h"
#include "common/metrics.h"
#include "engine/stop_matcher.h"
#include "llm/openai/circuit_breaker.h"
#include "net/http_client.h"
#include "net/sse_parser.h"
#include "net/url.h"

namespace hotline::llm {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

int64_t NowNs() { return Clock::now().time_since_epoch().count(); }
int64_t NsAfter(int ms) { return NowNs() + int64_t{ms} * 1000000; }

// Printable excerpt of untrusted server text for an error message.
std::string Excerpt(std::string_view s, size_t max_bytes = 200) {
  std::string out;
  for (char c : s.substr(0, max_bytes)) {
    const unsigned char u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7f) ? ' ' : c;
  }
  if (s.size() > max_bytes) out += "...";
  return out;
}

// The server's error message: {"error": {"message": ...}} (OpenAI, vLLM), {"error": "..."}, or
// the start of the body.
std::string ServerMessage(std::string_view body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("error")) {
    const nlohmann::json& e = j["error"];
    if (e.is_string()) return Excerpt(e.get<std::string>());
    if (e.is_object() && e.contains("message") && e["message"].is_string()) {
      return Excerpt(e["message"].get<std::string>());
    }
  }
  return Excerpt(body);
}

Result<std::optional<int>> OptionalCount(const nlohmann::json& obj, const char* key,
                                         const char* where) {
  if (!obj.contains(key) || obj[key].is_null()) return std::optional<int>();
  const nlohmann::json& v = obj[key];
  if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > (int64_t{1} << 30)) {
    return DataLossError(std::string(where) + "." + key + " is not a token count");
  }
  return std::optional<int>(static_cast<int>(v.get<int64_t>()));
}

// A request this client can send: messages (no raw prompt), a token budget and sane sampling.
Status CheckRequest(const GenerateRequest& request) {
  if (!request.prompt.empty()) {
    return UnimplementedError(
        "raw completion prompts are served by the engine backend only; send messages");
  }
  if (request.messages.empty()) {
    return InvalidArgumentError("a generate request needs at least one message");
  }
  if (request.max_tokens < 1) return InvalidArgumentError("max_tokens must be >= 1");
  if (!std::isfinite(request.temperature) || request.temperature < 0) {
    return InvalidArgumentError("temperature must be >= 0");
  }
  if (!(request.top_p > 0 && request.top_p <= 1)) {
    return InvalidArgumentError("top_p must be in (0, 1]");
  }
  return Status::Ok();
}

net::HttpClientConfig ClientConfig(const OpenAiLlmConfig& config) {
  net::HttpClientConfig hc;
  hc.connect_timeout_ms = config.connect_timeout_ms;
  // The watchdog enforces first-token and idle limits; the client's own idle limit is a backstop.
  hc.idle_timeout_ms = std::max(config.first_token_timeout_ms, config.idle_timeout_ms) + 1000;
  hc.total_timeout_ms = 3600 * 1000;
  hc.max_response_bytes = config.max_response_bytes;
  hc.ca_file = config.ca_file;
  return hc;
}

// A 429's Retry-After in whole seconds, capped at 5 s; 0 when absent or not a number.
int RetryAfterMs(const std::string& header) {
  char* end = nullptr;
  const long s = std::strtol(header.c_str(), &end, 10);
  if (header.empty() || end == nullptr || *end != '\0' || s <= 0) return 0;
  return static_cast<int>(std::min<long>(s, 5) * 1000);
}

// The error for an HTTP status other than 200, with what to check; 429 and 5xx are retryable.
Status HttpFailure(const OpenAiLlmConfig& config, const std::string& endpoint, int http_status,
                   const std::string& error_body, bool* retryable) {
  const std::string msg =
      endpoint + " answered HTTP " + std::to_string(http_status) + ": " + ServerMessage(error_body);
  *retryable = http_status == 429 || http_status >= 500;
  if (http_status == 429) return ResourceExhaustedError(msg);
  if (http_status >= 500) return UnavailableError(msg);
  if (http_status == 401 || http_status == 403) {
    return PermissionDeniedError(
        msg + " (check the key in $" +
        (config.api_key_env.empty() ? std::string("<api_key_env unset>") : config.api_key_env) +
        ")");
  }
  if (http_status == 404) {
    return NotFoundError(msg + " (check llm.openai.base_url and llm.openai.model)");
  }
  if (http_status == 400 || http_status == 422) return InvalidArgumentError(msg);
  return UnavailableError(msg);
}

void SleepUnlessCancelled(int delay_ms, const CancelToken* cancel) {
  const auto wake = Clock::now() + std::chrono::milliseconds(delay_ms);
  while (Clock::now() < wake && !IsCancelled(cancel)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

Result<ChatCompletionChunk> ParseChatCompletionChunk(std::string_view data) {
  nlohmann::json j = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return DataLossError("not valid JSON: '" + Excerpt(data, 80) + "'");
  if (!j.is_object()) return DataLossError("not a JSON object: '" + Excerpt(data, 80) + "'");
  if (j.contains("error") && !j["error"].is_null()) {
    return UnavailableError("the server reported an error: " + ServerMessage(data));
  }
  ChatCompletionChunk c;
  if (!j.contains("choices") || !j["choices"].is_array()) {
    return DataLossError("no \"choices\" array (is this an OpenAI-compatible chat completion?)");
  }
  const nlohmann::json& choices = j["choices"];
  if (!choices.empty()) {
    const nlohmann::json& choice = choices[0];
    if (!choice.is_object()) return DataLossError("choices[0] is not an object");
    if (choice.contains("delta") && !choice["delta"].is_null()) {
      const nlohmann::json& delta = choice["delta"];
      if (!delta.is_object()) return DataLossError("choices[0].delta is not an object");
      if (delta.contains("content") && !delta["content"].is_null()) {
        if (!delta["content"].is_string()) {
          return DataLossError("choices[0].delta.content is not a string");
        }
        c.content = delta["content"].get<std::string>();
      }
    }
    if (choice.contains("finish_reason") && !choice["finish_reason"].is_null()) {
      if (!choice["finish_reason"].is_string()) {
        return DataLossError("choices[0].finish_reason is not a string");
      }
      c.finish_reason = choice["finish_reason"].get<std::string>();
    }
  }
  if (j.contains("usage") && !j["usage"].is_null()) {
    const nlohmann::json& u = j["usage"];
    if (!u.is_object()) return DataLossError("usage is not an object");
    ASSIGN_OR_RETURN(c.prompt_tokens, OptionalCount(u, "prompt_tokens", "usage"));
    ASSIGN_OR_RETURN(c.completion_tokens, OptionalCount(u, "completion_tokens", "usage"));
    if (u.contains("prompt_tokens_details") && u["prompt_tokens_details"].is_object()) {
      ASSIGN_OR_RETURN(c.cached_tokens, OptionalCount(u["prompt_tokens_details"], "cached_tokens",
                                                      "usage.prompt_tokens_details"));
    }
  }
  return c;
}

std::string BuildChatCompletionBody(const std::string& model, const GenerateRequest& request) {
  nlohmann::json body;
  body["model"] = model;
  nlohmann::json messages = nlohmann::json::array();
  for (const Message& m : request.messages) {
    messages.push_back({{"role", m.role}, {"content", m.content}});
  }
  body["messages"] = std::move(messages);
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  body["max_tokens"] = request.max_tokens;
  body["temperature"] = request.temperature;
  body["top_p"] = request.top_p;
  if (request.seed != 0) body["seed"] = request.seed;
  if (request.top_k > 0) body["top_k"] = request.top_k;  // vLLM / llama.cpp extension
  if (request.repetition_penalty != 1.0f) body["repetition_penalty"] = request.repetition_penalty;
  if (!request.stop.empty()) body["stop"] = request.stop;
  // Invalid UTF-8 in a message becomes U+FFFD instead of an exception.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Raises a request's abort token when its caller cancels or its deadline passes. One thread per
// model; it sleeps while no request is in flight.
class OpenAiLanguageModel::Watchdog {
 public:
  enum Reason : int { kNone = 0, kUserCancel = 1, kTimeout = 2 };
  struct Watch {
    const CancelToken* user = nullptr;
    CancelToken abort;
    std::atomic<int64_t> deadline_ns{0};
    std::atomic<int> reason{kNone};
  };
  static constexpr int kPeriodMs = 2;

  Watchdog() : thread_([this] { Loop(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void Add(Watch* w) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      watches_.push_back(w);
    }
    cv_.notify_all();
  }
  void Remove(Watch* w) {
    std::lock_guard<std::mutex> lock(mu_);
    std::erase(watches_, w);
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (watches_.empty()) {
        cv_.wait(lock, [&] { return stop_ || !watches_.empty(); });
        continue;
      }
      const int64_t now = NowNs();
      for (Watch* w : watches_) {
        if (w->abort.cancelled()) continue;
        int none = kNone;
        if (IsCancelled(w->user)) {
          w->reason.compare_exchange_strong(none, kUserCancel);
          w->abort.Cancel();
        } else if (const int64_t d = w->deadline_ns.load(); d != 0 && now > d) {
          w->reason.compare_exchange_strong(none, kTimeout);
          w->abort.Cancel();
        }
      }
      cv_.wait_for(lock, std::chrono::milliseconds(kPeriodMs));
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Watch*> watches_;
  bool stop_ = false;
  std::thread thread_;
};

// The model's series in its registry (label backend="openai").
struct OpenAiLanguageModel::Metrics {
  explicit Metrics(MetricsRegistry& r)
      : requests(r.GetCounter("hotline_llm_requests_total", "LLM requests", kLabels)),
        retries(r.GetCounter("hotline_llm_retries_total",
                             "LLM requests retried before the first token", kLabels)),
        errors(r.GetCounter("hotline_llm_errors_total", "LLM requests failed", kLabels)),
        first_token_s(r.GetHistogram("hotline_llm_first_token_seconds",
                                     "Request to first text delta",
                                     {0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2}, kLabels)),
        breaker_open(r.GetGauge("hotline_llm_breaker_open",
                                "1 while the circuit breaker fails LLM requests at once", kLabels)),
        breaker_rejected(r.GetCounter("hotline_llm_breaker_rejected_total",
                                      "LLM requests failed at once by the open circuit breaker",
                                      kLabels)) {}

  static inline const Labels kLabels = {{"backend", "openai"}};
  Counter& requests;
  Counter& retries;
  Counter& errors;
  Histogram& first_token_s;
  Gauge& breaker_open;
  Counter& breaker_rejected;
};

Result<std::unique_ptr<OpenAiLanguageModel>> OpenAiLanguageModel::Create(
    const OpenAiLlmConfig& config, MetricsRegistry* metrics) {
  RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<OpenAiLanguageModel> m(new OpenAiLanguageModel());
  m->config_ = config;
  m->metrics_ =
      std::make_unique<Metrics>(metrics != nullptr ? *metrics : MetricsRegistry::Global());
  std::string base = config.base_url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.size() >= 3 && base.compare(base.size() - 3, 3, "/v1") == 0) base.resize(base.size() - 3);
  m->endpoint_ = net::JoinUrl(base, "/v1/chat/completions");
  RETURN_IF_ERROR(net::ParseHttpUrl(m->endpoint_).status().WithContext("llm.openai.base_url"));
  if (!config.api_key_env.empty()) {
    const char* key = std::getenv(config.api_key_env.c_str());
    if (key == nullptr || *key == '\0') {
      return FailedPreconditionError("llm.openai.api_key_env names " + config.api_key_env +
                                     ", which is not set in the environment");
    }
    m->auth_header_ = std::string("Bearer ") + key;
  }
  m->watchdog_ = std::make_unique<Watchdog>();
  if (config.breaker_failures > 0) {
    m->breaker_ = std::make_unique<CircuitBreaker>(
        config.breaker_failures, std::chrono::milliseconds(config.breaker_open_ms));
  }
  HLOG_INFO("llm: openai backend {} model {}{}", m->endpoint_, config.model,
            m->auth_header_.empty() ? "" : " (with API key)");
  return m;
}

OpenAiLanguageModel::~OpenAiLanguageModel() = default;

std::string OpenAiLanguageModel::name() const {
  return "openai:" + config_.base_url + "/" + config_.model;
}

int OpenAiLanguageModel::CountTokens(std::string_view text) const {
  return static_cast<int>((text.size() + 3) / 4);
}

namespace {

// The answer as it streams in, kept across attempts (an attempt is retried only before any text).
struct AnswerStream {
  AnswerStream(Clock::time_point start, engine::StopMatcher m, const TextCallback& cb,
               Histogram& first_token)
      : t0(start), matcher(std::move(m)), on_text(cb), first_token_s(first_token) {}

  // Passes `text` to the callback, timing the first; false when the callback asked to stop.
  bool Emit(std::string_view text) {
    if (text.empty()) return true;
    if (!any_delta) {
      any_delta = true;
      stats.first_token_ms = MsSince(t0);
      first_token_s.Observe(stats.first_token_ms / 1000.0);
    }
    return !on_text || on_text(text);
  }

  Clock::time_point t0;
  engine::StopMatcher matcher;
  const TextCallback& on_text;
  Histogram& first_token_s;
  GenerateStats stats;
  bool any_delta = false;  // some text reached the callback
  int content_chunks = 0;  // chunks with content (the token count when the server sends none)
};

// What one POST of a chat completion came to.
struct Attempt {
  Status status;  // the transport's, or the event stream's
  int http_status = 0;
  int retry_after_ms = 0;   // a 429's Retry-After
  std::string error_body;   // the first 4 KiB of a response other than 200
  bool done = false;        // "data: [DONE]" arrived
  bool local_stop = false;  // a stop string matched
  bool callback_stop = false;
  std::string finish_reason;
  int watchdog = OpenAiLanguageModel::Watchdog::kNone;  // why the watchdog aborted it, if it did
};

// One event of the stream: usage counts, text for the stop matcher and the callback, the finish
// reason. An error status ends the stream (a bad chunk, a stop string, the callback's stop).
Status OnStreamEvent(const net::SseEvent& ev, int chunk_index, const OpenAiLlmConfig& config,
                     OpenAiLanguageModel::Watchdog::Watch& watch, Attempt& a,
                     AnswerStream& stream) {
  // Only events count as progress: a server stuck behind keep-alive comments still times out.
  if (stream.any_delta) watch.deadline_ns.store(NsAfter(config.idle_timeout_ms));
  if (a.done) return Status::Ok();
  if (ev.data == "[DONE]") {
    a.done = true;
    return Status::Ok();
  }
  auto chunk = ParseChatCompletionChunk(ev.data);
  if (!chunk.ok()) {
    return chunk.status().WithContext("chat completion stream chunk " +
                                      std::to_string(chunk_index));
  }
  GenerateStats& stats = stream.stats;
  if (chunk->prompt_tokens) stats.prompt_tokens = *chunk->prompt_tokens;
  if (chunk->completion_tokens) stats.generated_tokens = *chunk->completion_tokens;
  if (chunk->cached_tokens) stats.cached_prompt_tokens = *chunk->cached_tokens;
  if (!chunk->content.empty()) {
    ++stream.content_chunks;
    engine::StopMatcher::Output o = stream.matcher.Push(chunk->content);
    if (!stream.Emit(o.text)) {
      a.callback_stop = true;
      return CancelledError("stopped by the caller");
    }
    if (stream.any_delta) watch.deadline_ns.store(NsAfter(config.idle_timeout_ms));
    if (o.stopped) {
      a.local_stop = true;
      return CancelledError("stop string");
    }
  }
  if (!chunk->finish_reason.empty()) a.finish_reason = chunk->finish_reason;
  return Status::Ok();
}

// POSTs `http` once, streaming the answer's text into `stream`, under the watchdog (the user's
// cancel token, the first-token and idle time-outs).
Attempt PostOnce(const OpenAiLlmConfig& config, const net::HttpClient& client,
                 const net::HttpRequest& http, const CancelToken* cancel,
                 OpenAiLanguageModel::Watchdog& watchdog, AnswerStream& stream) {
  Attempt a;
  OpenAiLanguageModel::Watchdog::Watch watch;
  watch.user = cancel;
  watch.deadline_ns.store(NsAfter(config.first_token_timeout_ms));
  int chunk_index = 0;
  net::SseParser parser(
      [&](const net::SseEvent& ev) -> Status {
        return OnStreamEvent(ev, ++chunk_index, config, watch, a, stream);
      },
      static_cast<size_t>(std::min<int64_t>(config.max_response_bytes, 1 << 20)));
  net::HttpStreamCallbacks callbacks;
  callbacks.on_head = [&](const net::HttpResponseHead& head) -> Status {
    a.http_status = head.status;
    if (head.status == 429) a.retry_after_ms = RetryAfterMs(head.Header("Retry-After"));
    if (head.status == 200) {
      const std::string type = head.Header("Content-Type");
      if (type.find("text/event-stream") == std::string::npos) {
        return DataLossError("expected a text/event-stream response, got Content-Type '" +
                             Excerpt(type, 60) + "' (does the server support stream: true?)");
      }
    }
    return Status::Ok();
  };
  callbacks.on_body = [&](std::string_view bytes) -> Status {
    if (a.http_status != 200) {
      if (a.error_body.size() < 4096) {
        a.error_body.append(bytes.substr(0, 4096 - a.error_body.size()));
      }
      return Status::Ok();
    }
    return parser.Feed(bytes);
  };
  watchdog.Add(&watch);
  a.status = client.Stream(http, callbacks, &watch.abort);
  if (a.status.ok() && a.http_status == 200) a.status = parser.Finish();
  watchdog.Remove(&watch);
  a.watchdog = watch.reason.load();
  return a;
}

// Why an attempt that neither stopped nor timed out failed (OK when it did not): the transport,
// the server's status, or a stream that ended without a finish. `retryable`: worth another try.
Status AttemptFailure(const Attempt& a, const OpenAiLlmConfig& config, const std::string& endpoint,
                      bool* retryable) {
  *retryable = false;
  if (!a.status.ok()) {
    // Connection refused or lost, or a connect timeout (no response head yet).
    *retryable = a.status.code() == StatusCode::kUnavailable ||
                 (a.status.code() == StatusCode::kDeadlineExceeded && a.http_status == 0);
    return a.status.WithContext("chat completion from " + endpoint);
  }
  if (a.http_status != 200)
    return HttpFailure(config, endpoint, a.http_status, a.error_body, retryable);
  if (!a.done && a.finish_reason.empty()) {
    return DataLossError(endpoint + " closed the stream before a finish_reason or data: [DONE]");
  }
  return Status::Ok();
}

// The watchdog's time-out: before the first text, or in the middle of the answer.
Status StreamTimeout(const OpenAiLlmConfig& config, const std::string& endpoint, bool any_delta) {
  if (any_delta) {
    return DeadlineExceededError(endpoint + " sent nothing for llm.openai.idle_timeout_ms = " +
                                 std::to_string(config.idle_timeout_ms) +
                                 " ms in the middle of an answer");
  }
  return DeadlineExceededError(endpoint +
                               " sent no text within llm.openai.first_token_timeout_ms = " +
                               std::to_string(config.first_token_timeout_ms) + " ms");
}

}  // namespace

Result<GenerateStats> OpenAiLanguageModel::Generate(const GenerateRequest& request,
                                                    const TextCallback& on_text) {
  const auto t0 = Clock::now();
  RETURN_IF_ERROR(CheckRequest(request));
  ASSIGN_OR_RETURN(engine::StopMatcher matcher, engine::StopMatcher::Create(request.stop));
  using Admission = CircuitBreaker::Admission;
  const Admission admission = breaker_ ? breaker_->Admit(t0) : Admission::kPass;
  if (admission == Admission::kReject) {
    metrics_->breaker_rejected.Increment();
    const int64_t retry_in_ms = breaker_->RetryInMs(t0);
    return UnavailableError(
        "llm: " + endpoint_ + " failed " + std::to_string(config_.breaker_failures) +
        " requests in a row; the circuit breaker fails requests at once " +
        (retry_in_ms > 0 ? "for " + std::to_string(retry_in_ms) + " ms more"
                         : std::string("while its trial request is out")));
  }
  // How the server did, told to the breaker once this request is over: well (it answered, even
  // with a refusal of the request itself), ill (time-outs, connections, 5xx/429 after their
  // retries, a stream cut mid-answer), or neither (cancelled before any answer).
  enum class Health { kWell, kIll, kUnknown };
  Health health = Health::kUnknown;
  struct Settle {
    OpenAiLanguageModel* m;
    Admission admission;
    const Health& health;
    ~Settle() {
      if (!m->breaker_) return;
      switch (health) {
        case Health::kWell:
          m->breaker_->Succeeded(admission);
          break;
        case Health::kIll:
          m->breaker_->Failed(admission, Clock::now());
          break;
        case Health::kUnknown:
          m->breaker_->Abandoned(admission);
          break;
      }
      m->metrics_->breaker_open.Set(m->breaker_->open() ? 1 : 0);
    }
  } settle{this, admission, health};
  metrics_->requests.Increment();

  net::HttpRequest http = net::HttpRequest::Post(
      endpoint_, BuildChatCompletionBody(config_.model, request), "application/json");
  http.headers.push_back({"Accept", "text/event-stream"});
  if (!auth_header_.empty()) http.headers.push_back({"Authorization", auth_header_});
  const net::HttpClient client(ClientConfig(config_));

  AnswerStream stream(t0, std::move(matcher), on_text, metrics_->first_token_s);
  GenerateStats& stats = stream.stats;
  std::mt19937 rng(std::random_device{}());
  for (int attempt = 0;; ++attempt) {
    health = Health::kUnknown;  // only the last attempt tells how the server is
    if (IsCancelled(request.cancel)) {
      stats.finish = FinishReason::kCancelled;
      break;
    }
    HLOG_DEBUG("llm: POST {} (attempt {}, {} messages)", endpoint_, attempt + 1,
               request.messages.size());
    const Attempt a = PostOnce(config_, client, http, request.cancel, *watchdog_, stream);
    if (stream.any_delta) health = Health::kWell;
    if (a.local_stop) {
      stats.finish = FinishReason::kStop;
      break;
    }
    if (a.callback_stop) {
      stats.finish = FinishReason::kCallback;
      break;
    }
    if (a.watchdog == Watchdog::kUserCancel) {
      stats.finish = FinishReason::kCancelled;
      break;
    }
    if (a.watchdog == Watchdog::kTimeout) {
      metrics_->errors.Increment();
      health = Health::kIll;  // silent, or stalled mid-answer
      return StreamTimeout(config_, endpoint_, stream.any_delta);
    }
    bool retryable = false;
    const Status failure = AttemptFailure(a, config_, endpoint_, &retryable);
    if (!failure.ok()) {
      // A stream cut mid-answer is the server's failure too.
      health = retryable || stream.any_delta ? Health::kIll : Health::kWell;
      if (retryable && !stream.any_delta && attempt < config_.max_retries) {
        metrics_->retries.Increment();
        const double jitter = std::uniform_real_distribution<double>(0.5, 1.5)(rng);
        int delay_ms = static_cast<int>(config_.retry_backoff_ms * std::ldexp(1.0, attempt) * jitter);
        delay_ms = std::max(delay_ms, a.retry_after_ms);
        HLOG_WARN("llm: {} (attempt {} of {}); retrying in {} ms", failure.message(), attempt + 1,
                  config_.max_retries + 1, delay_ms);
        SleepUnlessCancelled(delay_ms, request.cancel);
        continue;
      }
      metrics_->errors.Increment();
      return failure;
    }
    // Complete: release what the stop matcher held back.
    health = Health::kWell;
    if (!stream.Emit(stream.matcher.Flush())) {
      stats.finish = FinishReason::kCallback;
      break;
    }
    stats.finish = a.finish_reason == "length" ? FinishReason::kLength : FinishReason::kStop;
    break;
  }
  if (stats.generated_tokens == 0) stats.generated_tokens = stream.content_chunks;
  stats.total_ms = MsSince(t0);
  return stats;
}

}  // namespace hotline::llm
