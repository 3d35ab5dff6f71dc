#include "pipeline/turn_answerer.h"

namespace hotline::pipeline {
namespace {

TurnAnswer FromResult(const answer::AnswerResult& r) {
  TurnAnswer a;
  a.text = r.text;
  a.sentences = r.sentences;
  a.tier = TierOf(r.tier);
  a.personal = r.personal;
  a.fallback = r.tier == answer::AnswerTierId::kFallback;
  a.degraded = a.fallback && r.degraded;
  a.transfer = r.transfer;
  a.understood_ms = r.understood_ms;
  a.gated = std::string(r.gated_reason());
  if (r.llm) {
    a.llm_first_token_ms = r.llm->first_token_ms;
    a.tokens = r.llm->prompt_tokens + r.llm->generated_tokens;
  }
  return a;
}

}  // namespace

Result<TurnAnswer> AnswererAdapter::Answer(std::string_view turn, answer::CallerSession& caller,
                                           const std::vector<answer::ChatMessage>& history,
                                           const AnswerHooks& hooks) {
  answer::AnswerOptions options;
  options.cancel = hooks.cancel;
  options.stream_fallback = hooks.stream_fallback;
  options.asr_confidence = hooks.asr_confidence;
  options.schedule = hooks.schedule;
  if (hooks.on_sentence) {
    options.on_sentence = [&](std::string_view sentence) {
      hooks.on_sentence(sentence);
      return !IsCancelled(hooks.cancel);
    };
  }
  ASSIGN_OR_RETURN(answer::AnswerResult r, answerer_.Answer(turn, caller, history, options));
  if (r.cancelled) return CancelledError("answer cancelled");
  TurnAnswer a = FromResult(r);
  a.streamed = static_cast<bool>(hooks.on_sentence) && (hooks.stream_fallback || !a.fallback);
  return a;
}

Result<TurnAnswer> AnswererAdapter::SubmitPin(answer::CallerSession& caller,
                                              std::string_view digits) {
  ASSIGN_OR_RETURN(answer::AnswerResult r, answerer_.SubmitPin(caller, digits));
  return FromResult(r);
}

Result<std::optional<TurnAnswer>> AnswererAdapter::Peek(std::string_view partial,
                                                        const answer::CallerSession& caller) {
  ASSIGN_OR_RETURN(std::optional<answer::AnswerResult> r, answerer_.Peek(partial, caller));
  if (!r || r->personal) return std::optional<TurnAnswer>();
  return std::optional<TurnAnswer>(FromResult(*r));
}

Result<bool> AnswererAdapter::Understands(std::string_view partial,
                                          const answer::CallerSession& caller) {
  return answerer_.Understands(partial, caller);
}

bool AnswererAdapter::TrustsTranscript(double asr_confidence) {
  return answerer_.TrustsTranscript(asr_confidence);
}

Status AnswererAdapter::Prefetch(std::string_view partial, const answer::CallerSession& caller,
                                 const std::vector<answer::ChatMessage>& history) {
  return answerer_.Prefetch(partial, caller, history);
}

}  // namespace hotline::pipeline
