#include "answer/understand/normalize.h"

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "answer/understand/chinese_text.h"

namespace hotline::answer {
namespace {

bool IsAsciiAlpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }
char Lower(unsigned char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

bool IsEmailChar(unsigned char c) {
  return IsAsciiAlpha(c) || IsDigit(c) || c == '.' || c == '_' || c == '-' || c == '+' || c == '@';
}

// "name@host.tld" (a whitespace-delimited chunk, trailing punctuation already stripped).
bool LooksLikeEmail(std::string_view s) {
  size_t at = s.find('@');
  if (at == std::string_view::npos || at == 0 || s.find('@', at + 1) != std::string_view::npos) {
    return false;
  }
  size_t dot = s.find('.', at + 2);
  if (dot == std::string_view::npos || dot + 1 >= s.size()) return false;
  for (unsigned char c : s) {
    if (!IsEmailChar(c)) return false;
  }
  return IsAsciiAlpha(static_cast<unsigned char>(s.back()));
}

// Splits raw text into lower-cased word tokens (letters/digits/UTF-8 runs), keeping numbers with
// their decimal point, dropping thousands separators, and turning currency signs and '%' into words.
class Tokenizer {
 public:
  explicit Tokenizer(std::vector<std::string>& out) : out_(out) {}

  void Chunk(std::string_view chunk) {
    // Trailing sentence punctuation is never part of an e-mail address.
    std::string_view trimmed = chunk;
    while (!trimmed.empty() && (trimmed.back() == '.' || trimmed.back() == ',' ||
                                trimmed.back() == '?' || trimmed.back() == '!' ||
                                trimmed.back() == ';' || trimmed.back() == ':' ||
                                trimmed.back() == ')' || trimmed.back() == '"')) {
      trimmed.remove_suffix(1);
    }
    while (!trimmed.empty() && (trimmed.front() == '(' || trimmed.front() == '"' ||
                                trimmed.front() == '<')) {
      trimmed.remove_prefix(1);
    }
    if (!trimmed.empty() && trimmed.back() == '>') trimmed.remove_suffix(1);
    if (LooksLikeEmail(trimmed)) {
      std::string w;
      for (unsigned char c : trimmed) w.push_back(Lower(c));
      Emit(std::move(w));
      return;
    }
    size_t i = 0;
    const size_t n = chunk.size();
    while (i < n) {
      unsigned char c = chunk[i];
      if (c == '$') {
        pending_currency_ = "dollars";
        ++i;
      } else if (c == 0xC2 && i + 1 < n && static_cast<unsigned char>(chunk[i + 1]) == 0xA3) {
        pending_currency_ = "pounds";
        i += 2;
      } else if (c == 0xE2 && i + 2 < n && static_cast<unsigned char>(chunk[i + 1]) == 0x82 &&
                 static_cast<unsigned char>(chunk[i + 2]) == 0xAC) {
        pending_currency_ = "euros";
        i += 3;
      } else if (c == '%') {
        Emit("percent");
        ++i;
      } else if (IsAsciiAlpha(c) || IsDigit(c) || c >= 0x80) {
        i = Word(chunk, i);
      } else {
        ++i;  // punctuation: a word break
      }
    }
  }

 private:
  static bool IsApostropheAt(std::string_view s, size_t i, size_t* len) {
    if (s[i] == '\'') {
      *len = 1;
      return true;
    }
    // U+2019 RIGHT SINGLE QUOTATION MARK, what phones and word processors type.
    if (i + 2 < s.size() && static_cast<unsigned char>(s[i]) == 0xE2 &&
        static_cast<unsigned char>(s[i + 1]) == 0x80 && static_cast<unsigned char>(s[i + 2]) == 0x99) {
      *len = 3;
      return true;
    }
    return false;
  }

  size_t Word(std::string_view s, size_t i) {
    std::string w;
    const size_t n = s.size();
    bool all_digits = true;
    while (i < n) {
      unsigned char c = s[i];
      size_t alen = 0;
      if (IsAsciiAlpha(c) || IsDigit(c)) {
        all_digits = all_digits && IsDigit(c);
        w.push_back(Lower(c));
        ++i;
      } else if (c >= 0x80 && !IsApostropheAt(s, i, &alen)) {
        // Multi-byte UTF-8 letters are kept; the currency signs handled in Chunk end a word.
        if ((c == 0xC2 && i + 1 < n && static_cast<unsigned char>(s[i + 1]) == 0xA3) ||
            (c == 0xE2 && i + 1 < n && static_cast<unsigned char>(s[i + 1]) == 0x82)) {
          break;
        }
        all_digits = false;
        w.push_back(static_cast<char>(c));
        ++i;
      } else if (IsApostropheAt(s, i, &alen) && !w.empty() && i + alen < n &&
                 IsAsciiAlpha(static_cast<unsigned char>(s[i + alen]))) {
        w.push_back('\'');
        all_digits = false;
        i += alen;
      } else if ((c == ',' || c == '.') && all_digits && !w.empty() && i + 1 < n &&
                 IsDigit(static_cast<unsigned char>(s[i + 1]))) {
        if (c == '.') w.push_back('.');  // decimal point kept, thousands separator dropped
        ++i;
      } else {
        break;
      }
    }
    bool numeric = !w.empty() && IsDigit(static_cast<unsigned char>(w[0])) && all_digits;
    Emit(std::move(w));
    if (numeric && !pending_currency_.empty()) {
      Emit(pending_currency_);
      pending_currency_.clear();
    }
    return i;
  }

  void Emit(std::string w) {
    if (!w.empty()) out_.push_back(std::move(w));
  }

  std::vector<std::string>& out_;
  std::string pending_currency_;
};

const std::unordered_map<std::string_view, std::string_view>& Contractions() {
  static const auto* m = new std::unordered_map<std::string_view, std::string_view>{
      {"can't", "can not"},     {"cant", "can not"},        {"cannot", "can not"},
      {"won't", "will not"},    {"wont", "will not"},       {"shan't", "shall not"},
      {"ain't", "is not"},      {"dont", "do not"},         {"doesnt", "does not"},
      {"didnt", "did not"},     {"isnt", "is not"},         {"arent", "are not"},
      {"wasnt", "was not"},     {"werent", "were not"},     {"havent", "have not"},
      {"hasnt", "has not"},     {"hadnt", "had not"},       {"couldnt", "could not"},
      {"shouldnt", "should not"}, {"wouldnt", "would not"}, {"mustnt", "must not"},
      {"im", "i am"},           {"ive", "i have"},          {"youre", "you are"},
      {"youve", "you have"},    {"theyre", "they are"},     {"weve", "we have"},
      {"whats", "what is"},     {"thats", "that is"},       {"theres", "there is"},
      {"hows", "how is"},       {"wheres", "where is"},     {"let's", "let us"},
      {"gonna", "going to"},    {"wanna", "want to"},       {"gotta", "got to"},
  };
  return *m;
}

bool IsFiller(std::string_view w) {
  static constexpr std::array<std::string_view, 14> kFillers = {
      "um", "umm", "uhm", "uh", "uhh", "er", "erm", "hmm", "hm", "mm", "mhm", "ah", "eh", "uhuh"};
  for (std::string_view f : kFillers) {
    if (w == f) return true;
  }
  return false;
}

// Subjects whose "'s" means "is" rather than a possessive.
bool IsCopulaSubject(std::string_view w) {
  static constexpr std::array<std::string_view, 12> kWords = {
      "it", "that", "what", "there", "here", "who", "where", "how", "he", "she", "when", "why"};
  for (std::string_view f : kWords) {
    if (w == f) return true;
  }
  return false;
}

// Expands one token's contraction into `out` (one or two words).
void ExpandContraction(const std::string& w, std::vector<std::string>& out) {
  auto it = Contractions().find(w);
  if (it != Contractions().end()) {
    std::string_view v = it->second;
    size_t sp = v.find(' ');
    out.emplace_back(v.substr(0, sp));
    if (sp != std::string_view::npos) out.emplace_back(v.substr(sp + 1));
    return;
  }
  size_t ap = w.find('\'');
  if (ap == std::string::npos) {
    out.push_back(w);
    return;
  }
  std::string head = w.substr(0, ap);
  std::string tail = w.substr(ap + 1);
  if (tail == "t" && head.size() > 1 && head.back() == 'n') {
    head.pop_back();
    out.push_back(head);
    out.emplace_back("not");
  } else if (tail == "re") {
    out.push_back(head);
    out.emplace_back("are");
  } else if (tail == "ve") {
    out.push_back(head);
    out.emplace_back("have");
  } else if (tail == "ll") {
    out.push_back(head);
    out.emplace_back("will");
  } else if (tail == "d") {
    out.push_back(head);
    out.emplace_back("would");
  } else if (tail == "m") {
    out.push_back(head);
    out.emplace_back("am");
  } else if (tail == "s") {
    out.push_back(head);
    if (IsCopulaSubject(head)) out.emplace_back("is");
  } else {
    out.push_back(head + tail);  // o'clock, names: drop the apostrophe
  }
}

int UnitValue(std::string_view w) {
  static constexpr std::array<std::string_view, 20> kUnits = {
      "zero",    "one",     "two",       "three",    "four",     "five",    "six",
      "seven",   "eight",   "nine",      "ten",      "eleven",   "twelve",  "thirteen",
      "fourteen", "fifteen", "sixteen",  "seventeen", "eighteen", "nineteen"};
  for (size_t i = 0; i < kUnits.size(); ++i) {
    if (w == kUnits[i]) return static_cast<int>(i);
  }
  return -1;
}

int TensValue(std::string_view w) {
  static constexpr std::array<std::string_view, 8> kTens = {
      "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"};
  for (size_t i = 0; i < kTens.size(); ++i) {
    if (w == kTens[i]) return static_cast<int>(20 + 10 * i);
  }
  return -1;
}

int64_t ScaleValue(std::string_view w) {
  if (w == "thousand") return 1000;
  if (w == "million") return 1000000;
  if (w == "billion") return 1000000000;
  return 0;
}

bool IsNumberWord(std::string_view w) {
  return UnitValue(w) >= 0 || TensValue(w) >= 0 || w == "hundred" || ScaleValue(w) > 0;
}

bool IsAllDigits(std::string_view w) {
  if (w.empty()) return false;
  for (unsigned char c : w) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

// Rewrites spoken numbers in `words` to digits.
std::vector<std::string> ConvertNumbers(const std::vector<std::string>& words) {
  std::vector<std::string> out;
  out.reserve(words.size());
  const size_t n = words.size();
  size_t i = 0;
  while (i < n) {
    const std::string& w = words[i];
    // "5 thousand" -> "5000".
    if (IsAllDigits(w) && w.size() <= 6 && i + 1 < n && (ScaleValue(words[i + 1]) > 0 ||
                                                         words[i + 1] == "hundred")) {
      int64_t scale = words[i + 1] == "hundred" ? 100 : ScaleValue(words[i + 1]);
      out.push_back(std::to_string(std::stoll(w) * scale));
      i += 2;
      continue;
    }
    int unit = UnitValue(w);
    // A run of spoken single digits ("four one one one", "one oh five") is a digit string.
    if (unit >= 0 && unit <= 9 && i + 1 < n) {
      size_t j = i;
      std::string digits;
      while (j < n) {
        int u = UnitValue(words[j]);
        if (u >= 0 && u <= 9) {
          digits.push_back(static_cast<char>('0' + u));
        } else if ((words[j] == "oh" || words[j] == "o") && !digits.empty() && j + 1 < n &&
                   (UnitValue(words[j + 1]) >= 0 && UnitValue(words[j + 1]) <= 9)) {
          digits.push_back('0');
        } else {
          break;
        }
        ++j;
      }
      if (digits.size() >= 2) {
        out.push_back(digits);
        i = j;
        continue;
      }
    }
    if (!IsNumberWord(w) || w == "hundred" || ScaleValue(w) > 0) {
      out.push_back(w);
      ++i;
      continue;
    }
    // Cardinal: "two thousand three hundred and five".
    int64_t total = 0, current = 0;
    bool last_unit = false, last_tens = false;
    size_t j = i;
    while (j < n) {
      const std::string& t = words[j];
      int u = UnitValue(t), te = TensValue(t);
      int64_t sc = ScaleValue(t);
      if (u >= 0) {
        if (last_unit || (last_tens && u >= 10)) break;
        current += u;
        last_unit = true;
        last_tens = false;
      } else if (te >= 0) {
        if (last_unit || last_tens || current % 100 != 0) break;
        current += te;
        last_tens = true;
      } else if (t == "hundred") {
        if (current == 0 || current >= 100) break;
        current *= 100;
        last_unit = last_tens = false;
      } else if (sc > 0) {
        if (current == 0 && total == 0) break;
        total += (current == 0 ? 1 : current) * sc;
        current = 0;
        last_unit = last_tens = false;
      } else if (t == "and" && j + 1 < n && (current >= 100 || total > 0) && current % 100 == 0 &&
                 (UnitValue(words[j + 1]) > 0 || TensValue(words[j + 1]) > 0)) {
        // "one hundred and five": the "and" belongs to the number.
      } else {
        break;
      }
      ++j;
    }
    out.push_back(std::to_string(total + current));
    i = j;
  }
  return out;
}

}  // namespace

std::string NormalizeText(std::string_view raw) {
  if (raw.size() > kMaxNormalizeInputBytes) raw = raw.substr(0, kMaxNormalizeInputBytes);
  // Chinese first: numerals to digits, full-width forms to ASCII, one word per character.
  const std::string folded = FoldChineseText(raw);
  const std::string_view text = folded;
  std::vector<std::string> tokens;
  Tokenizer tok(tokens);
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' ||
                               text[i] == '\r' || text[i] == '\f' || text[i] == '\v')) {
      ++i;
    }
    size_t start = i;
    while (i < text.size() && !(text[i] == ' ' || text[i] == '\t' || text[i] == '\n' ||
                                text[i] == '\r' || text[i] == '\f' || text[i] == '\v')) {
      ++i;
    }
    if (i > start) tok.Chunk(text.substr(start, i - start));
  }
  std::vector<std::string> words;
  words.reserve(tokens.size() + 4);
  for (const std::string& t : tokens) {
    if (IsFiller(t)) continue;
    ExpandContraction(t, words);
  }
  std::vector<std::string> converted = ConvertNumbers(words);
  std::string out;
  out.reserve(text.size() + 8);
  for (const std::string& w : converted) {
    if (w.empty()) continue;
    if (!out.empty()) out.push_back(' ');
    out += w;
  }
  return out;
}

std::vector<std::string_view> SplitWords(std::string_view normalized) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < normalized.size()) {
    size_t sp = normalized.find(' ', i);
    if (sp == std::string_view::npos) sp = normalized.size();
    if (sp > i) words.push_back(normalized.substr(i, sp - i));
    i = sp + 1;
  }
  return words;
}

}  // namespace hotline::answer
