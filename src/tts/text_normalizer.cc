#include "tts/text_normalizer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <optional>
#include <vector>

#include "common/utf8.h"
#include "tts/chinese_speech_text.h"
#include "tts/number_words.h"
#include "tts/text_cleanup.h"

namespace hotline::tts {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsUpper(char c) { return c >= 'A' && c <= 'Z'; }
bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsDigit);
}
std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// ---- Stage 5: words (stages 1-4 and the final spacing are in text_cleanup.cc) ---------------

// E-mail addresses are read out ("anna at example dot com").
bool LooksLikeEmail(std::string_view w) {
  size_t at = w.find('@');
  if (at == 0 || at == w.npos || w.find('@', at + 1) != w.npos) return false;
  size_t dot = w.rfind('.');
  if (dot == w.npos || dot < at + 2 || dot + 2 > w.size()) return false;
  for (char c : w) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr("@._-+", c)) return false;
  }
  return true;
}

std::string SpeakEmail(std::string_view w) {
  std::string out;
  for (char c : w) {
    if (c == '@') out += " at ";
    else if (c == '.') out += " dot ";
    else if (c == '_') out += " underscore ";
    else if (c == '-') out += " dash ";
    else if (c == '+') out += " plus ";
    else out += c;
  }
  return out;
}

struct Token {
  std::string prefix;  // opening quotes/brackets
  std::string core;
  std::string suffix;  // closing punctuation
};

std::vector<Token> Tokenize(std::string_view text) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i == start) break;
    std::string_view w = text.substr(start, i - start);
    Token t;
    size_t a = 0;
    while (a < w.size() && std::strchr("\"'([{", w[a]) != nullptr) ++a;
    size_t b = w.size();
    while (b > a && std::strchr("\"')]},.;:!?", w[b - 1]) != nullptr) --b;
    t.prefix = std::string(w.substr(0, a));
    t.core = std::string(w.substr(a, b - a));
    t.suffix = std::string(w.substr(b));
    tokens.push_back(std::move(t));
  }
  return tokens;
}

constexpr std::array<const char*, 12> kMonths = {"January", "February", "March",     "April",
                                                 "May",     "June",     "July",      "August",
                                                 "September", "October", "November", "December"};

// "Jan", "jan.", "January" → 1..12; 0 when not a month.
int MonthIndex(std::string_view w) {
  std::string l = Lower(w);
  if (l == "sept") return 9;
  for (int m = 0; m < 12; ++m) {
    std::string full = Lower(kMonths[m]);
    if (l == full || (l.size() == 3 && full.starts_with(l))) return m + 1;
  }
  return 0;
}

bool IsCodeKeyword(std::string_view w) {
  static const std::array<const char*, 26> kKeywords = {
      "order",   "account", "acct",   "reference",   "ref",     "confirmation", "tracking",
      "ticket",  "invoice", "case",   "member",      "customer", "policy",      "id",
      "number",  "no",      "pin",    "code",        "claim",   "transaction",  "card",
      "serial",  "zip",     "extension", "ext",      "booking"};
  std::string l = Lower(w);
  if (l == "#") return true;
  for (const char* k : kKeywords) {
    if (l == k) return true;
  }
  return false;
}

bool IsYearContext(std::string_view w) {
  static const std::array<const char*, 12> kWords = {"in",     "since", "year",  "of",
                                                     "by",     "from",  "until", "till",
                                                     "before", "after", "during", "fiscal"};
  std::string l = Lower(w);
  for (const char* k : kWords) {
    if (l == k) return true;
  }
  return MonthIndex(w) > 0;
}

// "A12-34" → "A one two three four": letters upper-cased one by one, digits as words.
std::string SpellCode(std::string_view code) {
  std::string out;
  for (char c : code) {
    if (IsDigit(c)) out += DigitWords(std::string_view(&c, 1));
    else if (IsAlpha(c)) out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    else continue;
    out += ' ';
  }
  if (!out.empty()) out.pop_back();
  return out;
}

struct Currency {
  const char* symbol;
  const char* code;
  const char* one;
  const char* many;
  const char* sub_one;
  const char* sub_many;
};
constexpr std::array<Currency, 3> kCurrencies = {{
    {"$", "usd", "dollar", "dollars", "cent", "cents"},
    {"\xE2\x82\xAC", "eur", "euro", "euros", "cent", "cents"},
    {"\xC2\xA3", "gbp", "pound", "pounds", "penny", "pence"},
}};

const Currency* CurrencyByWord(std::string_view w) {
  std::string l = Lower(w);
  for (const auto& c : kCurrencies) {
    if (l == c.code || l == c.many || l == c.one) return &c;
  }
  return nullptr;
}

bool IsScaleWord(std::string_view w) {
  std::string l = Lower(w);
  return l == "thousand" || l == "million" || l == "billion" || l == "trillion";
}

// Amount "12.50" / "1,200" with a currency → words; empty when malformed.
std::string AmountWords(std::string_view amount, const Currency& cur, std::string_view scale) {
  size_t dot = amount.find('.');
  std::string_view major = amount.substr(0, dot);
  std::string_view minor = dot == amount.npos ? std::string_view() : amount.substr(dot + 1);
  if (!scale.empty()) {  // "$2.5 million" → "two point five million dollars"
    std::string n = DecimalWords(amount);
    return n.empty() ? "" : n + " " + Lower(scale) + " " + cur.many;
  }
  if (minor.size() > 2) {
    std::string n = DecimalWords(amount);
    return n.empty() ? "" : n + " " + cur.many;
  }
  return MoneyWords(major, minor, cur.one, cur.many, cur.sub_one, cur.sub_many);
}

std::optional<std::string> TimeWords(std::string_view core, std::string_view ampm) {
  size_t colon = core.find(':');
  if (colon == core.npos || colon == 0 || colon > 2 || core.size() != colon + 3) return std::nullopt;
  std::string_view h = core.substr(0, colon), m = core.substr(colon + 1);
  if (!AllDigits(h) || !AllDigits(m)) return std::nullopt;
  int hour = std::stoi(std::string(h)), minute = std::stoi(std::string(m));
  if (hour > 23 || minute > 59) return std::nullopt;
  std::string out = CardinalWords(static_cast<uint64_t>(hour));
  if (minute == 0) {
    if (ampm.empty()) out += hour <= 12 ? " o'clock" : " hundred";
  } else if (minute < 10) {
    out += " oh " + CardinalWords(static_cast<uint64_t>(minute));
  } else {
    out += " " + CardinalWords(static_cast<uint64_t>(minute));
  }
  if (!ampm.empty()) out += " " + std::string(ampm);
  return out;
}

// "am", "a.m", "AM", "pm" → "a m" / "p m"; "" otherwise.
std::string AmPm(std::string_view w) {
  std::string l = Lower(w);
  l.erase(std::remove(l.begin(), l.end(), '.'), l.end());
  if (l == "am") return "a m";
  if (l == "pm") return "p m";
  return "";
}

std::optional<std::string> DateWords(int year, int month, int day) {
  if (month < 1 || month > 12 || day < 1 || day > 31) return std::nullopt;
  std::string out = std::string(kMonths[month - 1]) + " " + OrdinalWords(static_cast<uint64_t>(day));
  if (year >= 0) out += ", " + YearWords(static_cast<uint64_t>(year));
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    parts.push_back(s.substr(start, p == s.npos ? s.npos : p - start));
    if (p == s.npos) break;
    start = p + 1;
  }
  return parts;
}

// Digit groups joined by '-' or '.' with 7+ digits in all (phone numbers): "five five five, ...".
std::optional<std::string> PhoneWords(std::string_view core) {
  std::string_view body = core;
  std::string out;
  if (!body.empty() && body[0] == '+') {
    out = "plus ";
    body.remove_prefix(1);
  }
  char sep = body.find('-') != body.npos ? '-' : '.';
  auto groups = Split(body, sep);
  if (groups.size() < 2) return std::nullopt;
  size_t digits = 0;
  for (auto g : groups) {
    if (!AllDigits(g) || g.size() > 4) return std::nullopt;
    digits += g.size();
  }
  if (digits < 7) return std::nullopt;
  for (size_t i = 0; i < groups.size(); ++i) {
    out += DigitWords(groups[i]);
    if (i + 1 < groups.size()) out += ", ";
  }
  return out;
}

struct Abbreviation {
  const char* written;
  const char* spoken;
  bool title;  // precedes a name: never ends a sentence
};
constexpr std::array<Abbreviation, 36> kAbbreviations = {{
    {"Mr.", "Mister", true},        {"Mrs.", "Missus", true},      {"Ms.", "Miz", true},
    {"Prof.", "Professor", true},   {"Jr.", "Junior", false},      {"Sr.", "Senior", false},
    {"Ave.", "Avenue", false},      {"Blvd.", "Boulevard", false}, {"Rd.", "Road", false},
    {"Ln.", "Lane", false},         {"Apt.", "Apartment", true},   {"Ste.", "Suite", true},
    {"Mt.", "Mount", true},         {"approx.", "approximately", false},
    {"Approx.", "Approximately", false}, {"appt.", "appointment", false},
    {"dept.", "department", false}, {"Dept.", "Department", false}, {"est.", "estimated", false},
    {"etc.", "et cetera", false},   {"e.g.", "for example", false}, {"i.e.", "that is", false},
    {"vs.", "versus", false},       {"Inc.", "Incorporated", false}, {"Ltd.", "Limited", false},
    {"Corp.", "Corporation", false}, {"Co.", "Company", false},    {"qty.", "quantity", false},
    {"ext.", "extension", true},    {"Ext.", "Extension", true},   {"tel.", "telephone", true},
    {"Tel.", "Telephone", true},    {"U.S.", "U S", false},        {"min.", "minutes", false},
    {"hrs.", "hours", false},       {"Fig.", "Figure", true},
}};

struct Unit {
  const char* written;
  const char* one;
  const char* many;
};
constexpr std::array<Unit, 16> kUnits = {{
    {"kg", "kilogram", "kilograms"}, {"km", "kilometer", "kilometers"}, {"lb", "pound", "pounds"},
    {"lbs", "pound", "pounds"},      {"gb", "gigabyte", "gigabytes"},   {"mb", "megabyte", "megabytes"},
    {"tb", "terabyte", "terabytes"}, {"min", "minute", "minutes"},      {"mins", "minute", "minutes"},
    {"hr", "hour", "hours"},         {"hrs", "hour", "hours"},          {"ms", "millisecond", "milliseconds"},
    {"mph", "mile per hour", "miles per hour"}, {"ft", "foot", "feet"}, {"mi", "mile", "miles"},
    {"x", "times", "times"},
}};

class WordExpander {
 public:
  WordExpander(const TextNormalizerConfig& config, std::vector<Token> tokens)
      : config_(config), t_(std::move(tokens)) {}

  std::string Run() {
    for (i_ = 0; i_ < t_.size(); ++i_) {
      Token& tok = t_[i_];
      std::string words = Expand(tok);
      Emit(tok.prefix + words + tok.suffix);
    }
    return out_;
  }

 private:
  void Emit(const std::string& s) {
    if (s.empty()) return;
    if (!out_.empty()) out_ += ' ';
    out_ += s;
  }
  const Token* Next(size_t k = 1) const { return i_ + k < t_.size() ? &t_[i_ + k] : nullptr; }
  const Token* Prev() const { return i_ > 0 ? &t_[i_ - 1] : nullptr; }
  // Consumes the next token (its words already folded into the current one); keeps its suffix.
  void Swallow(Token& tok) {
    tok.suffix = t_[i_ + 1].suffix;
    ++i_;
  }
  bool SuffixStartsWithDot(const Token& t) const { return !t.suffix.empty() && t.suffix[0] == '.'; }

  std::string Expand(Token& tok) {
    std::string_view core = tok.core;
    if (core.empty()) return "";
    if (auto w = ExpandAmount(tok, core)) return *w;
    if (auto w = ExpandTime(tok, core)) return *w;
    if (auto w = ExpandCodeDateOrPhone(tok, core)) return *w;
    if (auto w = ExpandNumberWithText(tok, core)) return *w;
    return ExpandRest(tok, core);
  }

  // Prices, amounts and percentages; nullopt when `core` is none of them.
  std::optional<std::string> ExpandAmount(Token& tok, std::string_view core) {
    // Prices and amounts.
    for (const auto& cur : kCurrencies) {
      std::string_view c = core;
      bool negative = false;
      if (!c.empty() && c[0] == '-') {
        negative = true;
        c.remove_prefix(1);
      }
      if (c.starts_with(cur.symbol)) {
        std::string_view amount = c.substr(std::strlen(cur.symbol));
        if (amount.empty() || !IsDigit(amount[0])) continue;
        std::string scale;
        const Token* n = Next();
        if (n != nullptr && n->prefix.empty() && IsScaleWord(n->core)) scale = n->core;
        std::string w = AmountWords(amount, cur, scale);
        if (!w.empty()) {
          if (!scale.empty()) Swallow(tok);
          return (negative ? "minus " : "") + w;
        }
      }
    }
    // "12.50 USD", "5 euros".
    if (const Token* n = Next(); n != nullptr && tok.suffix.empty() && n->prefix.empty() &&
                                IsDigit(core[0])) {
      if (const Currency* cur = CurrencyByWord(n->core)) {
        std::string w = AmountWords(core, *cur, "");
        if (!w.empty()) {
          Swallow(tok);
          return w;
        }
      }
    }
    // Percentages.
    if (core.size() > 1 && core.back() == '%') {
      std::string_view n = core.substr(0, core.size() - 1);
      bool negative = n[0] == '-';
      if (negative) n.remove_prefix(1);
      std::string w = DecimalWords(n);
      if (!w.empty()) return (negative ? "minus " : "") + w + " percent";
    }
    return std::nullopt;
  }

  // Clock times; nullopt when `core` is none.
  std::optional<std::string> ExpandTime(Token& tok, std::string_view core) {
    // Times: "9:30", "9:30am", "9:30 p.m.".
    if (core.find(':') != core.npos) {
      std::string_view clock = core;
      std::string ampm;
      for (std::string_view s : {"am", "pm", "AM", "PM"}) {
        if (clock.size() > 2 && clock.ends_with(s)) {
          ampm = AmPm(s);
          clock.remove_suffix(2);
        }
      }
      if (ampm.empty() && tok.suffix.empty() && Next() != nullptr) ampm = AmPm(Next()->core);
      if (auto w = TimeWords(clock, ampm)) {
        if (ampm.size() && clock.size() == core.size()) Swallow(tok);
        return *w;
      }
    }
    // "9am", "11pm", "9 AM".
    {
      std::string l = Lower(core);
      if (l.size() >= 3 && l.size() <= 4 && (l.ends_with("am") || l.ends_with("pm")) &&
          AllDigits(l.substr(0, l.size() - 2))) {
        int h = std::stoi(l.substr(0, l.size() - 2));
        if (h >= 1 && h <= 12) return CardinalWords(static_cast<uint64_t>(h)) + " " + AmPm(l.substr(l.size() - 2));
      }
      if (AllDigits(core) && core.size() <= 2 && tok.suffix.empty() && Next() != nullptr) {
        std::string ap = AmPm(Next()->core);
        int h = std::stoi(std::string(core));
        if (!ap.empty() && h >= 1 && h <= 12) {
          Swallow(tok);
          return CardinalWords(static_cast<uint64_t>(h)) + " " + ap;
        }
      }
    }
    return std::nullopt;
  }

  // Order codes after '#', dates, fractions and phone numbers; nullopt when none.
  std::optional<std::string> ExpandCodeDateOrPhone(Token& tok, std::string_view core) {
    // "#A12345" / "#12345".
    if (core[0] == '#' && core.size() > 1) {
      std::string_view rest = core.substr(1);
      if (std::all_of(rest.begin(), rest.end(), [](char c) { return IsDigit(c) || IsAlpha(c) || c == '-'; })) {
        return "number " + SpellCode(rest);
      }
    }
    // Dates: 03/05/2024, 3/5/24, 2024-03-05; fractions and 24/7.
    if (core.find('/') != core.npos) {
      auto parts = Split(core, '/');
      bool digits = std::all_of(parts.begin(), parts.end(), [](std::string_view p) { return AllDigits(p) && p.size() <= 4; });
      if (digits && parts.size() == 3) {
        int y = std::stoi(std::string(parts[2]));
        if (parts[2].size() == 2) y += 2000;
        if (auto w = DateWords(y, std::stoi(std::string(parts[0])), std::stoi(std::string(parts[1])))) return *w;
        return CardinalWords(std::stoull(std::string(parts[0]))) + " slash " +
               CardinalWords(std::stoull(std::string(parts[1]))) + " slash " +
               CardinalWords(std::stoull(std::string(parts[2])));
      }
      if (digits && parts.size() == 2) {
        if (core == "24/7") return "twenty-four seven";
        uint64_t a = std::stoull(std::string(parts[0])), b = std::stoull(std::string(parts[1]));
        if (a == 1 && b == 2) return "one half";
        if (b == 4 && (a == 1 || a == 3)) return CardinalWords(a) + (a == 1 ? " quarter" : " quarters");
        return CardinalWords(a) + " over " + CardinalWords(b);
      }
    }
    if (core.size() == 10 && core[4] == '-' && core[7] == '-' && AllDigits(core.substr(0, 4)) &&
        AllDigits(core.substr(5, 2)) && AllDigits(core.substr(8, 2))) {
      if (auto w = DateWords(std::stoi(std::string(core.substr(0, 4))),
                             std::stoi(std::string(core.substr(5, 2))),
                             std::stoi(std::string(core.substr(8, 2))))) {
        return *w;
      }
    }
    // Phone numbers: 555-123-4567, +1-555-123-4567, 555.123.4567, "(555) 123-4567".
    if (auto w = PhoneWords(core)) return *w;
    if (tok.prefix == "(" && tok.suffix == ")" && AllDigits(core) && core.size() == 3) {
      tok.prefix.clear();
      tok.suffix = ",";
      return DigitWords(core);
    }
    return std::nullopt;
  }

  // Ordinals, month names, numbers with units, letter-and-digit codes; nullopt when none.
  std::optional<std::string> ExpandNumberWithText(Token& tok, std::string_view core) {
    // Ordinals: 1st, 22nd, 3rd, 5th.
    if (core.size() >= 3) {
      std::string l = Lower(core.substr(core.size() - 2));
      std::string_view num = core.substr(0, core.size() - 2);
      if ((l == "st" || l == "nd" || l == "rd" || l == "th") && AllDigits(num) && num.size() <= 9) {
        return OrdinalWords(std::stoull(std::string(num)));
      }
    }
    // Month name: "March 5th, 2024", "Jan. 3".
    if (int month = MonthIndex(core); month > 0 && (IsUpper(core[0]))) {
      std::string name = kMonths[month - 1];
      if (SuffixStartsWithDot(tok)) tok.suffix.erase(0, 1);
      return name;
    }
    // Numbers with units: 5GB, 30min, 2x.
    {
      size_t d = 0;
      while (d < core.size() && (IsDigit(core[d]) || core[d] == '.' || core[d] == ',')) ++d;
      if (d > 0 && d < core.size() && IsDigit(core[0])) {
        std::string unit = Lower(core.substr(d));
        for (const auto& u : kUnits) {
          if (unit == u.written) {
            std::string n = DecimalWords(core.substr(0, d));
            if (!n.empty()) return n + " " + (core.substr(0, d) == "1" ? u.one : u.many);
          }
        }
      }
    }
    // Codes mixing letters and digits: A12345, AB-1234, X7Y2 (COVID-19 style words keep the word).
    {
      int letters = 0, digits = 0;
      bool ok = true;
      for (char c : core) {
        if (IsAlpha(c)) ++letters;
        else if (IsDigit(c)) ++digits;
        else if (c != '-') ok = false;
      }
      if (ok && letters > 0 && digits > 0) {
        if (digits >= 3 || letters <= 2) return SpellCode(core);
        size_t split = core.find_first_of("0123456789");
        std::string_view word = core.substr(0, split);
        while (!word.empty() && word.back() == '-') word.remove_suffix(1);
        std::string_view num = core.substr(split);
        if (AllDigits(num) && std::all_of(word.begin(), word.end(), IsAlpha)) {
          return std::string(word) + " " + CardinalWords(std::stoull(std::string(num)));
        }
        return SpellCode(core);
      }
    }
    return std::nullopt;
  }

  // Plain numbers, abbreviations, symbols, addresses and ranges; else the word as written.
  std::string ExpandRest(Token& tok, std::string_view core) {
    // Plain numbers.
    {
      std::string_view n = core;
      bool negative = false;
      if (n.size() > 1 && n[0] == '-' && IsDigit(n[1])) {
        negative = true;
        n.remove_prefix(1);
      }
      if (!n.empty() && IsDigit(n[0])) {
        std::string w = NumberWords(n, tok);
        if (!w.empty()) return (negative ? "minus " : "") + w;
      }
    }
    // Abbreviations (the period sits in the suffix after tokenizing).
    if (SuffixStartsWithDot(tok) || core.find('.') != core.npos) {
      std::string written = std::string(core) + ".";
      if (written == "Dr." || written == "St.") return TitleOrPlace(tok, written == "Dr.");
      if (written == "No." && Next() != nullptr && IsDigit(Next()->core.empty() ? 'x' : Next()->core[0])) {
        tok.suffix.erase(0, 1);
        return "number";
      }
      for (const auto& a : kAbbreviations) {
        if (written == a.written) {
          tok.suffix.erase(0, 1);
          KeepSentenceStop(tok, a.title);
          return a.spoken;
        }
      }
    }
    if (core == "&") return "and";
    if (core == "@") return "at";
    if (core == "w/") return "with";
    if (core == "+") return "plus";
    if (core == "=") return "equals";
    if (core.find("://") != core.npos || core.starts_with("www.")) return "";
    if (core.find('@') != core.npos && LooksLikeEmail(core)) {
      return config_.speak_emails ? SpeakEmail(core) : "";
    }
    // Ranges "5-10".
    if (size_t dash = core.find('-'); dash != core.npos && dash > 0) {
      std::string_view a = core.substr(0, dash), b = core.substr(dash + 1);
      if (AllDigits(a) && AllDigits(b) && a.size() <= 6 && b.size() <= 6) {
        return CardinalWords(std::stoull(std::string(a))) + " to " + CardinalWords(std::stoull(std::string(b)));
      }
    }
    return std::string(core);
  }

  // Re-adds the full stop an expanded abbreviation took with it when it ended the sentence.
  void KeepSentenceStop(Token& tok, bool title) {
    if (title) return;
    const Token* n = Next();
    bool ends = n == nullptr || (!n->core.empty() && IsUpper(n->core[0]) && tok.suffix.empty());
    if (ends) tok.suffix.insert(0, ".");
  }

  // "Dr. Smith" → Doctor, "Elm Dr." → Drive; "St. Louis" → Saint, "Main St." → Street.
  std::string TitleOrPlace(Token& tok, bool is_dr) {
    tok.suffix.erase(0, 1);
    const Token* p = Prev();
    const Token* n = Next();
    bool after_name = p != nullptr && !p->core.empty() && p->suffix.empty() &&
                      (IsUpper(p->core[0]) || IsDigit(p->core[0]));
    bool before_name = n != nullptr && !n->core.empty() && IsUpper(n->core[0]) && tok.suffix.empty();
    if (after_name && !(before_name && !IsDigit(p->core[0]) && is_dr)) {
      KeepSentenceStop(tok, false);
      return is_dr ? "Drive" : "Street";
    }
    return is_dr ? "Doctor" : "Saint";
  }

  std::string NumberWords(std::string_view n, const Token& tok) {
    const Token* p = Prev();
    std::string prev = p ? Lower(p->core) : "";
    if (AllDigits(n)) {
      bool keyword = p != nullptr && IsCodeKeyword(p->core);
      bool leading_zero = n.size() > 1 && n[0] == '0';
      if (keyword || leading_zero || n.size() >= static_cast<size_t>(config_.digit_by_digit_min_digits)) {
        return DigitWords(n);
      }
      uint64_t v = std::stoull(std::string(n));
      // Day after a month name.
      if (p != nullptr && MonthIndex(p->core) > 0 && IsUpper(p->core[0]) && v >= 1 && v <= 31) {
        return OrdinalWords(v);
      }
      if (n.size() == 4 && v >= 1100 && v <= 2099 && p != nullptr &&
          (IsYearContext(p->core) || (p->suffix == "," && MonthIndex(p->core) == 0 &&
                                      t_.size() > 1 && i_ >= 2 && MonthIndex(t_[i_ - 2].core) > 0))) {
        return YearWords(v);
      }
      (void)tok;
      return CardinalWords(v);
    }
    return DecimalWords(n);  // "1,250", "3.5"; empty when malformed
  }

  const TextNormalizerConfig& config_;
  std::vector<Token> t_;
  size_t i_ = 0;
  std::string out_;
};

}  // namespace

Status TextNormalizerConfig::Validate() const {
  if (digit_by_digit_min_digits < 2 || digit_by_digit_min_digits > 20) {
    return InvalidArgumentError("digit_by_digit_min_digits must be in [2, 20]");
  }
  if (placeholder_text.size() > 200) return InvalidArgumentError("placeholder_text is too long");
  return Status::Ok();
}

std::string TextNormalizer::Normalize(std::string_view text) const {
  std::string s = CleanCharacters(text);
  s = ReplacePlaceholders(s, config_.placeholder_text);
  s = StripMarkdownBlocks(s);
  s = StripInlineMarkdown(s);
  // Chinese text: numbers are read the Chinese way; the English word rules do not apply.
  if (ContainsHan(s)) return CollapseSpaces(ReadChineseNumbers(s, config_.digit_by_digit_min_digits));
  WordExpander expander(config_, Tokenize(s));
  return CollapseSpaces(expander.Run());
}

}  // namespace hotline::tts
