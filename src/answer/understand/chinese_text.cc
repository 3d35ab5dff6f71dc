#include "answer/understand/chinese_text.h"

#include <algorithm>
#include <vector>

#include "common/utf8.h"

namespace hotline::answer {
namespace {

// -1 when `c` is not a Chinese digit character.
int DigitValue(char32_t c) {
  switch (c) {
    case U'零': case U'〇': return 0;
    case U'一': case U'幺': return 1;  // 幺 is how 1 is said inside phone and PIN digits
    case U'二': case U'两': return 2;
    case U'三': return 3;
    case U'四': return 4;
    case U'五': return 5;
    case U'六': return 6;
    case U'七': return 7;
    case U'八': return 8;
    case U'九': return 9;
    default: return -1;
  }
}

int64_t UnitValue(char32_t c) {
  switch (c) {
    case U'十': return 10;
    case U'百': return 100;
    case U'千': return 1000;
    case U'万': return 10000;
    case U'亿': return 100000000;
    default: return 0;
  }
}

bool IsNumeral(char32_t c) { return DigitValue(c) >= 0 || UnitValue(c) > 0; }

// Full-width ASCII forms (U+FF01..U+FF5E) map onto ASCII 0x21..0x7E.
bool IsFullWidthAscii(char32_t c) { return c >= 0xff01 && c <= 0xff5e; }

// CJK punctuation that separates words: the CJK Symbols and Punctuation block (except 〇, a
// numeral), vertical and small forms, half-width CJK punctuation.
bool IsCjkBreak(char32_t c) {
  return (c >= 0x3000 && c <= 0x303f && c != U'〇') || (c >= 0xfe10 && c <= 0xfe1f) ||
         (c >= 0xfe30 && c <= 0xfe6f) || (c >= 0xff5f && c <= 0xff65);
}

// Typographic punctuation that Chinese text uses between words (quotes, ellipsis, dashes, middle
// dot); folded only in text that has Chinese in it, so English text stays byte for byte.
bool IsChineseTextBreak(char32_t c) {
  return c == 0x201c || c == 0x201d || c == 0x2018 || c == 0x2026 || c == 0x2014 ||
         c == 0x00b7;
}

void AppendDigits(std::string& out, int64_t v) { out += std::to_string(v); }

}  // namespace

std::optional<int64_t> ParseChineseCardinal(std::u32string_view run) {
  if (run.empty()) return std::nullopt;
  int64_t yi_part = 0, wan_part = 0, section = 0;
  int pending = -1;             // a digit waiting for its unit
  int64_t last_small_unit = 0;  // the last of 十/百/千 in this section (they must descend)
  bool after_zero = false;      // 零 seen since the last unit: the next digit stands alone
  bool seen_wan = false, seen_yi = false;
  for (size_t i = 0; i < run.size(); ++i) {
    const char32_t c = run[i];
    if (const int d = DigitValue(c); d >= 0) {
      if (d == 0) {
        if (pending > 0) return std::nullopt;  // "五零" inside a cardinal is not a number
        after_zero = true;
        pending = -1;
      } else {
        if (pending >= 0) return std::nullopt;  // two digits in a row need a unit between
        pending = d;
      }
      continue;
    }
    const int64_t u = UnitValue(c);
    if (u == 0) return std::nullopt;
    if (u <= 1000) {
      if (pending < 0) {
        // "十二" starts with 十 alone (one ten); anywhere else a unit needs its digit.
        if (u != 10 || i != 0) return std::nullopt;
        pending = 1;
      }
      if (last_small_unit != 0 && u >= last_small_unit) return std::nullopt;
      section += pending * u;
      last_small_unit = u;
    } else {
      const int64_t group = section + (pending > 0 ? pending : 0);
      if (u == 10000) {
        if (seen_wan || group == 0) return std::nullopt;
        wan_part = group;
        seen_wan = true;
      } else {
        if (seen_yi || group + wan_part == 0) return std::nullopt;
        yi_part = wan_part * 10000 + group;
        wan_part = 0;
        seen_wan = false;
      }
      seen_yi = seen_yi || u == 100000000;
      section = 0;
      last_small_unit = 0;
    }
    pending = -1;
    after_zero = false;
  }
  int64_t tail = pending > 0 ? pending : 0;
  // "三百五" is 350 and "一万五" 15,000: a digit right after a unit, with no 零 between, counts
  // in the next unit down.
  if (pending > 0 && !after_zero && run.size() >= 2 && DigitValue(run[run.size() - 2]) < 0) {
    const int64_t unit = UnitValue(run[run.size() - 2]);
    if (unit >= 100) tail = pending * (unit / 10);
  }
  return yi_part * 100000000 + wan_part * 10000 + section + tail;
}

std::string FoldChineseText(std::string_view text) {
  // Fast path: ASCII text (most English turns) is returned unchanged without being decoded; so
  // is any text with no Chinese character, full-width form or CJK punctuation.
  if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; })) {
    return std::string(text);
  }
  std::vector<char32_t> cps;
  cps.reserve(text.size());
  bool chinese = false, any_fold = false;
  for (size_t i = 0; i < text.size();) {
    char32_t cp = 0;
    size_t n = DecodeUtf8(text, i, &cp);
    if (n == 0) {  // not UTF-8: dropped when the text is folded, kept when it passes through
      ++i;
      continue;
    }
    if (IsHan(cp)) chinese = true;
    if (IsFullWidthAscii(cp) || IsCjkBreak(cp) || cp == U'〇') any_fold = true;
    cps.push_back(cp);
    i += n;
  }
  if (!chinese && !any_fold) return std::string(text);

  std::string out;
  out.reserve(text.size() + 16);
  auto space = [&out] {
    if (!out.empty() && out.back() != ' ') out.push_back(' ');
  };
  for (size_t i = 0; i < cps.size();) {
    char32_t c = cps[i];
    if (IsFullWidthAscii(c)) c -= 0xfee0;
    if (IsCjkBreak(c) || (chinese && IsChineseTextBreak(c))) {
      space();
      ++i;
      continue;
    }
    if (IsNumeral(c)) {
      size_t j = i;
      while (j < cps.size() && IsNumeral(cps[j])) ++j;
      std::u32string_view run(cps.data() + i, j - i);
      // A run that opens with 百/千/万/亿 is a word ("万一", "千万"): its first character stays.
      const bool opens_with_big_unit = UnitValue(run[0]) > 10;
      if (run.size() >= 2 && !opens_with_big_unit) {
        bool has_unit = false;
        for (char32_t r : run) has_unit = has_unit || UnitValue(r) > 0;
        if (!has_unit) {
          space();
          for (char32_t r : run) out.push_back(static_cast<char>('0' + DigitValue(r)));
          out.push_back(' ');
          i = j;
          continue;
        }
        if (auto v = ParseChineseCardinal(run)) {
          space();
          AppendDigits(out, *v);
          out.push_back(' ');
          i = j;
          continue;
        }
      }
      // Not a number: its characters are words like any other.
    }
    if (IsHan(c)) {
      space();
      AppendUtf8(out, c);
      out.push_back(' ');
    } else {
      AppendUtf8(out, c);
    }
    ++i;
  }
  // Trim the spaces the Han characters left at the ends.
  while (!out.empty() && out.back() == ' ') out.pop_back();
  size_t start = 0;
  while (start < out.size() && out[start] == ' ') ++start;
  return out.substr(start);
}

}  // namespace hotline::answer
