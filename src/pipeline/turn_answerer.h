// TurnAnswerer: the answering stage as the pipeline sees it — a small interface over
// answer::Answerer so the session's state machine can be tested with a fake.
//
// AnswererAdapter wraps the real answer::Answerer. It is blocking (SQLite, Redis, the model):
// the session calls it from its answer worker, never from the audio path.
//
// Streaming: an implementation that streams calls hooks.on_sentence for each spoken sentence as
// soon as it is final (in order) and sets TurnAnswer::streamed; the session speaks those
// sentences as they come instead of the final text. The adapter streams every tier (the model's
// sentences while it generates, a cached answer's sentences at once).
//
// Look-ahead: Peek says what the shareable cached tiers would answer for a partial transcript,
// with no side effects, so the session can prepare the audio before the caller finishes;
// Understands, whether the partial already reads as a whole question, so the turn can end sooner.
//
// Thread-safety: Answer/SubmitPin may be called concurrently for different calls (different
// CallerSessions); one call's CallerSession is used by one thread at a time.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "answer/account/caller.h"
#include "answer/answerer.h"
#include "common/cancel_token.h"
#include "common/status.h"
#include "llm/language_model.h"
#include "pipeline/turn_types.h"

namespace hotline::pipeline {

struct TurnAnswer {
  std::string text;          // what to say (already post-processed for speech)
  TurnTier tier = TurnTier::kFallback;  // the tier that answered
  bool personal = false;     // carries this caller's data: never cached (text or audio)
  bool fallback = false;     // no tier could answer: the call is handed to a human
  // With `fallback`: a tier failed (answer::AnswerResult::degraded); the caller hears error_text
  // rather than a request to rephrase.
  bool degraded = false;
  bool transfer = false;     // hand the call to a human after this answer (verification lock-out)
  bool streamed = false;     // every sentence already went through hooks.on_sentence
  std::vector<std::string> sentences;  // `text` as sentences
  double llm_first_token_ms = -1;  // Answer call → the model's first token (model tier only)
  double understood_ms = -1;       // Answer call → the question understood (-1: not reported)
  int64_t tokens = 0;              // prompt + generated tokens of the model (0: no model ran)
  // The LLM gate sent this turn to the fallback: why ("low_asr_confidence",
  // "low_intent_top_two"); empty when it did not.
  std::string gated;
};

struct AnswerHooks {
  const CancelToken* cancel = nullptr;  // raised on barge-in, time-out or hang-up
  // A final spoken sentence, in order, as soon as it is ready. May be null.
  std::function<void(std::string_view sentence)> on_sentence;
  // false: a fallback answer is not streamed (TurnAnswer::streamed stays false), so the session
  // can say something else instead.
  bool stream_fallback = true;
  // The recognizer's utterance confidence of the turn (answer::AnswerOptions::asr_confidence);
  // nullopt for a turn that was not recognized from speech.
  std::optional<double> asr_confidence;
  // The model's live scheduling hints, which the session moves with what the caller hears
  // (llm::GenerationSchedule); valid during Answer. May be null.
  const llm::GenerationSchedule* schedule = nullptr;
};

class TurnAnswerer {
 public:
  virtual ~TurnAnswerer() = default;
  virtual Result<TurnAnswer> Answer(std::string_view turn, answer::CallerSession& caller,
                                    const std::vector<answer::ChatMessage>& history,
                                    const AnswerHooks& hooks) = 0;
  // Keypad digits (a PIN) for the caller's pending personal request.
  virtual Result<TurnAnswer> SubmitPin(answer::CallerSession& caller, std::string_view digits) = 0;
  // What the shareable cached tiers would answer for `partial` now (nullopt: none would, or the
  // request is personal). No side effects on stats or the caller.
  virtual Result<std::optional<TurnAnswer>> Peek(std::string_view partial,
                                                 const answer::CallerSession& caller) {
    (void)partial;
    (void)caller;
    return std::optional<TurnAnswer>();
  }
  // Whether a final transcript heard with `asr_confidence` may be answered on its words alone
  // (answer::Answerer::TrustsTranscript): a prepared answer is spoken for it only then.
  virtual bool TrustsTranscript(double asr_confidence) {
    (void)asr_confidence;
    return true;
  }
  // Whether `partial` already reads as a question the line acts on (answer::Answerer::
  // Understands), though no cached tier answers it now: the turn may end sooner. Default: no.
  virtual Result<bool> Understands(std::string_view partial, const answer::CallerSession& caller) {
    (void)partial;
    (void)caller;
    return false;
  }
  // The caller is still talking and no cached tier answers `partial`: let the language model
  // compute the likely prompt ahead (best effort; default nothing).
  virtual Status Prefetch(std::string_view partial, const answer::CallerSession& caller,
                          const std::vector<answer::ChatMessage>& history) {
    (void)partial;
    (void)caller;
    (void)history;
    return Status::Ok();
  }
};

// The real answerer. `answerer` must outlive the adapter.
class AnswererAdapter final : public TurnAnswerer {
 public:
  explicit AnswererAdapter(answer::Answerer& answerer) : answerer_(answerer) {}
  Result<TurnAnswer> Answer(std::string_view turn, answer::CallerSession& caller,
                            const std::vector<answer::ChatMessage>& history,
                            const AnswerHooks& hooks) override;
  Result<TurnAnswer> SubmitPin(answer::CallerSession& caller, std::string_view digits) override;
  Result<std::optional<TurnAnswer>> Peek(std::string_view partial,
                                         const answer::CallerSession& caller) override;
  Result<bool> Understands(std::string_view partial, const answer::CallerSession& caller) override;
  bool TrustsTranscript(double asr_confidence) override;
  Status Prefetch(std::string_view partial, const answer::CallerSession& caller,
                  const std::vector<answer::ChatMessage>& history) override;

 private:
  answer::Answerer& answerer_;
};

}  // namespace hotline::pipeline
