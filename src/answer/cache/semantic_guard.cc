#include "answer/cache/semantic_guard.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <string>
#include <vector>

#include "answer/cache/antonyms.h"
#include "answer/understand/entities.h"
#include "answer/understand/normalize.h"

namespace hotline::answer {
namespace {

using Words = std::vector<std::string_view>;

bool Has(const Words& w, std::string_view x) { return std::find(w.begin(), w.end(), x) != w.end(); }

int Negations(const Words& w) {
  int n = 0;
  for (std::string_view x : w) {
    if (x == "not" || x == "no" || x == "never" || x == "without" || x == "nothing" ||
        x == "none" || x == "nobody" || x == "nor" || x == "neither" || x == "unable" ||
        x == "fail" || x == "failed" || x == "fails") {
      ++n;
    }
  }
  return n;
}

struct Opposites {
  std::vector<std::string_view> a;
  std::vector<std::string_view> b;
};

// Word forms of opposite actions and states.
const std::vector<Opposites>& OppositeActions() {
  static const auto* v = new std::vector<Opposites>{
      {{"cancel", "cancelled", "canceled", "cancelling", "canceling", "cancellation", "terminate",
        "close", "closed", "closing", "deactivate", "deactivated", "stop", "end"},
       {"activate", "activated", "activating", "activation", "open", "opened", "opening", "start",
        "reactivate", "begin", "create", "enable"}},
      {{"lock", "locked", "locking", "block", "blocked", "freeze", "frozen", "freezing", "suspend",
        "suspended"},
       {"unlock", "unlocked", "unlocking", "unblock", "unblocked", "unfreeze", "unfrozen",
        "reinstate"}},
      {{"enable", "enabled", "on"}, {"disable", "disabled", "off"}},
      {{"add", "added", "adding", "link", "linked"},
       {"remove", "removed", "removing", "delete", "deleted", "unlink", "unlinked"}},
      {{"increase", "increased", "raise", "raised", "higher", "more", "up"},
       {"decrease", "decreased", "lower", "lowered", "reduce", "reduced", "less", "down"}},
      {{"deposit", "deposited", "depositing", "top", "topup", "add"},
       {"withdraw", "withdrew", "withdrawn", "withdrawal", "withdrawing"}},
      {{"send", "sent", "sending", "outgoing", "pay", "paid"},
       {"receive", "received", "receiving", "incoming"}},
      {{"buy", "bought", "buying", "purchase"}, {"sell", "sold", "selling"}},
      {{"credit", "credited"}, {"debit", "debited"}},
      {{"accept", "accepted", "approve", "approved"},
       {"decline", "declined", "reject", "rejected", "refuse", "refused", "deny", "denied"}},
      {{"subscribe", "subscribed"}, {"unsubscribe", "unsubscribed"}},
      {{"upgrade", "upgraded"}, {"downgrade", "downgraded"}},
      {{"pause", "paused", "pausing"}, {"resume", "resumed", "resuming", "unpause", "unpaused"}},
      {{"before", "earlier"}, {"after", "later"}},
      {{"maximum", "max", "most"}, {"minimum", "min", "least"}},
  };
  return *v;
}

// Mutually exclusive members of one category: two questions naming different members differ.
const std::vector<std::vector<std::string_view>>& Categories() {
  static const auto* v = new std::vector<std::vector<std::string_view>>{
      {"checking", "savings", "saving", "business", "joint", "current", "investment",
       "retirement"},
      {"visa", "mastercard", "amex", "maestro", "discover"},
      {"dollars", "dollar", "usd", "euros", "euro", "eur", "pounds", "pound", "gbp", "yen",
       "francs", "rupees", "pesos", "bitcoin"},
      {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"},
      {"credit", "debit", "prepaid", "virtual", "physical"},
      {"morning", "afternoon", "evening", "night"},
  };
  return *v;
}

bool IsFiller(std::string_view w) {
  return w == "my" || w == "the" || w == "a" || w == "an" || w == "your" || w == "our" ||
         w == "his" || w == "her" || w == "their" || w == "this" || w == "that" || w == "account" ||
         w == "accounts";
}

// The first content word after any of `preps`, or empty.
// "to" after these words starts an infinitive ("want to pay"), not a destination.
bool BeforeInfinitive(std::string_view w) {
  static constexpr std::array<std::string_view, 22> kWords = {
      "want", "wants", "need", "needs", "like", "how", "going", "have", "has", "able", "trying",
      "try", "wish", "what", "where", "way", "possible", "allowed", "supposed", "due", "order",
      "when"};
  for (std::string_view k : kWords) {
    if (w == k) return true;
  }
  return false;
}

std::string_view RoleAfter(const Words& w, std::initializer_list<std::string_view> preps) {
  for (size_t i = 0; i < w.size(); ++i) {
    bool is_prep = false;
    for (std::string_view p : preps) is_prep = is_prep || w[i] == p;
    if (!is_prep) continue;
    if (w[i] == "to" && i > 0 && BeforeInfinitive(w[i - 1])) continue;
    for (size_t j = i + 1; j < w.size() && j <= i + 3; ++j) {
      if (!IsFiller(w[j])) return w[j];
    }
  }
  return {};
}

bool SameEntities(std::string_view a, std::string_view b) {
  std::vector<Entity> ea = ExtractEntities(a), eb = ExtractEntities(b);
  if (ea.size() != eb.size()) return false;
  auto key = [](const Entity& e) {
    return std::string(EntityTypeName(e.type)) + ":" + e.value + ":" + e.unit;
  };
  std::vector<std::string> ka, kb;
  for (const Entity& e : ea) ka.push_back(key(e));
  for (const Entity& e : eb) kb.push_back(key(e));
  std::sort(ka.begin(), ka.end());
  std::sort(kb.begin(), kb.end());
  return ka == kb;
}

// Placeholders left by PII redaction (<card>, <number>, ...) must match one for one.
std::vector<std::string_view> Placeholders(const Words& w) {
  std::vector<std::string_view> p;
  for (std::string_view x : w) {
    if (x.size() > 2 && x.front() == '<' && x.back() == '>') p.push_back(x);
  }
  std::sort(p.begin(), p.end());
  return p;
}

// `b` is `a` with a negating prefix (install/uninstall, connect/disconnect, activate/deactivate,
// compliant/noncompliant), for words of at least four letters.
bool NegativePrefix(std::string_view a, std::string_view b) {
  for (std::string_view p : {"un", "dis", "de", "non"}) {
    if (a.size() >= 4 && b.size() == a.size() + p.size() && b.substr(0, p.size()) == p &&
        b.substr(p.size()) == a) {
      return true;
    }
  }
  return false;
}

// The same verb with opposite particles: "opt in" / "opt out", "sign in" / "sign out", "log on" /
// "log off", "turn up" / "turn down".
bool OppositeParticles(const Words& wa, const Words& wb) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kPairs = {
      std::pair{"in", "out"}, std::pair{"on", "off"}, std::pair{"up", "down"}};
  auto has_pair = [](const Words& w, std::string_view verb, std::string_view particle) {
    for (size_t i = 1; i < w.size(); ++i) {
      if (w[i] == particle && w[i - 1] == verb) return true;
    }
    return false;
  };
  for (size_t i = 1; i < wa.size(); ++i) {
    for (auto [p, q] : kPairs) {
      for (auto [mine, theirs] : {std::pair{p, q}, std::pair{q, p}}) {
        if (wa[i] == mine && has_pair(wb, wa[i - 1], theirs) && !has_pair(wb, wa[i - 1], mine) &&
            !has_pair(wa, wa[i - 1], theirs)) {
          return true;
        }
      }
    }
  }
  return false;
}

// A word only one question has is the opposite of a word only the other has: WordNet's antonyms
// (show/hide, include/exclude, new/old) or a negating prefix (install/uninstall).
bool OppositeWords(const Words& wa, const Words& wb) {
  Words only_a, only_b;
  for (std::string_view x : wa) {
    if (!Has(wb, x)) only_a.push_back(x);
  }
  for (std::string_view x : wb) {
    if (!Has(wa, x)) only_b.push_back(x);
  }
  if (only_a.empty() || only_b.empty()) return false;
  const Antonyms& antonyms = Antonyms::Shared();
  for (std::string_view x : only_a) {
    for (std::string_view y : only_b) {
      if (NegativePrefix(x, y) || NegativePrefix(y, x) || antonyms.Opposite(x, y)) return true;
    }
  }
  return false;
}

}  // namespace

std::string_view MeaningFlip(std::string_view a, std::string_view b) {
  Words wa = SplitWords(a), wb = SplitWords(b);
  if ((Negations(wa) > 0) != (Negations(wb) > 0)) return "negation";
  for (const Opposites& o : OppositeActions()) {
    bool a_first = false, a_second = false, b_first = false, b_second = false;
    for (std::string_view x : o.a) {
      a_first = a_first || Has(wa, x);
      b_first = b_first || Has(wb, x);
    }
    for (std::string_view x : o.b) {
      a_second = a_second || Has(wa, x);
      b_second = b_second || Has(wb, x);
    }
    if ((a_first && !a_second && b_second && !b_first) ||
        (a_second && !a_first && b_first && !b_second)) {
      return "action";
    }
  }
  if (OppositeParticles(wa, wb) || OppositeWords(wa, wb)) return "action";
  std::string_view from_a = RoleAfter(wa, {"from"}), from_b = RoleAfter(wb, {"from"});
  std::string_view to_a = RoleAfter(wa, {"to", "into", "onto", "towards"});
  std::string_view to_b = RoleAfter(wb, {"to", "into", "onto", "towards"});
  if ((!from_a.empty() && !from_b.empty() && from_a != from_b) ||
      (!to_a.empty() && !to_b.empty() && to_a != to_b) ||
      (!from_a.empty() && from_a == to_b && from_a != to_a) ||
      (!from_b.empty() && from_b == to_a && from_b != to_b)) {
    return "roles";
  }
  if (!SameEntities(a, b) || Placeholders(wa) != Placeholders(wb)) return "entities";
  for (const auto& cat : Categories()) {
    std::vector<std::string_view> ca, cb;
    for (std::string_view x : cat) {
      if (Has(wa, x)) ca.push_back(x);
      if (Has(wb, x)) cb.push_back(x);
    }
    if (!ca.empty() && !cb.empty() && ca != cb) return "entities";
  }
  return {};
}

}  // namespace hotline::answer
