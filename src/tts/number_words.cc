#include "tts/number_words.h"

#include <array>

namespace hotline::tts {
namespace {

constexpr std::array<const char*, 20> kOnes = {
    "zero",    "one",     "two",       "three",    "four",     "five",    "six",
    "seven",   "eight",   "nine",      "ten",      "eleven",   "twelve",  "thirteen",
    "fourteen", "fifteen", "sixteen",  "seventeen", "eighteen", "nineteen"};
constexpr std::array<const char*, 10> kTens = {"",      "",      "twenty",  "thirty", "forty",
                                               "fifty", "sixty", "seventy", "eighty", "ninety"};
constexpr std::array<const char*, 7> kScales = {"",         "thousand",    "million",    "billion",
                                                "trillion", "quadrillion", "quintillion"};

void Append(std::string& out, std::string_view word) {
  if (!out.empty()) out += ' ';
  out += word;
}

// 0 < n < 1000.
std::string Hundreds(unsigned n) {
  std::string out;
  if (n >= 100) {
    out = std::string(kOnes[n / 100]) + " hundred";
    n %= 100;
  }
  if (n >= 20) {
    std::string t = kTens[n / 10];
    if (n % 10) t += std::string("-") + kOnes[n % 10];
    Append(out, t);
  } else if (n > 0) {
    Append(out, kOnes[n]);
  }
  return out;
}

}  // namespace

std::string CardinalWords(uint64_t n) {
  if (n == 0) return "zero";
  std::array<unsigned, 7> groups{};
  int count = 0;
  while (n > 0 && count < 7) {
    groups[count++] = static_cast<unsigned>(n % 1000);
    n /= 1000;
  }
  std::string out;
  for (int i = count - 1; i >= 0; --i) {
    if (groups[i] == 0) continue;
    Append(out, Hundreds(groups[i]));
    if (i > 0) Append(out, kScales[i]);
  }
  return out;
}

std::string OrdinalWords(uint64_t n) {
  std::string words = CardinalWords(n);
  size_t start = words.find_last_of(" -");
  start = (start == std::string::npos) ? 0 : start + 1;
  std::string last = words.substr(start);
  static const std::array<std::pair<const char*, const char*>, 8> kIrregular = {{
      {"one", "first"}, {"two", "second"}, {"three", "third"}, {"five", "fifth"},
      {"eight", "eighth"}, {"nine", "ninth"}, {"twelve", "twelfth"}, {"zero", "zeroth"}}};
  for (const auto& [card, ord] : kIrregular) {
    if (last == card) return words.substr(0, start) + ord;
  }
  if (last.back() == 'y') return words.substr(0, start) + last.substr(0, last.size() - 1) + "ieth";
  return words + "th";
}

std::string YearWords(uint64_t n) {
  if (n >= 2000 && n <= 2009) return CardinalWords(n);
  if (n < 1100 || n > 2099) return CardinalWords(n);
  unsigned hi = static_cast<unsigned>(n / 100), lo = static_cast<unsigned>(n % 100);
  if (lo == 0) return Hundreds(hi) + " hundred";
  if (lo < 10) return Hundreds(hi) + " oh " + kOnes[lo];
  return Hundreds(hi) + " " + Hundreds(lo);
}

std::string DigitWords(std::string_view digits) {
  std::string out;
  for (char c : digits) {
    if (c >= '0' && c <= '9') Append(out, kOnes[c - '0']);
  }
  return out;
}

std::optional<uint64_t> ParseGroupedInteger(std::string_view text) {
  if (text.empty() || text.size() > 26) return std::nullopt;
  bool grouped = text.find(',') != std::string_view::npos;
  if (grouped) {
    // First group 1-3 digits, then ",ddd" groups.
    size_t first = text.find(',');
    if (first == 0 || first > 3) return std::nullopt;
    for (size_t i = first; i < text.size(); i += 4) {
      if (text[i] != ',' || i + 4 > text.size()) return std::nullopt;
    }
  }
  uint64_t v = 0;
  int digits = 0;
  for (char c : text) {
    if (c == ',') continue;
    if (c < '0' || c > '9') return std::nullopt;
    if (++digits > 19) return std::nullopt;  // keeps v below 10^19 < 2^64
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

std::string DecimalWords(std::string_view number) {
  size_t dot = number.find('.');
  std::string_view whole = number.substr(0, dot);
  std::optional<uint64_t> w = ParseGroupedInteger(whole);
  if (!w) return "";
  std::string out = CardinalWords(*w);
  if (dot == std::string_view::npos) return out;
  std::string_view frac = number.substr(dot + 1);
  if (frac.empty() || frac.size() > 12) return "";
  for (char c : frac) {
    if (c < '0' || c > '9') return "";
  }
  return out + " point " + DigitWords(frac);
}

std::string MoneyWords(std::string_view major, std::string_view minor, std::string_view unit_one,
                       std::string_view unit_many, std::string_view sub_one,
                       std::string_view sub_many) {
  std::optional<uint64_t> units = ParseGroupedInteger(major.empty() ? "0" : major);
  if (!units) return "";
  uint64_t cents = 0;
  if (!minor.empty()) {
    if (minor.size() > 2) return "";
    for (char c : minor) {
      if (c < '0' || c > '9') return "";
    }
    cents = static_cast<uint64_t>(minor[0] - '0') * 10 + (minor.size() == 2 ? minor[1] - '0' : 0);
  }
  std::string out;
  if (*units > 0 || cents == 0) {
    out = CardinalWords(*units) + " " + std::string(*units == 1 ? unit_one : unit_many);
  }
  if (cents > 0) {
    if (!out.empty()) out += " and ";
    out += CardinalWords(cents) + " " + std::string(cents == 1 ? sub_one : sub_many);
  }
  return out;
}

}  // namespace hotline::tts
