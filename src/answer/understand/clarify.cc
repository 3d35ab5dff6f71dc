#include "answer/understand/clarify.h"

#include <cmath>
#include <set>

#include "answer/understand/normalize.h"

namespace hotline::answer {
namespace {

bool InUnit(double v) { return std::isfinite(v) && v >= 0 && v <= 1; }

// Whole-phrase matches: the reply is one of these, or starts with one ("yes please", "no I
// meant").
bool SaysAny(const std::vector<std::string_view>& words, std::initializer_list<std::string_view> phrases) {
  for (std::string_view p : phrases) {
    const std::vector<std::string_view> pw = SplitWords(p);
    if (pw.empty() || pw.size() > words.size()) continue;
    bool match = true;
    for (size_t i = 0; i < pw.size() && match; ++i) match = words[i] == pw[i];
    if (match) return true;
  }
  return false;
}

bool Contains(const std::vector<std::string_view>& words, std::string_view w) {
  for (std::string_view x : words) {
    if (x == w) return true;
  }
  return false;
}

// Content words of a topic title ("Cancel order" -> cancel, order).
std::set<std::string> TopicWords(const std::string& topic) {
  static const std::set<std::string_view> kStop = {"a", "an", "the", "my", "your", "of", "to",
                                                   "for", "and", "or", "in", "on", "about"};
  std::set<std::string> out;
  const std::string normalized = NormalizeText(topic);
  for (std::string_view w : SplitWords(normalized)) {
    if (!kStop.count(w)) out.emplace(w);
  }
  return out;
}

std::string Fill(std::string text, std::string_view key, const std::string& value) {
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size())) {
    text.replace(at, key.size(), value);
  }
  return text;
}

// English titles are written for the eye ("Cancel order"); in a sentence they read lower-case.
std::string InSentence(const std::string& topic) {
  std::string t = topic;
  if (t.size() >= 2 && t[0] >= 'A' && t[0] <= 'Z' && !(t[1] >= 'A' && t[1] <= 'Z')) t[0] += 32;
  return t;
}

}  // namespace

Status ClarifyConfig::Validate() const {
  if (when != "before_tiers" && when != "before_fallback") {
    return InvalidArgumentError("when must be before_tiers or before_fallback, got '" + when + "'");
  }
  if (!InUnit(choice_min_top_two) || !InUnit(choice_max_margin) ||
      !InUnit(confirm_min_probability)) {
    return InvalidArgumentError(
        "choice_min_top_two, choice_max_margin and confirm_min_probability must be in [0, 1]");
  }
  if (choice_text.find("{a}") == std::string::npos || choice_text.find("{b}") == std::string::npos) {
    return InvalidArgumentError("choice_text must name both topics, {a} and {b}");
  }
  if (confirm_text.find("{a}") == std::string::npos) {
    return InvalidArgumentError("confirm_text must name the topic, {a}");
  }
  if (choice_text.size() > 500 || confirm_text.size() > 500) {
    return InvalidArgumentError("choice_text and confirm_text must be at most 500 bytes");
  }
  return Status::Ok();
}

std::optional<PendingClarification> DecideClarification(
    const IntentPrediction& p, const ClarifyConfig& config,
    const std::function<std::string(const std::string& intent)>& topic_of) {
  if (!config.enabled || p.accepted || p.intent.empty()) return std::nullopt;
  const std::string a = topic_of(p.intent);
  if (a.empty()) return std::nullopt;
  if (!p.runner_up.empty() && p.runner_up != p.intent && p.top_two >= config.choice_min_top_two &&
      p.margin <= config.choice_max_margin) {
    const std::string b = topic_of(p.runner_up);
    if (!b.empty() && b != a) {
      return PendingClarification{PendingClarification::Kind::kChoice, {p.intent, p.runner_up},
                                  {a, b}, ""};
    }
  }
  if (config.confirm_min_probability < 1 && p.probability >= config.confirm_min_probability) {
    return PendingClarification{PendingClarification::Kind::kConfirm, {p.intent}, {a}, ""};
  }
  return std::nullopt;
}

std::string ClarificationText(const PendingClarification& pending, const ClarifyConfig& config) {
  if (pending.kind == PendingClarification::Kind::kChoice && pending.topics.size() == 2) {
    return Fill(Fill(config.choice_text, "{a}", InSentence(pending.topics[0])), "{b}",
                InSentence(pending.topics[1]));
  }
  return Fill(config.confirm_text, "{a}", pending.topics.empty() ? "" : InSentence(pending.topics[0]));
}

const std::vector<std::string>& EnglishClarificationReplies() {
  static const std::vector<std::string> kReplies = {
      "yes", "yes please", "yeah", "yep", "yes that is right", "that's right", "correct",
      "exactly", "sure", "okay", "no", "no thanks", "nope", "not really", "not quite",
      "no that's wrong", "neither", "neither of them", "the first one", "the second one",
      "the first", "the second", "the other one"};
  return kReplies;
}

ClarificationReply ResolveClarification(const PendingClarification& pending,
                                        std::string_view normalized) {
  using Outcome = ClarificationReply::Outcome;
  const std::vector<std::string_view> words = SplitWords(normalized);
  if (words.empty() || pending.intents.empty()) return {};
  // Chinese replies are one word per character after NormalizeText: "是 的", "不 是".
  const bool no = SaysAny(words, {"no", "nope", "nah", "not really", "not quite", "wrong",
                                  "neither", "\u4e0d", "\u6ca1 \u6709", "\u90fd \u4e0d"});
  const bool yes = !no && SaysAny(words, {"yes", "yeah", "yep", "yup", "correct", "right",
                                          "that is right", "exactly", "sure", "ok", "okay",
                                          "\u662f", "\u5bf9", "\u55ef", "\u597d", "\u6ca1 \u9519"});
  if (pending.kind == PendingClarification::Kind::kConfirm) {
    if (yes) return {Outcome::kChosen, pending.intents[0]};
    if (no) return {Outcome::kDeclined, ""};
    return {};
  }
  // A choice: by position, then by the words of one topic and not the other.
  const bool first = SaysAny(words, {"1", "first", "the first", "the first one", "former",
                                     "the former", "\u7b2c 1", "\u7b2c \u4e00", "\u524d"});
  const bool second = SaysAny(words, {"2", "second", "the second", "the second one", "latter",
                                      "the latter", "the other", "the other one", "\u7b2c 2", "\u7b2c \u4e8c",
                                      "\u540e"});
  if (first != second) return {Outcome::kChosen, pending.intents[first ? 0 : 1]};
  if (no && !first && !second) {
    // "No, the second" was handled above; a bare "no" / "neither" declines both.
    bool names_one = false;
    for (const std::string& topic : pending.topics) {
      for (const std::string& w : TopicWords(topic)) names_one = names_one || Contains(words, w);
    }
    if (!names_one) return {Outcome::kDeclined, ""};
  }
  int hits[2] = {0, 0};
  for (int k = 0; k < 2 && k < static_cast<int>(pending.topics.size()); ++k) {
    for (const std::string& w : TopicWords(pending.topics[k])) hits[k] += Contains(words, w) ? 1 : 0;
  }
  if (hits[0] != hits[1]) return {Outcome::kChosen, pending.intents[hits[0] > hits[1] ? 0 : 1]};
  return {};
}

}  // namespace hotline::answer
