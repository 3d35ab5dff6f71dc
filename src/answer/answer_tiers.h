// AnswerTier adapters that put the L1 intent cache and the L2 semantic cache into the Answerer's
// chain (answerer.h).
//
// IntentTier (L1): the question's intent prediction (Question::prediction) selects a template of
// the IntentCache; its slots are filled from the turn's entities and, for templates that name a
// tool, from that tool run through the ToolRegistry for this caller. A template that needs a tool
// is only answered for an identified caller (the registry refuses the others); such answers are
// personal and carry the values the tool returned, so the Answerer remembers them and never
// shares them. L1 learns nothing at run time (templates are loaded at start-up). Peek serves only
// templates without slots or tools.
//
// SemanticTier (L2): the SemanticCache (with its meaning-flip guard) answers a question that
// means the same as one answered before. It learns the shareable answers the Answerer offers (the
// Answerer offers no personal or conversation-dependent answer, and this tier refuses questions
// that carry a redaction placeholder such as "<pin>" as a second line of defence). An answer is
// tagged with the version stamps it was built from ("kb:a|kb:b"), and Invalidate drops every
// answer that names the stamp.
//
// Thread-safety: both are thread-safe as their caches are (IntentCache is const after start-up,
// SemanticCache locks); the tool registry's tools must be. Blocking: L1 as long as its tool
// (SQLite); L2 as its answer store (Redis when shared).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "answer/account/tools.h"
#include "answer/answerer.h"
#include "answer/cache/intent_cache.h"
#include "answer/cache/semantic_cache.h"

namespace hotline {
class Counter;
class MetricsRegistry;
}  // namespace hotline

namespace hotline::answer {

class IntentTier : public AnswerTier {
 public:
  // `cache` and `tools` (may be null: tool templates then miss) must outlive the tier; so must
  // `metrics` (its refusals, hotline_answer_cache_rejects_total; null: the global registry).
  IntentTier(const IntentCache& cache, const ToolRegistry* tools,
             MetricsRegistry* metrics = nullptr);

  Result<std::optional<TierAnswer>> Lookup(const Question& q, const CallerSession& caller) override;
  Status Learn(const Question& q, std::string_view answer,
               const std::vector<std::string>& depends_on) override;
  Result<std::optional<TierAnswer>> Peek(const Question& q) override;

 private:
  const IntentCache& cache_;
  const ToolRegistry* tools_;
  Counter& rejects_;  // below the classifier's calibrated threshold
};

class SemanticTier : public AnswerTier {
 public:
  // `cache` and `metrics` (null: the global registry) must outlive the tier.
  explicit SemanticTier(SemanticCache& cache, MetricsRegistry* metrics = nullptr);

  Result<std::optional<TierAnswer>> Lookup(const Question& q, const CallerSession& caller) override;
  Status Learn(const Question& q, std::string_view answer,
               const std::vector<std::string>& depends_on) override;
  Result<std::optional<TierAnswer>> Peek(const Question& q) override;
  void Invalidate(std::string_view stamp) override;

  // The tag an answer built from `depends_on` is stored with.
  static std::string TagFor(const std::vector<std::string>& depends_on);

 private:
  // Lookup and Peek; `count`: a guard's refusal is counted (Lookup only).
  Result<std::optional<TierAnswer>> Find(const Question& q, bool count);
  SemanticCache& cache_;
  Counter& rejects_;  // candidates the meaning guard refused
};

}  // namespace hotline::answer
