#include "answer/understand/understanding.h"

#include "answer/understand/normalize.h"

namespace hotline::answer {

Understanding Understand(std::string_view turn, const IntentClassifier* classifier) {
  Understanding u;
  u.normalized = NormalizeText(turn);
  u.redacted = RedactPii(u.normalized, &u.pii);
  u.entities = ExtractEntities(u.normalized);
  if (classifier != nullptr) u.intent = classifier->Predict(u.normalized);
  return u;
}

}  // namespace hotline::answer
