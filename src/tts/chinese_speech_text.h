// Chinese text read the Chinese way: the numbers of a Mandarin answer written out in Chinese
// characters, so the synthesizer says "五十八点三零元" for "58.30元", not English digits or a
// 13-digit cardinal for a phone number. TextNormalizer uses it for every text with a Han
// character in it (ContainsHan, common/utf8.h) (after the markup is stripped).
//
// What it reads:
//   - dates "2026-12-05", "2026/12/5" -> 二零二六年十二月五日; years before 年 digit by digit
//     ("2026年" -> 二零二六年); months and days as cardinals ("12月5日" -> 十二月五日);
//   - times "14:30" -> 十四点三十分, "9:05" -> 九点零五分, "10:00" -> 十点;
//   - percentages "5%" / "5％" -> 百分之五, "12.5%" -> 百分之十二点五;
//   - amounts "¥58.30" / "￥58.30" -> 五十八点三零元 (the "元" after the number is read as written);
//   - phone numbers (11 digits starting with 1, or any digits after 电话/手机/号码) digit by digit
//     with 1 as 幺 ("幺三八…"), as Chinese callers hear them; other long digit runs (at least
//     `digit_by_digit_min_digits`, or after 尾号/编号/单号/卡号/账号/密码/验证码) digit by digit;
//   - other numbers as cardinals ("1,280" -> 一千二百八十, "105" -> 一百零五, "3.5" -> 三点五).
// Everything else passes through: the Chinese punctuation the sentence chunker splits at stays.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace hotline::tts {

// 0 -> 零, 10 -> 十, 12 -> 十二, 105 -> 一百零五, 10500 -> 一万零五百, 2003 -> 二千零三.
std::string ChineseCardinal(uint64_t n);

// Each digit of `digits` as a character; `phone`: 1 as 幺.
std::string ChineseDigits(std::string_view digits, bool phone);

// The numbers of `text` written out as above.
std::string ReadChineseNumbers(std::string_view text, int digit_by_digit_min_digits);

}  // namespace hotline::tts
