// Understanding one caller turn: normalized text, PII-redacted text, entities and intent.
//
//   Understanding u = Understand("Um, what's my bill for March? My PIN is 1234.", classifier);
//   u.normalized  "what is my bill for march my pin is 1234"   (per call only: contains PII)
//   u.redacted    "what is my bill for march my pin is <pin>"  (safe to log, cache, send)
//   u.entities    {month "03"}
//   u.intent      {intent "bill", accepted, confidence ...}    (when a classifier is given)
//
// Thread-safety: Understand is pure apart from reading the const classifier; call it from any
// thread. Allocation: a few short strings and vectors per turn.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "answer/understand/entities.h"
#include "answer/understand/intent_classifier.h"
#include "answer/understand/pii.h"

namespace hotline::answer {

struct Understanding {
  std::string normalized;  // NormalizeText(turn): for this call only, may contain PII
  std::string redacted;    // RedactPii(normalized): for logs, cache keys, remote models
  PiiCounts pii;           // what redaction replaced
  std::vector<Entity> entities;
  std::optional<IntentPrediction> intent;  // set when a classifier was given
};

// `classifier` may be null (no intent model loaded).
Understanding Understand(std::string_view turn, const IntentClassifier* classifier = nullptr);

}  // namespace hotline::answer
