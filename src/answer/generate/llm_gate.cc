#include "answer/generate/llm_gate.h"

#include <cmath>
#include <string>

namespace hotline::answer {

namespace {
Status CheckUnit(const char* name, double value) {
  if (!std::isfinite(value) || value < 0 || value > 1) {
    return InvalidArgumentError(std::string(name) + " must be between 0 and 1 (0 = off), got " +
                                std::to_string(value));
  }
  return Status::Ok();
}
}  // namespace

Status LlmGateConfig::Validate() const {
  RETURN_IF_ERROR(CheckUnit("min_asr_confidence", min_asr_confidence));
  return CheckUnit("min_intent_top_two", min_intent_top_two);
}

std::string_view LlmGateReasonName(LlmGateReason reason) {
  switch (reason) {
    case LlmGateReason::kPass: return "pass";
    case LlmGateReason::kLowAsrConfidence: return "low_asr_confidence";
    case LlmGateReason::kLowIntentTopTwo: return "low_intent_top_two";
  }
  return "unknown";
}

LlmGateDecision DecideLlmGate(const LlmGateConfig& config, const LlmGateInput& input) {
  LlmGateDecision d;
  if (!config.enabled) return d;
  // NaN from a backend compares false against every minimum: treated as no confidence at all.
  auto below = [](double value, double min) { return min > 0 && !(value >= min); };
  if (input.asr_confidence && below(*input.asr_confidence, config.min_asr_confidence)) {
    d.pass = false;
    d.reason = LlmGateReason::kLowAsrConfidence;
  } else if (input.intent_top_two && below(*input.intent_top_two, config.min_intent_top_two)) {
    d.pass = false;
    d.reason = LlmGateReason::kLowIntentTopTwo;
  }
  return d;
}

}  // namespace hotline::answer
