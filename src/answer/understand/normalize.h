// Text normalization for matching callers' questions.
//
// ASR transcripts and typed questions say the same thing in many surface forms: "I can't find my
// card!!", "um i cant find my card", "I cannot find my card". NormalizeText maps them onto one
// form so that features, caches and entity extraction see the same words:
//   - ASCII letters lower-cased; bytes >= 0x80 (UTF-8) are kept as they are;
//   - punctuation becomes a word break, except inside numbers ("1,000.50" -> "1000.50") and
//     e-mail addresses (kept whole so PII redaction can find them);
//   - currency signs become words ("$20" -> "20 dollars"), "%" -> "percent";
//   - contractions are expanded, with or without the apostrophe ("can't", "cant" -> "can not");
//   - spoken numbers become digits ("twenty five" -> "25", "one hundred and ten" -> "110"), and a
//     run of spoken single digits becomes one digit string ("one two three four" -> "1234") so
//     spoken PINs and card numbers are redacted like typed ones;
//   - ASR filler words ("um", "uh", "er", "hmm") are dropped; whitespace is collapsed;
//   - Chinese text is folded first (chinese_text.h): full-width forms to ASCII, Chinese numerals
//     to digits ("幺三七九" -> "1379"), and each Han character a word of its own.
// The result is a sequence of words separated by single spaces with no leading/trailing space.
//
// Thread-safety: pure functions, callable from any thread. Allocation: one output string.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hotline::answer {

// Longest input NormalizeText reads; the rest is ignored (a caller's turn is far shorter).
inline constexpr size_t kMaxNormalizeInputBytes = 16 * 1024;

std::string NormalizeText(std::string_view text);

// Splits normalized text on single spaces. Views point into `normalized`.
std::vector<std::string_view> SplitWords(std::string_view normalized);

}  // namespace hotline::answer
