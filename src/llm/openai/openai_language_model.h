// OpenAiLanguageModel: the "openai" backend: streams chat completions from an OpenAI-compatible
// server (vLLM, llama.cpp's server, `hotline engine serve`) over plain HTTP.
//
// One Generate = POST <base_url>/v1/chat/completions with "stream": true; the Server-Sent Events
// body carries `data: {json}` chunks whose choices[0].delta.content is handed to on_text,
// choices[0].finish_reason ends the answer, an optional `usage` object gives token counts, and
// `data: [DONE]` ends the stream. Stop strings are sent to the server and also applied here (a
// server that ignores them still never streams one).
//
// Time limits: connect_timeout_ms; first_token_timeout_ms from the request to the first text
// delta (DeadlineExceeded); idle_timeout_ms between chunks after it (DeadlineExceeded). Retries
// (max_retries, exponential backoff with jitter) only before the first delta, and only for
// failures that a retry can fix: connect errors and lost connections, HTTP 429 and 5xx. After
// text has been streamed every failure is returned as is: the caller never hears a sentence
// twice. Malformed chunks fail with DataLoss naming the chunk and what was wrong.
//
// Circuit breaker (breaker_failures, breaker_open_ms; circuit_breaker.h): after that many
// requests in a row failed for the server's sake, requests fail at once with Unavailable until a
// trial request succeeds. hotline_llm_breaker_open (0/1) and hotline_llm_breaker_rejected_total
// show it.
//
// Cancellation: the request's CancelToken (and the time limits) are watched by one watchdog
// thread per model, which aborts the HTTP exchange within ~5 ms; cancellation finishes with
// FinishReason::kCancelled, not an error.
//
// Privacy: the API key (read once from the environment variable api_key_env) is never logged;
// message contents are logged at debug level at most.
//
// Threads: Generate from any number of threads at once (one connection each). REQUIRES: no call
// in flight when destroyed. Blocking: Generate blocks on the network until done.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/metrics.h"
#include "llm/language_model.h"
#include "llm/llm_config.h"

namespace hotline::llm {

class CircuitBreaker;

// One parsed `data:` chunk of a streamed chat completion.
struct ChatCompletionChunk {
  std::string content;        // choices[0].delta.content ("" when absent or null)
  std::string finish_reason;  // "" while streaming
  std::optional<int> prompt_tokens;      // usage.prompt_tokens
  std::optional<int> completion_tokens;  // usage.completion_tokens
  std::optional<int> cached_tokens;      // usage.prompt_tokens_details.cached_tokens
};
// DataLoss naming what is wrong for malformed JSON or wrong types; Unavailable carrying the
// server's message for an {"error": ...} chunk.
Result<ChatCompletionChunk> ParseChatCompletionChunk(std::string_view data);

// The JSON body of a streamed chat completion request.
std::string BuildChatCompletionBody(const std::string& model, const GenerateRequest& request);

class OpenAiLanguageModel final : public LanguageModel {
 public:
  // FailedPrecondition when api_key_env names a variable that is not set.
  // `metrics`: where the hotline_llm_* series go (null: the process's global registry); it must
  // outlive the model.
  static Result<std::unique_ptr<OpenAiLanguageModel>> Create(const OpenAiLlmConfig& config,
                                                             MetricsRegistry* metrics = nullptr);
  ~OpenAiLanguageModel() override;

  Result<GenerateStats> Generate(const GenerateRequest& request,
                                 const TextCallback& on_text) override;
  // No tokenizer here: about 4 bytes of English per token, rounded up.
  int CountTokens(std::string_view text) const override;
  std::string name() const override;

  const std::string& endpoint() const { return endpoint_; }

  class Watchdog;
  struct Metrics;

 private:
  OpenAiLanguageModel() = default;

  OpenAiLlmConfig config_;
  std::string endpoint_;
  std::string auth_header_;
  std::unique_ptr<Metrics> metrics_;
  std::unique_ptr<Watchdog> watchdog_;
  std::unique_ptr<CircuitBreaker> breaker_;  // null: breaker_failures == 0
};

}  // namespace hotline::llm
