// LanguageModel: chat messages in, a stream of text out; the one face every LLM backend shows the
// rest of Hotline (answer/, pipeline/, server/).
//
//   auto lm = llm::CreateLanguageModel(config);           // backend picked by config.backend
//   llm::GenerateRequest req{.messages = prompt.messages, .max_tokens = 96};
//   CancelToken cancel;                                     // barge-in raises it from any thread
//   req.cancel = &cancel;
//   auto stats = lm->Generate(req, [&](std::string_view delta) { chunker.Push(delta); return true; });
//
// Backends: "engine" (the embedded engine, in process) and "openai" (an OpenAI-compatible
// streaming HTTP server: vLLM, llama.cpp's server, Hotline's own `engine serve`); "none" means no
// model is configured and CreateLanguageModel returns a null pointer.
//
// Streaming: `on_text` receives UTF-8 text deltas in order, each a whole number of code points,
// stop strings already removed. Returning false from `on_text` ends generation (finish kCallback).
// Cancellation (the token raised) and a callback stop are not errors: see GenerateStats::finish.
// Errors: InvalidArgument for a bad request, Unavailable / DeadlineExceeded when the backend
// cannot be reached or misses `first_token_timeout_ms`, ResourceExhausted when it is overloaded.
// A backend retries only before its first delta, so a caller never hears text twice.
//
// Thread-safety: Generate may be called from several threads at once (one per call); a backend
// that runs one generation at a time queues the others (ordered by priority, then deadline).
// Blocking: Generate blocks until the answer is complete, stopped, cancelled or failed.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "net/cancel_token.h"

namespace hotline::llm {

struct Message {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

struct GenerateRequest {
  std::vector<Message> messages;
  int max_tokens = 128;
  float temperature = 0.0f;  // 0: greedy
  float top_p = 1.0f;
  int top_k = 0;              // 0: off
  float repetition_penalty = 1.0f;
  uint64_t seed = 0;
  std::vector<std::string> stop;  // stop strings (not spoken, not streamed)
  // Scheduling hints: a waiting caller (priority 0) goes before background work (higher values);
  // among equals, the earlier deadline first. A zero deadline means none.
  int priority = 0;
  MonoTime deadline{};
  const CancelToken* cancel = nullptr;  // owned by the caller; may be raised from any thread
  // A raw completion prompt instead of `messages` (no chat template; OpenAI /v1/completions).
  // Only the engine backend takes one; it is never cut to fit the context (an over-long one is
  // an OutOfRange "context_length_exceeded" error), while over-long `messages` lose their oldest
  // turns first (see engine/context_fit.h).
  std::string prompt;
};

enum class FinishReason { kStop, kLength, kCallback, kCancelled, kContextFull };
inline std::string_view FinishReasonName(FinishReason r) {
  switch (r) {
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kCallback: return "callback";
    case FinishReason::kCancelled: return "cancelled";
    case FinishReason::kContextFull: return "context_full";
  }
  return "unknown";
}

struct GenerateStats {
  FinishReason finish = FinishReason::kStop;
  int prompt_tokens = 0;         // as the backend counted them (0 when it does not say)
  int cached_prompt_tokens = 0;  // of those, served from a prefix/KV cache without recompute
  int generated_tokens = 0;
  double queue_ms = 0;           // waiting for the backend before work began
  double first_token_ms = 0;     // call -> first delta handed to on_text
  double total_ms = 0;
};

// Receives text deltas; return false to stop generating.
using TextCallback = std::function<bool(std::string_view delta)>;

class LanguageModel {
 public:
  virtual ~LanguageModel() = default;

  virtual Result<GenerateStats> Generate(const GenerateRequest& request,
                                         const TextCallback& on_text) = 0;

  // Hint: `messages` are likely the start of a coming request (the caller is still talking).
  // A backend with a prefix cache may compute them now so the final request only pays for the
  // rest. `max_tokens` is the answer length the coming request will ask for (0: unknown), so
  // the prefetched prompt is fitted to the context as that request will be. Best effort; never
  // required for correctness. Default: nothing.
  virtual Status Prefetch(const std::vector<Message>& messages, int max_tokens) {
    (void)messages;
    (void)max_tokens;
    return Status::Ok();
  }

  // Tokens `text` takes in this model (for prompt budgeting); a backend without a tokenizer
  // estimates.
  virtual int CountTokens(std::string_view text) const = 0;

  // For logs and metrics: "engine:<model file>", "openai:<base url>/<model>".
  virtual std::string name() const = 0;
};

}  // namespace hotline::llm
