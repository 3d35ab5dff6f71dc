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

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "common/cancel_token.h"

namespace hotline::llm {

struct Message {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

// Scheduling hints that follow what the caller hears, changed while the request runs: a turn still
// waiting for its first sentence is urgent (Waiting: priority 0, deadline now); once a sentence
// is playing, the next tokens are needed only before its audio ends (Playing: a lower priority,
// deadline = the end of the queued audio; urgent again if the audio has already run out). The
// engine backend passes each change to its scheduler, which lets requests with seconds of audio
// left sit out passes for callers still waiting (llm.engine.defer_horizon_ms); the openai backend
// does not forward them (the remote server schedules its own batch). Thread-safe; owned by the
// caller, like the CancelToken, and it must outlive the request.
class GenerationSchedule {
 public:
  // Priority of a request whose caller is listening to audio that has not run out.
  static constexpr int kPlayingPriority = 1;

  struct Value {
    int priority = 0;
    MonoTime deadline{};   // zero: none
    uint64_t version = 0;  // bumped by every change
  };

  void Set(int priority, MonoTime deadline) {
    std::lock_guard<std::mutex> lock(mu_);
    value_.priority = priority;
    value_.deadline = deadline;
    ++value_.version;
  }
  // Nothing heard yet: the next tokens are needed now.
  void Waiting(MonoTime now) { Set(0, now); }
  // The caller's queued audio ends at `playout_end`.
  void Playing(MonoTime playout_end, MonoTime now) {
    if (playout_end <= now) {
      Waiting(now);
    } else {
      Set(kPlayingPriority, playout_end);
    }
  }
  Value Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return value_;
  }

 private:
  mutable std::mutex mu_;
  Value value_;
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
  // Live scheduling hints (see GenerationSchedule); when set, they replace `priority` and
  // `deadline`. Null: the fixed values above.
  const GenerationSchedule* schedule = nullptr;
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
