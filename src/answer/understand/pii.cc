#include "answer/understand/pii.h"

#include <array>
#include <cctype>

namespace hotline::answer {
namespace {

constexpr size_t kMaxRedactInputBytes = 64 * 1024;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool IsLocalChar(char c) { return IsAlnum(c) || c == '.' || c == '_' || c == '-' || c == '+'; }
bool IsHostChar(char c) { return IsAlnum(c) || c == '.' || c == '-'; }

// Replaces e-mail addresses with <email>.
std::string RedactEmails(std::string_view text, PiiCounts& counts) {
  std::string out;
  out.reserve(text.size());
  size_t copied = 0;
  size_t at = text.find('@');
  while (at != std::string_view::npos) {
    size_t start = at;
    while (start > copied && IsLocalChar(text[start - 1])) --start;
    size_t end = at + 1;
    while (end < text.size() && IsHostChar(text[end])) ++end;
    while (end > at + 1 && (text[end - 1] == '.' || text[end - 1] == '-')) --end;
    std::string_view host = text.substr(at + 1, end - at - 1);
    size_t dot = host.find('.');
    bool ok = start < at && dot != std::string_view::npos && dot > 0 && dot + 1 < host.size() &&
              std::isalpha(static_cast<unsigned char>(host.back()));
    if (ok) {
      out.append(text.substr(copied, start - copied));
      out += "<email>";
      ++counts.emails;
      copied = end;
      at = text.find('@', end);
    } else {
      at = text.find('@', at + 1);
    }
  }
  out.append(text.substr(copied));
  return out;
}

// Lower-cased text before `pos`, trimmed of spaces, ':' and '='.
bool FollowsPinKeyword(std::string_view text, size_t pos) {
  size_t e = pos;
  auto trim = [&] {
    while (e > 0 && (text[e - 1] == ' ' || text[e - 1] == ':' || text[e - 1] == '=' ||
                     text[e - 1] == '#')) {
      --e;
    }
  };
  auto ends_with_word = [&](std::string_view w) {
    if (e < w.size()) return false;
    for (size_t k = 0; k < w.size(); ++k) {
      if (std::tolower(static_cast<unsigned char>(text[e - w.size() + k])) != w[k]) return false;
    }
    return e == w.size() || !IsAlnum(text[e - w.size() - 1]);
  };
  auto strip = [&](std::string_view w) {
    if (ends_with_word(w)) {
      e -= w.size();
      trim();
      return true;
    }
    return false;
  };
  trim();
  // Chinese: "密码是4821", "验证码：123456" (the colon may be full-width, "是/为" means "is").
  for (std::string_view glue : {"\uff1a", "\u662f", "\u4e3a"}) {
    if (text.substr(0, e).ends_with(glue)) {
      e -= glue.size();
      trim();
    }
  }
  for (std::string_view k : {"\u5bc6\u7801", "\u9a8c\u8bc1\u7801", "\u53e3\u4ee4", "\u5b89\u5168\u7801"}) {
    if (text.substr(0, e).ends_with(k)) return true;  // 密码, 验证码, 口令, 安全码
  }
  strip("is");
  strip("number") || strip("code") || strip("no");
  static constexpr std::array<std::string_view, 8> kKeys = {
      "pin", "passcode", "password", "security", "cvv", "cvc", "passcode", "pin"};
  for (std::string_view k : kKeys) {
    if (ends_with_word(k)) return true;
  }
  return false;
}

// A digit said as a word ("four", "oh" inside a run, "double" before a digit) or written alone
// ("4" between spaces). Returns how many digits it stands for (0: not a digit token) and sets
// `end` past it.
int DigitToken(std::string_view t, size_t i, bool in_run, size_t* end) {
  if (i >= t.size() || (i > 0 && IsAlnum(t[i - 1]))) return 0;
  size_t j = i;
  while (j < t.size() && IsAlnum(t[j])) ++j;
  *end = j;
  std::string_view w = t.substr(i, j - i);
  if (w.size() == 1 && IsDigit(w[0])) return 1;
  if (w.size() > 6) return 0;
  char low[8] = {};
  for (size_t k = 0; k < w.size(); ++k) low[k] = static_cast<char>(std::tolower(static_cast<unsigned char>(w[k])));
  const std::string_view lw(low, w.size());
  static constexpr std::array<std::string_view, 10> kDigits = {
      "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"};
  for (std::string_view d : kDigits) {
    if (lw == d) return 1;
  }
  if (in_run && (lw == "oh" || lw == "o")) return 1;
  if (lw == "double") return 1;  // "double five": the digit that follows counts once more
  if (lw == "triple") return 2;
  return 0;
}

// A run of digits said one by one ("one two three four", "4 8 2 1", "four, eight, two, one")
// starting at `i`: the number of digits and the end of its last token (0 digits: no run).
int SpokenDigitRun(std::string_view t, size_t i, size_t* run_end) {
  int digits = 0;
  int tokens = 0;
  size_t j = i;
  for (;;) {
    size_t end = 0;
    const int d = DigitToken(t, j, tokens > 0, &end);
    if (d == 0) break;
    digits += d;
    ++tokens;
    *run_end = end;
    size_t k = end;
    int seps = 0;
    while (k < t.size() && seps < 3 && (t[k] == ' ' || t[k] == ',' || t[k] == '-' || t[k] == '.')) {
      ++k;
      ++seps;
    }
    if (seps == 0) break;
    j = k;
  }
  return tokens >= 2 ? digits : 0;
}

// Replaces digits said one by one: a run of 4 or more is a code (PIN, or a longer account or
// card number: <number>); 3 after a PIN keyword is a PIN too.
std::string RedactSpokenDigits(std::string_view t, PiiCounts& counts) {
  std::string out;
  out.reserve(t.size());
  size_t i = 0;
  while (i < t.size()) {
    if (i == 0 || !IsAlnum(t[i - 1])) {
      size_t end = 0;
      const int n = SpokenDigitRun(t, i, &end);
      if (n >= 4 || (n >= 3 && FollowsPinKeyword(t, i))) {
        if (n <= 8) {
          out += "<pin>";
          ++counts.pins;
        } else {
          out += "<number>";
          ++counts.numbers;
        }
        i = end;
        continue;
      }
    }
    out.push_back(t[i++]);
  }
  return out;
}

struct Span {
  size_t begin = 0, end = 0;  // [begin, end) in the text
  std::string digits;
  int groups = 0;
  int separators = 0;
  bool plus = false, parens = false, dash = false;
  bool decimal_amount = false;  // "1234.56": one '.' then 1-2 digits
};

Span ScanSpan(std::string_view t, size_t i) {
  Span s;
  s.begin = i;
  if (t[i] == '+') {
    s.plus = true;
    ++i;
  }
  size_t last_digit_end = i;
  int dots = 0;
  size_t last_group_len = 0;
  while (i < t.size()) {
    if (IsDigit(t[i])) {
      size_t g = i;
      while (i < t.size() && IsDigit(t[i])) s.digits.push_back(t[i++]);
      ++s.groups;
      last_group_len = i - g;
      last_digit_end = i;
      continue;
    }
    if (s.digits.size() > 19) break;
    // One separator (or ") " / " (" pairs) between digit groups.
    size_t j = i;
    int seps = 0;
    while (j < t.size() && seps < 2 &&
           (t[j] == ' ' || t[j] == '-' || t[j] == '.' || t[j] == '(' || t[j] == ')')) {
      ++j;
      ++seps;
    }
    if (seps == 0 || j >= t.size() || !IsDigit(t[j])) break;
    if (seps == 2 && !(t[i] == ')' || t[i + 1] == '(')) break;
    for (size_t k = i; k < j; ++k) {
      if (t[k] == '(' || t[k] == ')') s.parens = true;
      if (t[k] == '-') s.dash = true;
      if (t[k] == '.') ++dots;
    }
    ++s.separators;
    i = j;
  }
  if (s.begin > 0 && t[s.begin - 1] == '(') {
    s.begin -= 1;
    s.parens = true;
  }
  s.end = last_digit_end;
  s.decimal_amount = s.groups == 2 && dots == 1 && s.separators == 1 && last_group_len <= 2;
  return s;
}

bool LooksLikePhone(const Span& s) {
  size_t d = s.digits.size();
  if (d < 7 || d > 15 || s.decimal_amount) return false;
  if (s.plus || s.parens) return true;
  if (s.groups >= 3) return true;
  return s.groups == 2 && s.dash;
}

}  // namespace

bool LuhnValid(std::string_view digits) {
  int sum = 0, n = 0;
  for (size_t k = digits.size(); k-- > 0;) {
    if (!IsDigit(digits[k])) continue;
    int d = digits[k] - '0';
    if (n % 2 == 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    ++n;
  }
  return n >= 2 && sum % 10 == 0;
}

// Digits said in Chinese, one by one ("四八二一", "幺三八…"): a run of 4 to 8 is <pin> (3 after a
// PIN keyword), a longer run <number>, as for English spoken digits. Numbers with units
// ("五十八", "十一月") are quantities and stay.
std::string RedactChineseDigits(std::string_view t, PiiCounts& counts) {
  static constexpr std::string_view kDigits[] = {"\u96f6", "\u3007", "\u4e00", "\u5e7a", "\u4e8c",
                                                 "\u4e24", "\u4e09", "\u56db", "\u4e94", "\u516d",
                                                 "\u4e03", "\u516b", "\u4e5d"};
  auto digit_at = [&](size_t i) -> size_t {
    for (std::string_view d : kDigits) {
      if (t.substr(i, d.size()) == d) return d.size();
    }
    return 0;
  };
  std::string out;
  out.reserve(t.size());
  size_t i = 0;
  while (i < t.size()) {
    // Every Chinese digit is 3 bytes with a lead byte of at least 0xe3: other bytes are copied
    // without trying the digit table (this runs on every log line).
    if (static_cast<unsigned char>(t[i]) < 0xe3) {
      out.push_back(t[i++]);
      continue;
    }
    size_t j = i;
    int n = 0;
    while (j < t.size()) {
      const size_t len = digit_at(j);
      if (len == 0) break;
      j += len;
      ++n;
    }
    if (n == 0) {
      out.push_back(t[i++]);
      continue;
    }
    if (n >= 4 && n <= 8) {
      out += "<pin>";
      ++counts.pins;
    } else if (n > 8) {
      out += "<number>";
      ++counts.numbers;
    } else if (n == 3 && FollowsPinKeyword(t, i)) {
      out += "<pin>";
      ++counts.pins;
    } else {
      out.append(t, i, j - i);
    }
    i = j;
  }
  return out;
}

std::string RedactPii(std::string_view text, PiiCounts* counts_out) {
  if (text.size() > kMaxRedactInputBytes) text = text.substr(0, kMaxRedactInputBytes);
  PiiCounts counts;
  std::string t =
      RedactChineseDigits(RedactSpokenDigits(RedactEmails(text, counts), counts), counts);
  std::string out;
  out.reserve(t.size());
  size_t i = 0;
  while (i < t.size()) {
    bool starts = IsDigit(t[i]) || (t[i] == '+' && i + 1 < t.size() && IsDigit(t[i + 1]));
    // A number glued to letters ("a12345") is an identifier, handled as a whole below.
    if (!starts || (i > 0 && IsAlnum(t[i - 1]))) {
      if (IsDigit(t[i]) && i > 0 && IsAlnum(t[i - 1])) {
        size_t j = i;
        while (j < t.size() && IsDigit(t[j])) ++j;
        if (j - i >= 6) {
          out += "<number>";
          ++counts.numbers;
        } else {
          out.append(t, i, j - i);
        }
        i = j;
        continue;
      }
      out.push_back(t[i++]);
      continue;
    }
    Span s = ScanSpan(t, i);
    if (s.begin < i) out.pop_back();  // the '(' already copied belongs to the phone number
    size_t d = s.digits.size();
    if (d >= 3 && d <= 8 && FollowsPinKeyword(t, s.begin)) {
      out += "<pin>";
      ++counts.pins;
    } else if (d >= 13 && d <= 19 && LuhnValid(s.digits)) {
      out += "<card>";
      ++counts.cards;
    } else if (LooksLikePhone(s)) {
      out += "<phone>";
      ++counts.phones;
    } else if (s.groups == 1 || s.decimal_amount) {
      if (d >= 6 && !s.decimal_amount) {
        out += "<number>";
        ++counts.numbers;
      } else {
        if (s.begin < i) out.push_back('(');
        out.append(t, i, s.end - i);
      }
    } else {
      // Several short numbers side by side ("march 12 2024"): judge each group alone.
      if (s.begin < i) out.push_back('(');
      size_t k = i;
      while (k < s.end) {
        if (IsDigit(t[k])) {
          size_t j = k;
          while (j < s.end && IsDigit(t[j])) ++j;
          if (j - k >= 6) {
            out += "<number>";
            ++counts.numbers;
          } else {
            out.append(t, k, j - k);
          }
          k = j;
        } else {
          out.push_back(t[k++]);
        }
      }
    }
    i = s.end;
    // A number glued to letters after it stays with them ("12345abc" is redacted whole above).
  }
  if (counts_out != nullptr) *counts_out = counts;
  return out;
}

Redactor MakePiiLogRedactor() {
  return [](std::string_view text) { return RedactPii(text); };
}

}  // namespace hotline::answer
