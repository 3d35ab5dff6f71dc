// LLM gate: whether a turn that no cached tier and no knowledge-base passage answered may be
// answered by the language model, or must take the no-answer path (the answerer's fallback, and
// in a call the session's rephrase/transfer turn) because the call is not sure what the caller
// said.
//
// A small model trained on one domain answers anything fluently with the nearest answer it knows,
// so a misheard or out-of-scope turn would get a confident wrong answer. The gate looks at what
// the turn's understanding already measured:
//   - the recognizer's utterance confidence (asr::AsrResult::confidence), when the turn was heard
//     (typed turns carry none and skip this check);
//   - the intent classifier's top-two probability (IntentPrediction::top_two: probability of the
//     best intent plus that of the runner-up), when a classifier ran. The turns that reach the
//     LLM tier are the ones the classifier did not accept, where its calibrated confidence is one
//     flat value for in-scope and out-of-scope questions alike. An in-scope question the
//     classifier hesitates on hesitates between two related intents ("how do i get refunds":
//     get_refund or track_refund), so the two together hold most of the probability; an
//     out-of-scope one spreads it over many. The margin between the two (best minus runner-up)
//     separates less well, because it also blocks that in-scope hesitation
//     (`hotline eval gate`, docs/answers.md).
// A turn passes when every signal it carries reaches its minimum; a minimum of 0 switches that
// check off. The first failing check names the reason.
//
// Only the LLM tier is gated: caches, tools and the knowledge base keep their own thresholds.
//
// Thread-safety: pure functions over const values.
#pragma once

#include <optional>
#include <string_view>

#include "common/status.h"

namespace hotline::answer {

struct LlmGateConfig {
  // false: every turn that reaches the LLM tier is answered by the model.
  bool enabled = true;
  // Lowest recognizer utterance confidence (0..1) for the model to answer a spoken turn. Higher
  // sends more misheard turns to the fallback, and more well-heard ones too. 0 = off. The scale
  // is the backend's: pocketsphinx's is the mean word posterior (flite questions over a
  // telephone line: median 0.94 when heard right, 0.5-0.7 when heard wrong); the default is the
  // cut that separates those best (`hotline eval gate --spoken`, docs/answers.md). The whisper
  // backend's (the tokens' geometric-mean probability) is another scale: tune it for that
  // backend. A backend without an estimate reports 1 for any text (openai) and always passes.
  double min_asr_confidence = 0.79;
  // Lowest intent top-two probability (0..1: the classifier's probability of its best intent
  // plus that of the runner-up) for the model to answer. Out-of-scope questions spread their
  // probability over many intents. Higher = fewer out-of-scope answers and fewer in-scope
  // questions reach the model. 0 = off. The default separates Bitext questions from CLINC150's
  // out-of-scope ones best on the demo knowledge base (`hotline eval gate`).
  double min_intent_top_two = 0.395;

  template <class V>
  void Visit(V& v) {
    v.Field("enabled", enabled, "Gate the LLM tier on how sure the turn's understanding is");
    v.Field("min_asr_confidence", min_asr_confidence,
            "Lowest recognizer utterance confidence for a model answer (0 = off)");
    v.Field("min_intent_top_two", min_intent_top_two,
            "Lowest intent top-two probability (best + runner-up) for a model answer (0 = off)");
  }
  Status Validate() const;
};

// What the gate sees of one turn.
struct LlmGateInput {
  std::optional<double> asr_confidence;  // nullopt: not a recognized turn (typed, scripted)
  std::optional<double> intent_top_two;  // nullopt: no intent classifier ran
  // Recorded for evaluation (`hotline eval gate` compares them with the margin); no check uses
  // them, because on the evaluation sets they separate in-scope from out-of-scope questions less
  // well (docs/answers.md): the margin (best - runner-up), the best intent's probability, the
  // classifier's calibrated confidence and acceptance score, the
  // similarity to the nearest training question, the best knowledge-base passage's BM25 score
  // (0: none retrieved).
  double intent_margin = 0;
  double intent_probability = 0;
  double intent_confidence = 0;
  double intent_score = 0;
  double neighbour_similarity = 0;
  double kb_top_score = 0;
};

enum class LlmGateReason { kPass, kLowAsrConfidence, kLowIntentTopTwo };

// "pass", "low_asr_confidence", "low_intent_top_two" (metric labels, turn records).
std::string_view LlmGateReasonName(LlmGateReason reason);

struct LlmGateDecision {
  bool pass = true;
  LlmGateReason reason = LlmGateReason::kPass;
};

LlmGateDecision DecideLlmGate(const LlmGateConfig& config, const LlmGateInput& input);

}  // namespace hotline::answer
