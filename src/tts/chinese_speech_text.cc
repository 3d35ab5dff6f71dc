#include "tts/chinese_speech_text.h"

#include <array>
#include <cstring>

namespace hotline::tts {
namespace {

constexpr std::array<const char*, 10> kDigit = {"零", "一", "二", "三", "四",
                                                "五", "六", "七", "八", "九"};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Reads one group of up to four digits (0..9999); `leading_zero`: a 零 goes first when the group
// is under 1000 but a higher group came before it ("一万零五百").
std::string Group(int v, bool leading_zero) {
  static constexpr const char* kUnit[] = {"千", "百", "十", ""};
  static constexpr int kPow[] = {1000, 100, 10, 1};
  std::string out;
  bool zero_pending = leading_zero && v < 1000;
  bool started = false;
  for (int k = 0; k < 4; ++k) {
    const int d = (v / kPow[k]) % 10;
    if (d == 0) {
      if (started) zero_pending = true;
      continue;
    }
    if (zero_pending) out += "零";
    zero_pending = false;
    out += kDigit[d];
    out += kUnit[k];
    started = true;
  }
  return out;
}

uint64_t ParseDigits(std::string_view s) {
  uint64_t v = 0;
  for (char c : s) v = v * 10 + static_cast<uint64_t>(c - '0');
  return v;
}

std::string Decimal(std::string_view int_part, std::string_view frac_part) {
  // A cardinal past 16 digits is no quantity a caller is told: read it digit by digit.
  std::string out = int_part.size() > 16 ? ChineseDigits(int_part, false)
                                         : ChineseCardinal(ParseDigits(int_part));
  if (!frac_part.empty()) out += "点" + ChineseDigits(frac_part, false);
  return out;
}

// The text just before position `at` ends with one of `words`.
bool Preceded(std::string_view text, size_t at, std::initializer_list<std::string_view> words) {
  std::string_view before = text.substr(0, at);
  while (!before.empty() && (before.back() == ' ' || before.back() == ':')) before.remove_suffix(1);
  if (EndsWith(before, "：")) before.remove_suffix(std::strlen("："));
  if (EndsWith(before, "是")) before.remove_suffix(std::strlen("是"));
  for (std::string_view w : words) {
    if (EndsWith(before, w)) return true;
  }
  return false;
}

bool Followed(std::string_view text, size_t at, std::string_view word) {
  return text.substr(at, word.size()) == word;
}

}  // namespace

std::string ChineseCardinal(uint64_t n) {
  if (n == 0) return "零";
  if (n >= 10000000000000000ULL) return ChineseDigits(std::to_string(n), false);
  // Groups of four digits: 亿 (10^8) above 万 (10^4) above the units.
  static constexpr const char* kGroupUnit[] = {"", "万", "亿", "万亿"};
  int groups[4] = {0, 0, 0, 0};
  int count = 0;
  for (uint64_t v = n; v > 0 && count < 4; v /= 10000) groups[count++] = static_cast<int>(v % 10000);
  std::string out;
  bool higher = false;
  bool zero_pending = false;
  for (int g = count - 1; g >= 0; --g) {
    if (groups[g] == 0) {
      if (higher) zero_pending = true;
      continue;
    }
    // A 零 for the empty groups above already stands for this group's leading zeros.
    const bool zero_said = zero_pending;
    if (zero_pending) out += "零";
    zero_pending = false;
    out += Group(groups[g], higher && !zero_said);
    out += kGroupUnit[g];
    higher = true;
  }
  // 10..19 are said 十, 十一, ... (not 一十一) when they open the number.
  if (out.rfind("一十", 0) == 0) out.erase(0, std::strlen("一"));
  return out;
}

std::string ChineseDigits(std::string_view digits, bool phone) {
  std::string out;
  for (char c : digits) {
    if (!IsDigit(c)) continue;
    out += (phone && c == '1') ? "幺" : kDigit[c - '0'];
  }
  return out;
}

std::string ReadChineseNumbers(std::string_view text, int digit_by_digit_min_digits) {
  std::string out;
  out.reserve(text.size() * 2);
  size_t i = 0;
  while (i < text.size()) {
    // "¥" (U+00A5) and "￥" (U+FFE5) before an amount: read as 元 after it.
    bool yuan = false;
    size_t sign_len = 0;
    if (Followed(text, i, "¥")) sign_len = std::strlen("¥");
    if (Followed(text, i, "￥")) sign_len = std::strlen("￥");
    if (sign_len && i + sign_len < text.size() && IsDigit(text[i + sign_len])) {
      yuan = true;
      i += sign_len;
    }
    if (!IsDigit(text[i])) {
      out += text[i++];
      continue;
    }
    const size_t start = i;
    // The digit run, with thousands separators dropped ("1,280").
    std::string digits;
    while (i < text.size()) {
      if (IsDigit(text[i])) {
        digits += text[i++];
      } else if (text[i] == ',' && i + 3 < text.size() && IsDigit(text[i + 1]) &&
                 IsDigit(text[i + 2]) && IsDigit(text[i + 3]) &&
                 (i + 4 >= text.size() || !IsDigit(text[i + 4]))) {
        ++i;
      } else {
        break;
      }
    }
    // Dates: 2026-12-05, 2026/12/5.
    if (digits.size() == 4 && i < text.size() && (text[i] == '-' || text[i] == '/')) {
      const char sep = text[i];
      size_t j = i + 1, m_start = j;
      while (j < text.size() && IsDigit(text[j]) && j - m_start < 2) ++j;
      const std::string_view month = text.substr(m_start, j - m_start);
      if (!month.empty() && j < text.size() && text[j] == sep) {
        size_t k = j + 1, d_start = k;
        while (k < text.size() && IsDigit(text[k]) && k - d_start < 2) ++k;
        const std::string_view day = text.substr(d_start, k - d_start);
        const uint64_t m = ParseDigits(month), d = day.empty() ? 0 : ParseDigits(day);
        if (m >= 1 && m <= 12 && d >= 1 && d <= 31 && (k >= text.size() || !IsDigit(text[k]))) {
          out += ChineseDigits(digits, false) + "年" + ChineseCardinal(m) + "月" +
                 ChineseCardinal(d) + "日";
          i = k;
          continue;
        }
      }
    }
    // Times: 14:30, 9:05.
    if (digits.size() <= 2 && i + 2 < text.size() && text[i] == ':' && IsDigit(text[i + 1]) &&
        IsDigit(text[i + 2]) && (i + 3 >= text.size() || !IsDigit(text[i + 3]))) {
      const uint64_t h = ParseDigits(digits), m = ParseDigits(text.substr(i + 1, 2));
      if (h <= 24 && m < 60) {
        out += ChineseCardinal(h) + "点";
        if (m > 0) out += (m < 10 ? "零" : "") + ChineseCardinal(m) + "分";
        i += 3;
        continue;
      }
    }
    // Decimals.
    std::string frac;
    if (i + 1 < text.size() && text[i] == '.' && IsDigit(text[i + 1])) {
      ++i;
      while (i < text.size() && IsDigit(text[i])) frac += text[i++];
    }
    if (Followed(text, i, "%") || Followed(text, i, "％")) {
      out += "百分之" + Decimal(digits, frac);
      i += Followed(text, i, "%") ? 1 : std::strlen("％");
      continue;
    }
    if (yuan) {
      out += Decimal(digits, frac) + "元";
      continue;
    }
    if (frac.empty()) {
      const bool phone_context = Preceded(text, start, {"电话", "手机", "号码", "热线", "拨打"});
      const bool mobile = digits.size() == 11 && digits[0] == '1';
      if (phone_context || mobile) {
        out += ChineseDigits(digits, true);
        continue;
      }
      if (digits.size() == 4 && Followed(text, i, "年")) {
        out += ChineseDigits(digits, false);
        continue;
      }
      const bool code_context =
          Preceded(text, start, {"尾号", "编号", "单号", "卡号", "账号", "密码", "验证码", "订单"});
      if (code_context || static_cast<int>(digits.size()) >= digit_by_digit_min_digits ||
          (digits.size() > 1 && digits[0] == '0')) {
        out += ChineseDigits(digits, false);
        continue;
      }
    }
    out += Decimal(digits, frac);
  }
  return out;
}

}  // namespace hotline::tts
