// Chinese text for matching: the steps NormalizeText takes before it splits words, so that a
// Mandarin caller's turn is understood like an English one.
//
// FoldChineseText:
//   - full-width forms (ＰＩＮ１２３４, ，？！) become their ASCII forms; the ideographic space and
//     CJK punctuation (。、「」【】《》…) become word breaks;
//   - Chinese numerals become digits: a run of digit characters is read digit by digit
//     ("一二三四" -> "1234", "幺三七九" -> "1379": how PINs, phone and order numbers are said), a
//     run with units is read as a cardinal ("十一" -> "11", "五十八" -> "58", "一万零五百" ->
//     "10500"). A single numeral stays a character ("三个月", "一下"): alone it is usually a
//     word, not a number. A run that starts with a unit other than 十 stays too ("万一" is
//     "in case"), and so does one whose units are out of order ("十百");
//   - each Han character becomes its own word: Chinese has no spaces, so characters are the
//     words the features, caches and entity extraction see (their bigrams carry the words:
//     "话 费" is "phone bill").
// Text without Chinese passes through unchanged, byte for byte.
//
// Thread-safety: pure functions. Allocation: the output string.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hotline::answer {

std::string FoldChineseText(std::string_view text);

// The value of a run of Chinese numerals with units ("五十八" -> 58, "两千零三" -> 2003,
// "十二" -> 12, "三亿五千万" -> 350000000); nullopt when it is not a well-formed number.
std::optional<int64_t> ParseChineseCardinal(std::u32string_view run);

}  // namespace hotline::answer
