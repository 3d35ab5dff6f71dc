#include "answer/answer_tiers.h"

#include "common/log.h"
#include "common/metrics.h"

namespace hotline::answer {

namespace {

// A cache tier that had a candidate and refused it as unsafe (counted for /metrics and the
// dashboard): the intent classifier below its calibrated threshold (L1), a meaning guard (L2).
Counter& Rejects(MetricsRegistry* metrics, const char* tier, const char* reason) {
  MetricsRegistry& r = metrics != nullptr ? *metrics : MetricsRegistry::Global();
  return r.GetCounter("hotline_answer_cache_rejects_total",
                      "Cache candidates refused as unsafe, by tier and reason",
                      {{"tier", tier}, {"reason", reason}});
}

// Runs template tools through the registry for one caller and keeps the values they returned.
class RegistrySlotTool : public SlotTool {
 public:
  RegistrySlotTool(const ToolRegistry& tools, const CallerSession& caller)
      : tools_(tools), caller_(caller) {}

  Result<SlotMap> Call(std::string_view name, const SlotMap& slots) override {
    ToolArgs args(slots.begin(), slots.end());
    ASSIGN_OR_RETURN(ToolResult r, tools_.Run(name, args, caller_));
    SlotMap filled;
    for (auto& [k, v] : r.slots) {
      if (r.personal) values.push_back(v);
      filled[k] = std::move(v);
    }
    return filled;
  }

  std::vector<std::string> values;

 private:
  const ToolRegistry& tools_;
  const CallerSession& caller_;
};

}  // namespace

IntentTier::IntentTier(const IntentCache& cache, const ToolRegistry* tools,
                       MetricsRegistry* metrics)
    : cache_(cache), tools_(tools), rejects_(Rejects(metrics, "l1", "low_confidence")) {}

Result<std::optional<TierAnswer>> IntentTier::Lookup(const Question& q, const CallerSession& caller) {
  if (!q.prediction) return std::optional<TierAnswer>();
  std::optional<RegistrySlotTool> tool;
  if (tools_) tool.emplace(*tools_, caller);
  L1Result r = cache_.Answer(*q.prediction, q.entity_list, {}, tool ? &*tool : nullptr);
  if (r.outcome == L1Outcome::kMiss) {
    HLOG_DEBUG("L1 miss for intent '{}': {} (p {:.2f}, runner-up '{}', margin {:.2f}, top two "
               "{:.2f})",
               r.intent, r.reason, q.prediction->probability, q.prediction->runner_up,
               q.prediction->margin, q.prediction->top_two);
    if (!q.prediction->intent.empty() && !q.prediction->accepted) {
      rejects_.Increment();
    }
    return std::optional<TierAnswer>();
  }
  TierAnswer a;
  a.text = std::move(r.text);
  a.personal = r.personal;
  if (r.personal && tool) a.personal_values = std::move(tool->values);
  return std::optional<TierAnswer>(std::move(a));
}

Status IntentTier::Learn(const Question&, std::string_view, const std::vector<std::string>&) {
  return Status::Ok();  // templates are loaded at start-up
}

Result<std::optional<TierAnswer>> IntentTier::Peek(const Question& q) {
  if (!q.prediction || !cache_.HasStaticTemplate(q.prediction->intent)) {
    return std::optional<TierAnswer>();
  }
  L1Result r = cache_.Answer(*q.prediction, {}, {}, nullptr);
  if (r.outcome != L1Outcome::kAnswer || r.personal) return std::optional<TierAnswer>();
  return std::optional<TierAnswer>(TierAnswer{std::move(r.text), false, {}});
}

SemanticTier::SemanticTier(SemanticCache& cache, MetricsRegistry* metrics)
    : cache_(cache), rejects_(Rejects(metrics, "l2", "meaning_guard")) {}

Result<std::optional<TierAnswer>> SemanticTier::Lookup(const Question& q, const CallerSession&) {
  return Find(q, /*count=*/true);
}

Result<std::optional<TierAnswer>> SemanticTier::Find(const Question& q, bool count) {
  if (q.text.empty()) return std::optional<TierAnswer>();
  ASSIGN_OR_RETURN(SemanticLookupResult r, cache_.Lookup(q.text));
  if (!r.hit) {
    if (!r.blocked_by.empty()) {
      HLOG_DEBUG("L2 candidate blocked by the {} guard", r.blocked_by);
      if (count) rejects_.Increment();
    }
    return std::optional<TierAnswer>();
  }
  return std::optional<TierAnswer>(TierAnswer{std::move(r.hit->answer), false, {}});
}

Result<std::optional<TierAnswer>> SemanticTier::Peek(const Question& q) {
  return Find(q, /*count=*/false);  // no side effects: not counted
}

Status SemanticTier::Learn(const Question& q, std::string_view answer,
                           const std::vector<std::string>& depends_on) {
  if (q.text.empty() || answer.empty()) return Status::Ok();
  // Redacted questions ("my pin is <pin>") are about one caller's data: never a shared entry.
  if (q.text.find('<') != std::string::npos) return Status::Ok();
  return cache_.Insert(q.text, answer, TagFor(depends_on));
}

void SemanticTier::Invalidate(std::string_view stamp) {
  const size_t dropped = cache_.InvalidateTagItem(stamp);
  if (dropped > 0) HLOG_DEBUG("L2 dropped {} answers built from {}", dropped, stamp);
}

std::string SemanticTier::TagFor(const std::vector<std::string>& depends_on) {
  std::string tag;
  for (const std::string& d : depends_on) {
    if (!tag.empty()) tag.push_back('|');
    tag += d;
  }
  return tag;
}

}  // namespace hotline::answer
