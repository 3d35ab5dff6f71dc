// L1 intent cache: intent -> answer template with slots.
//
// When the intent classifier accepts a question (its calibrated score is above the threshold),
// the intent's template is filled from the question's entities ({month}, {amount},
// {order_number}, ...), from per-call context (e.g. {caller_name}), and from a tool call (a bill
// look-up fills {amount}). The answer is served only when every slot in the template is filled;
// otherwise the tier asks the template's short clarifying question ("Which month?") or falls
// through to the next tier.
//
// Answers filled by a tool are personal (`personal` = true): the caller of this tier must never
// store them in a shared cache (ARCHITECTURE.md §8).
//
// Thread-safety: add templates at start-up; Answer is const and may run on many threads at once
// (the SlotTool must then be thread-safe). Answer blocks for as long as the tool call does.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "answer/understand/entities.h"
#include "answer/understand/intent_classifier.h"
#include "common/status.h"

namespace hotline::answer {

using SlotMap = std::map<std::string, std::string, std::less<>>;

// Tool calls that fill template slots (account look-ups). Implemented by the answer module's
// tools over the accounts database; a fake in tests.
class SlotTool {
 public:
  virtual ~SlotTool() = default;
  // Runs tool `name` with the slots known so far (entities and call context such as the
  // identified caller); returns the slots it fills. Errors: kPermissionDenied when the caller is
  // not identified, kNotFound when there is nothing to report, kUnavailable on backend failure.
  virtual Result<SlotMap> Call(std::string_view name, const SlotMap& slots) = 0;
};

struct IntentTemplate {
  std::string intent;   // the classifier's label
  std::string text;     // "Your bill for {month} is {amount} dollars." ({{ and }} are literal)
  std::string tool;     // tool that fills slots before the template is filled ("" = none)
  std::string clarify;  // asked when a slot stays empty ("Which month do you mean?"); "" = none
};

struct IntentCacheConfig {
  // Ask the template's clarifying question when a slot is missing; off = fall through silently
  // (the LLM tier then answers, slower but without a second turn).
  bool ask_clarifying_question = true;
  // Extra floor on the classifier's calibrated confidence, on top of its acceptance. 0 = rely on
  // the calibrated threshold alone; higher trades hits for precision.
  double min_confidence = 0.0;

  template <class V>
  void Visit(V& v) {
    v.Field("ask_clarifying_question", ask_clarifying_question,
            "Ask a short question when a template slot is missing");
    v.Field("min_confidence", min_confidence, "Minimum calibrated confidence on top of acceptance");
  }
  Status Validate() const;
};

enum class L1Outcome { kMiss, kAnswer, kClarify };

struct L1Result {
  L1Outcome outcome = L1Outcome::kMiss;
  std::string text;        // the answer or the clarifying question
  std::string intent;
  bool personal = false;   // filled from a tool: never store in a shared cache
  std::string reason;      // why it missed (for logs and metrics)
  std::vector<std::string> missing_slots;
};

// Slot names of a template text, in order of first appearance. Error on an unclosed '{', an
// empty or non-identifier name.
Result<std::vector<std::string>> TemplateSlots(std::string_view text);

// Fills `text`'s slots from `slots`; error naming the first missing slot.
Result<std::string> FillTemplate(std::string_view text, const SlotMap& slots);

class IntentCache {
 public:
  explicit IntentCache(const IntentCacheConfig& config = {}) : config_(config) {}

  // Adds or replaces the template of t.intent. Errors: malformed template text, empty intent.
  Status AddTemplate(IntentTemplate t);

  // `prediction`: the classifier's output for the turn. `entities`: Understanding::entities.
  // `context`: per-call slots (caller id, name...). `tool`: may be null (templates needing a
  // tool then miss).
  L1Result Answer(const IntentPrediction& prediction, const std::vector<Entity>& entities,
                  const SlotMap& context, SlotTool* tool) const;

  bool HasTemplate(std::string_view intent) const;
  // True when `intent`'s template has no slot and no tool: its answer is the same for everyone
  // and needs nothing from the caller (safe to look up ahead of the end of the turn).
  bool HasStaticTemplate(std::string_view intent) const;
  size_t size() const { return templates_.size(); }

 private:
  struct Compiled {
    IntentTemplate t;
    std::vector<std::string> slots;
  };
  IntentCacheConfig config_;
  std::unordered_map<std::string, Compiled> templates_;
};

}  // namespace hotline::answer
