#include "answer/understand/entities.h"

#include <array>
#include <charconv>
#include <cstdio>

#include "answer/understand/normalize.h"

namespace hotline::answer {
namespace {

bool IsDigits(std::string_view w) {
  if (w.empty()) return false;
  for (char c : w) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool HasDigit(std::string_view w) {
  for (char c : w) {
    if (c >= '0' && c <= '9') return true;
  }
  return false;
}

bool IsAlnumWord(std::string_view w) {
  for (char c : w) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'))) return false;
  }
  return !w.empty();
}

// 1..12 for a month name or abbreviation; 0 otherwise. "may" is handled by the caller.
int MonthNumber(std::string_view w) {
  static constexpr std::array<std::string_view, 12> kFull = {
      "january", "february", "march",     "april",   "may",      "june",
      "july",    "august",   "september", "october", "november", "december"};
  static constexpr std::array<std::string_view, 12> kShort = {
      "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"};
  for (size_t i = 0; i < 12; ++i) {
    if (w == kFull[i] || w == kShort[i]) return static_cast<int>(i + 1);
  }
  if (w == "sept") return 9;
  return 0;
}

int OrdinalWord(std::string_view w) {
  static constexpr std::array<std::string_view, 20> kOrd = {
      "",          "first",      "second",     "third",      "fourth",       "fifth",
      "sixth",     "seventh",    "eighth",     "ninth",      "tenth",        "eleventh",
      "twelfth",   "thirteenth", "fourteenth", "fifteenth",  "sixteenth",    "seventeenth",
      "eighteenth", "nineteenth"};
  for (size_t i = 1; i < kOrd.size(); ++i) {
    if (w == kOrd[i]) return static_cast<int>(i);
  }
  if (w == "twentieth") return 20;
  if (w == "thirtieth") return 30;
  return 0;
}

// Day of month at words[i] ("3", "3rd", "third", "20 first"); sets *len to the words used.
int DayAt(const std::vector<std::string_view>& words, size_t i, size_t* len) {
  if (i >= words.size()) return 0;
  std::string_view w = words[i];
  *len = 1;
  int v = 0;
  size_t digits = 0;
  while (digits < w.size() && w[digits] >= '0' && w[digits] <= '9') ++digits;
  if (digits > 0 && digits <= 2) {
    std::string_view rest = w.substr(digits);
    if (rest.empty() || rest == "st" || rest == "nd" || rest == "rd" || rest == "th") {
      std::from_chars(w.data(), w.data() + digits, v);
      if ((v == 20 || v == 30) && rest.empty() && i + 1 < words.size()) {
        int o = OrdinalWord(words[i + 1]);
        if (o >= 1 && o <= 9 && v + o <= 31) {
          *len = 2;
          return v + o;
        }
      }
      return v >= 1 && v <= 31 ? v : 0;
    }
    return 0;
  }
  v = OrdinalWord(w);
  return v;
}

bool IsYear(std::string_view w) {
  if (w.size() != 4 || !IsDigits(w)) return false;
  return w >= "1900" && w <= "2099";
}

std::string_view CurrencyUnit(std::string_view w) {
  if (w == "dollars" || w == "dollar" || w == "bucks" || w == "usd") return "USD";
  if (w == "pounds" || w == "pound" || w == "quid" || w == "gbp") return "GBP";
  if (w == "euros" || w == "euro" || w == "eur") return "EUR";
  return {};
}

std::string TwoDecimals(std::string_view number) {
  double v = 0;
  std::from_chars(number.data(), number.data() + number.size(), v);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.2f", v);
  return buf;
}

bool IsNumberToken(std::string_view w) {
  if (w.empty() || !(w[0] >= '0' && w[0] <= '9')) return false;
  int dots = 0;
  for (char c : w) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dots <= 1 && w.back() != '.';
}

std::string Pad2(int v) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%02d", v);
  return buf;
}

}  // namespace

std::string_view EntityTypeName(EntityType type) {
  switch (type) {
    case EntityType::kMonth: return "month";
    case EntityType::kDate: return "date";
    case EntityType::kAmount: return "amount";
    case EntityType::kOrderNumber: return "order_number";
    case EntityType::kAccountNumber: return "account_number";
    case EntityType::kNumber: return "number";
  }
  return "number";
}

namespace {

// 1..10 for 一 .. 十 written alone; 0 otherwise.
int LoneChineseNumeral(std::string_view w) {
  static constexpr std::string_view kNumerals[] = {"\u4e00", "\u4e8c", "\u4e09", "\u56db", "\u4e94",
                                                   "\u516d", "\u4e03", "\u516b", "\u4e5d", "\u5341"};
  for (int k = 0; k < 10; ++k) {
    if (w == kNumerals[k]) return k + 1;
  }
  return 0;
}

bool IsAllDigitWord(std::string_view w) {
  if (w.empty()) return false;
  for (char c : w) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

namespace {

// One pass over a question's words. Each matcher looks at words[i] (not yet used by an entity);
// when it recognizes an entity it adds it, marks its words used, may move `i` to the entity's
// last word, and returns true. Matchers are tried in a fixed order (relative months, Chinese
// months and dates, day words, month names, numeric dates, identifiers, then amounts/numbers).
class Extractor {
 public:
  explicit Extractor(std::string_view normalized)
      : w_(SplitWords(normalized)), n_(w_.size()), used_(n_, false) {}

  std::vector<Entity> Run() {
    for (size_t i = 0; i < n_; ++i) {
      if (used_[i]) continue;
      if (RelativeMonth(i) || ChineseMonth(i) || ChineseNumberedMonth(i) || DayWord(i) ||
          MonthName(i) || NumericDate(i) || Identifier(i)) {
        continue;
      }
      NumberOrAmount(i);
    }
    return std::move(out_);
  }

 private:
  void Add(EntityType t, std::string value, std::string unit, size_t b, size_t e) {
    for (size_t k = b; k < e; ++k) used_[k] = true;
    out_.push_back(Entity{t, std::move(value), std::move(unit), b, e});
  }

  // "last month", "this month", "next month".
  bool RelativeMonth(size_t i) {
    const std::string_view t = w_[i];
    if (!(t == "last" || t == "this" || t == "next" || t == "previous" || t == "current") ||
        i + 1 >= n_ || w_[i + 1] != "month") {
      return false;
    }
    std::string v = (t == "last" || t == "previous") ? "last_month"
                    : t == "next"                    ? "next_month"
                                                     : "this_month";
    Add(EntityType::kMonth, v, "", i, i + 2);
    return true;
  }

  // Chinese (one word per character after NormalizeText): 上个月/上月 last month, 这个月/本月
  // this month, 下个月/下月 next month.
  bool ChineseMonth(size_t& i) {
    const std::string_view t = w_[i];
    // 上 这 本 下
    if (!(t == "\u4e0a" || t == "\u8fd9" || t == "\u672c" || t == "\u4e0b")) return false;
    size_t j = i + 1;
    if (j < n_ && w_[j] == "\u4e2a") ++j;  // 个
    if (j >= n_ || w_[j] != "\u6708") return false;  // 月
    const std::string v = t == "\u4e0a"   ? "last_month"
                          : t == "\u4e0b" ? "next_month"
                                          : "this_month";
    Add(EntityType::kMonth, v, "", i, j + 1);
    i = j;
    return true;
  }

  // "10 月" a month, "10 月 5 日/号" a date. A lone numeral stays a character in NormalizeText
  // ("三 月" is March, "三 个 月" three months).
  bool ChineseNumberedMonth(size_t& i) {
    const std::string_view t = w_[i];
    const int lone = LoneChineseNumeral(t);
    if (i + 1 >= n_ || w_[i + 1] != "\u6708" || !(IsAllDigitWord(t) || lone > 0)) return false;
    const int month = lone > 0 ? lone : std::stoi(std::string(t.substr(0, 2)));
    if (!((lone > 0 || t.size() <= 2) && month >= 1 && month <= 12)) return false;
    if (i + 3 < n_ && IsAllDigitWord(w_[i + 2]) && w_[i + 2].size() <= 2 &&
        (w_[i + 3] == "\u65e5" || w_[i + 3] == "\u53f7")) {  // 日 号
      const int day = std::stoi(std::string(w_[i + 2]));
      if (day >= 1 && day <= 31) {
        Add(EntityType::kDate, Pad2(month) + "-" + Pad2(day), "", i, i + 4);
        i += 3;
        return true;
      }
    }
    Add(EntityType::kMonth, Pad2(month), "", i, i + 2);
    i += 1;
    return true;
  }

  bool DayWord(size_t i) {
    const std::string_view t = w_[i];
    if (t != "today" && t != "yesterday" && t != "tomorrow") return false;
    Add(EntityType::kDate, std::string(t), "", i, i + 1);
    return true;
  }

  // Month names, with a day before or after ("march 3rd", "3rd of march").
  bool MonthName(size_t i) {
    const std::string_view t = w_[i];
    int month = MonthNumber(t);
    if (month == 5 && t == "may") {
      size_t l = 0;
      const bool day_next = DayAt(w_, i + 1, &l) > 0;
      const bool prep_before =
          i > 0 && (w_[i - 1] == "in" || w_[i - 1] == "of" || w_[i - 1] == "since" ||
                    w_[i - 1] == "for" || w_[i - 1] == "during" || w_[i - 1] == "until" ||
                    w_[i - 1] == "last");
      if (!day_next && !prep_before) month = 0;
    }
    if (month == 0) return false;
    size_t l = 0;
    int day = DayAt(w_, i + 1, &l);
    if (day > 0) {
      size_t e = i + 1 + l;
      std::string v = Pad2(month) + "-" + Pad2(day);
      if (e < n_ && IsYear(w_[e])) {
        v = std::string(w_[e]) + "-" + v;
        ++e;
      }
      Add(EntityType::kDate, v, "", i, e);
      return true;
    }
    // "3rd of march" / "3 march": the day was seen just before (as a plain number).
    auto free_or_number = [&](size_t k) {
      return !used_[k] || (!out_.empty() && out_.back().type == EntityType::kNumber &&
                           out_.back().first_word == k);
    };
    size_t b = i;
    if (i >= 2 && w_[i - 1] == "of" && free_or_number(i - 2) && DayAt(w_, i - 2, &l) > 0 &&
        l == 1) {
      day = DayAt(w_, i - 2, &l);
      b = i - 2;
    } else if (i >= 1 && free_or_number(i - 1) && DayAt(w_, i - 1, &l) > 0 && l == 1) {
      day = DayAt(w_, i - 1, &l);
      b = i - 1;
    }
    if (day > 0) {
      if (!out_.empty() && out_.back().type == EntityType::kNumber && out_.back().first_word >= b) {
        out_.pop_back();
      }
      Add(EntityType::kDate, Pad2(month) + "-" + Pad2(day), "", b, i + 1);
      return true;
    }
    Add(EntityType::kMonth, Pad2(month), "", i, i + 1);
    return true;
  }

  // Numeric dates after normalization: "2024 03 12" (ISO) or "03 12 2024" (US order).
  bool NumericDate(size_t i) {
    const std::string_view t = w_[i];
    auto number = [](std::string_view s) {
      int v = 0;
      std::from_chars(s.data(), s.data() + s.size(), v);
      return v;
    };
    if (IsYear(t) && i + 2 < n_ && IsDigits(w_[i + 1]) && IsDigits(w_[i + 2]) &&
        w_[i + 1].size() <= 2 && w_[i + 2].size() <= 2) {
      const int mo = number(w_[i + 1]), d = number(w_[i + 2]);
      if (mo >= 1 && mo <= 12 && d >= 1 && d <= 31) {
        Add(EntityType::kDate, std::string(t) + "-" + Pad2(mo) + "-" + Pad2(d), "", i, i + 3);
        return true;
      }
    }
    if (IsDigits(t) && t.size() <= 2 && i + 2 < n_ && IsDigits(w_[i + 1]) &&
        w_[i + 1].size() <= 2 && IsYear(w_[i + 2])) {
      const int mo = number(t), d = number(w_[i + 1]);
      if (mo >= 1 && mo <= 12 && d >= 1 && d <= 31) {
        Add(EntityType::kDate, std::string(w_[i + 2]) + "-" + Pad2(mo) + "-" + Pad2(d), "", i,
            i + 3);
        return true;
      }
    }
    return false;
  }

  // Order and account identifiers: "order number a5531", "account ending in 1234".
  bool Identifier(size_t i) {
    const std::string_view t = w_[i];
    if (t != "order" && t != "tracking" && t != "account") return false;
    size_t j = i + 1;
    while (j < n_ && j <= i + 3 &&
           (w_[j] == "number" || w_[j] == "no" || w_[j] == "id" || w_[j] == "is" ||
            w_[j] == "ending" || w_[j] == "in" || w_[j] == "with" || w_[j] == "num")) {
      ++j;
    }
    if (j >= n_ || w_[j].size() < 4 || w_[j].size() > 32 || !IsAlnumWord(w_[j]) ||
        !HasDigit(w_[j])) {
      return false;
    }
    const bool account = t == "account";
    if (account && !IsDigits(w_[j])) return false;  // account numbers are digits
    Add(account ? EntityType::kAccountNumber : EntityType::kOrderNumber, std::string(w_[j]), "",
        i, j + 1);
    return true;
  }

  // Amounts ("20 dollars", "usd 20"), else a plain number.
  void NumberOrAmount(size_t& i) {
    const std::string_view t = w_[i];
    if (!IsNumberToken(t)) return;
    if (i + 1 < n_ && !CurrencyUnit(w_[i + 1]).empty()) {
      Add(EntityType::kAmount, TwoDecimals(t), std::string(CurrencyUnit(w_[i + 1])), i, i + 2);
      ++i;
      return;
    }
    if (i > 0 && !used_[i - 1] && !CurrencyUnit(w_[i - 1]).empty()) {
      Add(EntityType::kAmount, TwoDecimals(t), std::string(CurrencyUnit(w_[i - 1])), i - 1, i + 1);
      return;
    }
    Add(EntityType::kNumber, std::string(t), "", i, i + 1);
  }

  const std::vector<std::string_view> w_;
  const size_t n_;
  std::vector<bool> used_;
  std::vector<Entity> out_;
};

}  // namespace

std::vector<Entity> ExtractEntities(std::string_view normalized) {
  return Extractor(normalized).Run();
}

}  // namespace hotline::answer
