#include "answer/cache/intent_cache.h"

namespace hotline::answer {
namespace {

bool IsSlotChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Walks a template: calls on_text for literal runs and on_slot for {name}s.
template <typename OnText, typename OnSlot>
Status Walk(std::string_view text, OnText on_text, OnSlot on_slot) {
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (c == '{' && i + 1 < text.size() && text[i + 1] == '{') {
      on_text(std::string_view("{"));
      i += 2;
    } else if (c == '}' && i + 1 < text.size() && text[i + 1] == '}') {
      on_text(std::string_view("}"));
      i += 2;
    } else if (c == '{') {
      size_t close = text.find('}', i + 1);
      if (close == std::string_view::npos) {
        return InvalidArgumentError("template has an unclosed '{' at offset " + std::to_string(i));
      }
      std::string_view name = text.substr(i + 1, close - i - 1);
      if (name.empty()) return InvalidArgumentError("template has an empty slot '{}'");
      for (char n : name) {
        if (!IsSlotChar(n)) {
          return InvalidArgumentError("template slot '{" + std::string(name) +
                                      "}' must be letters, digits or '_'");
        }
      }
      RETURN_IF_ERROR(on_slot(name));
      i = close + 1;
    } else if (c == '}') {
      return InvalidArgumentError("template has a stray '}' at offset " + std::to_string(i) +
                                  " (write '}}' for a literal brace)");
    } else {
      size_t j = i;
      while (j < text.size() && text[j] != '{' && text[j] != '}') ++j;
      on_text(text.substr(i, j - i));
      i = j;
    }
  }
  return Status::Ok();
}

}  // namespace

Status IntentCacheConfig::Validate() const {
  if (!(min_confidence >= 0 && min_confidence <= 1)) {
    return InvalidArgumentError("min_confidence must be in [0, 1]");
  }
  return Status::Ok();
}

Result<std::vector<std::string>> TemplateSlots(std::string_view text) {
  std::vector<std::string> slots;
  RETURN_IF_ERROR(Walk(
      text, [](std::string_view) {},
      [&](std::string_view name) {
        for (const std::string& s : slots) {
          if (s == name) return Status::Ok();
        }
        slots.emplace_back(name);
        return Status::Ok();
      }));
  return slots;
}

Result<std::string> FillTemplate(std::string_view text, const SlotMap& slots) {
  std::string out;
  RETURN_IF_ERROR(Walk(
      text, [&](std::string_view t) { out.append(t); },
      [&](std::string_view name) {
        auto it = slots.find(name);
        if (it == slots.end() || it->second.empty()) {
          return NotFoundError("slot '" + std::string(name) + "' has no value");
        }
        out += it->second;
        return Status::Ok();
      }));
  return out;
}

Status IntentCache::AddTemplate(IntentTemplate t) {
  if (t.intent.empty()) return InvalidArgumentError("intent template without an intent name");
  if (t.text.empty()) {
    return InvalidArgumentError("intent template for '" + t.intent + "' has no text");
  }
  auto slots = TemplateSlots(t.text);
  if (!slots.ok()) return slots.status().WithContext("intent template for '" + t.intent + "'");
  std::string intent = t.intent;
  templates_[intent] = Compiled{std::move(t), std::move(*slots)};
  return Status::Ok();
}

bool IntentCache::HasStaticTemplate(std::string_view intent) const {
  auto it = templates_.find(std::string(intent));
  return it != templates_.end() && it->second.slots.empty() && it->second.t.tool.empty();
}

bool IntentCache::HasTemplate(std::string_view intent) const {
  return templates_.count(std::string(intent)) > 0;
}

L1Result IntentCache::Answer(const IntentPrediction& prediction,
                             const std::vector<Entity>& entities, const SlotMap& context,
                             SlotTool* tool) const {
  L1Result r;
  r.intent = prediction.intent;
  if (!prediction.accepted) {
    r.reason = "intent not accepted (score below the calibrated threshold)";
    return r;
  }
  if (prediction.confidence < config_.min_confidence) {
    r.reason = "confidence below intent_cache.min_confidence";
    return r;
  }
  auto it = templates_.find(prediction.intent);
  if (it == templates_.end()) {
    r.reason = "no template for intent '" + prediction.intent + "'";
    return r;
  }
  const Compiled& c = it->second;
  SlotMap slots = context;
  std::vector<std::string_view> from_entities;
  for (const Entity& e : entities) {
    // The first entity of each type fills its slot; the caller's words beat context defaults.
    std::string_view name = EntityTypeName(e.type);
    bool seen = false;
    for (std::string_view f : from_entities) seen = seen || f == name;
    if (seen) continue;
    from_entities.push_back(name);
    slots[std::string(name)] = e.value;
  }
  if (!c.t.tool.empty()) {
    if (tool == nullptr) {
      r.reason = "template needs tool '" + c.t.tool + "' and none is available";
      return r;
    }
    auto filled = tool->Call(c.t.tool, slots);
    if (!filled.ok()) {
      r.reason = "tool '" + c.t.tool + "' failed: " + filled.status().ToString();
      return r;
    }
    for (auto& [k, v] : *filled) slots[k] = v;
    r.personal = true;
  }
  for (const std::string& s : c.slots) {
    auto sit = slots.find(s);
    if (sit == slots.end() || sit->second.empty()) r.missing_slots.push_back(s);
  }
  if (!r.missing_slots.empty()) {
    if (config_.ask_clarifying_question && !c.t.clarify.empty()) {
      r.outcome = L1Outcome::kClarify;
      r.text = c.t.clarify;
      r.personal = false;
    } else {
      r.reason = "slot '" + r.missing_slots[0] + "' is not filled";
    }
    return r;
  }
  auto text = FillTemplate(c.t.text, slots);
  if (!text.ok()) {
    r.reason = text.status().message();
    return r;
  }
  r.outcome = L1Outcome::kAnswer;
  r.text = std::move(*text);
  return r;
}

}  // namespace hotline::answer
