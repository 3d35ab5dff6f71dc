// Clarification: asking instead of guessing when the intent classifier is unsure.
//
// When no intent is accepted but the classifier's reading is not hopeless, the Answerer asks one
// short question instead of answering a guess (or handing the turn to a tier that would):
//   choice   the two best intents are close together and hold most of the probability:
//            "Is this about cancel order, or about track order?"
//   confirm  one intent is fairly likely on its own: "You'd like help with cancel order. Is that
//            right?"
// The caller's next turn (or keypad digit) is read as the answer (ResolveClarification): yes / no,
// "the first" / "the second" / 1 / 2, or words of one of the two topics. A resolved answer is
// answered as that intent; anything else is a new question. One clarification at most per
// question: the turn after a clarification is never clarified again, so an unclear reply goes the
// existing way (the rephrase request, then a transfer).
//
// Thread-safety: pure functions over immutable inputs.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "answer/understand/intent_classifier.h"
#include "common/status.h"

namespace hotline::answer {

struct ClarifyConfig {
  // Off: unsure turns go to the tiers as before (knowledge base, model, fallback).
  bool enabled = false;
  // When an unsure turn is clarified:
  //   before_tiers     before any tier may answer it (no tier guesses; asks most often)
  //   before_fallback  only when no tier answered it: the question replaces the rephrase request,
  //                    and a turn two readings agree on (the knowledge base's passage and the
  //                    classifier's guess, or the model past its gate) is answered without asking
  std::string when = "before_tiers";
  // Choice: the two best intents together hold at least this much probability...
  double choice_min_top_two = 0.6;
  // ...and are within this margin of each other. Wider asks more often.
  double choice_max_margin = 0.25;
  // Confirm: the best intent alone has at least this probability (and no choice applies).
  // Lower confirms more turns; 1 switches confirmation off.
  double confirm_min_probability = 0.45;
  // What is said; {a} and {b} are the topics (knowledge-base article titles, as written).
  std::string choice_text = "Is this about {a}, or about {b}?";
  std::string confirm_text = "You'd like help with {a}. Is that right?";

  bool before_tiers() const { return when == "before_tiers"; }

  template <class V>
  void Visit(V& v) {
    v.Field("enabled", enabled, "Ask which topic instead of guessing when the classifier is unsure");
    v.Field("when", when,
            "before_tiers (ask before any tier answers an unsure turn) or before_fallback (only "
            "when no tier answered)");
    v.Field("choice_min_top_two", choice_min_top_two,
            "Probability the two best intents must hold together to offer a choice");
    v.Field("choice_max_margin", choice_max_margin,
            "Largest gap between the two best intents for a choice question");
    v.Field("confirm_min_probability", confirm_min_probability,
            "Probability of the best intent to ask for confirmation (1 = never)");
    v.Field("choice_text", choice_text, "Choice question; {a} and {b} are the two topics");
    v.Field("confirm_text", confirm_text, "Confirmation question; {a} is the topic");
  }
  Status Validate() const;
};

// A question asked and waiting for the caller's answer.
struct PendingClarification {
  enum class Kind { kChoice, kConfirm };
  Kind kind = Kind::kConfirm;
  std::vector<std::string> intents;  // 1 (confirm) or 2 (choice), best first
  std::vector<std::string> topics;   // their titles, parallel to `intents`
  std::string question;              // the caller's original turn, as said
};

// The clarification to ask for `prediction` (an unaccepted classifier output), or nullopt.
// `topic_of` gives an intent's title ("" when the intent has none: no question about it).
std::optional<PendingClarification> DecideClarification(
    const IntentPrediction& prediction, const ClarifyConfig& config,
    const std::function<std::string(const std::string& intent)>& topic_of);

// The question to say for `pending`.
std::string ClarificationText(const PendingClarification& pending, const ClarifyConfig& config);

// How the caller's reply settled it.
struct ClarificationReply {
  enum class Outcome { kChosen, kDeclined, kUnclear };
  Outcome outcome = Outcome::kUnclear;
  std::string intent;  // kChosen: the intent
};

// What English-speaking callers say in reply to a clarifying question, as whole replies, each
// of which ResolveClarification reads as yes, no, the first or the second. A recognizer's
// language model needs them: a domain model built from questions alone hears "yes" as "yet".
const std::vector<std::string>& EnglishClarificationReplies();

// Reads `normalized` (NormalizeText of the reply, or a keypad digit) as an answer to `pending`:
// yes / no (English and Chinese), first / second (words, ordinals, 1 / 2), or the words of one
// topic and not the other.
ClarificationReply ResolveClarification(const PendingClarification& pending,
                                        std::string_view normalized);

}  // namespace hotline::answer
