// English words for numbers, as a speaker reads them: cardinals, ordinals, years, digit strings,
// decimals and money. Pure functions; thread-safe; used by TextNormalizer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hotline::tts {

// 0 → "zero", 1234 → "one thousand two hundred thirty-four" (American style, no "and").
// Up to 999,999,999,999,999,999 (quintillions).
std::string CardinalWords(uint64_t n);
// 1 → "first", 22 → "twenty-second", 100 → "one hundredth".
std::string OrdinalWords(uint64_t n);
// 1999 → "nineteen ninety-nine", 2005 → "two thousand five", 2024 → "twenty twenty-four",
// 1900 → "nineteen hundred". Other values fall back to CardinalWords.
std::string YearWords(uint64_t n);
// "1204" → "one two zero four" (other characters are skipped).
std::string DigitWords(std::string_view digits);
// "3.05" → "three point zero five"; "1,250.5" → "one thousand two hundred fifty point five".
// Empty when `number` is not digits[,digits...][.digits].
std::string DecimalWords(std::string_view number);

// Parses "1234", "1,234,567" (well-formed thousands groups only) into a value; nullopt when it is
// not such a number or exceeds uint64.
std::optional<uint64_t> ParseGroupedInteger(std::string_view text);

// "$12.50" in words: currency name forms plus amount. `major`/`minor` are decimal digit strings
// (minor may be empty or one/two digits). ("12","50","dollar","dollars","cent","cents") →
// "twelve dollars and fifty cents"; ("0","99",...) → "ninety-nine cents"; ("1","",...) →
// "one dollar". Empty on malformed input.
std::string MoneyWords(std::string_view major, std::string_view minor, std::string_view unit_one,
                       std::string_view unit_many, std::string_view sub_one,
                       std::string_view sub_many);

}  // namespace hotline::tts
