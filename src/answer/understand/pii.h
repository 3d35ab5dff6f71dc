// PII redaction: card numbers, phone numbers, e-mail addresses, PINs and long digit strings.
//
// RedactPii replaces personal data in free text with placeholders, so that what is logged, cached
// or sent to a remote model carries none of it:
//   <card>    13-19 digits (spaces or dashes between groups allowed) that pass the Luhn check;
//   <phone>   7-15 digits written as a phone number ("+44 20 7946 0958", "(555) 123-4567",
//             "555.123.4567": a leading '+', parentheses, or three or more groups);
//   <email>   name@host.tld;
//   <pin>     3-8 digits after "pin", "passcode", "password" or "security code" (with "is",
//             "number", ":" between);
//   <number>  any other run of 6 or more digits (account numbers, failed-Luhn card numbers).
// Digits said one by one, in words or as single figures ("one two three four", "4 8 2 1",
// "four, oh, double two"), as ASR and callers give PINs: a run of 4 to 8 is <pin> (3 after a PIN
// keyword), a longer run <number>; raw turns are therefore safe to log before normalization.
// Chinese likewise: digits said one by one ("四八二一", "幺三八…") and the PIN keywords 密码,
// 验证码, 口令, 安全码 ("密码是4821" is <pin>).
// Shorter numbers (amounts, dates, "2 cards") are kept. Works on raw text and on NormalizeText
// output alike (spoken digits become digits in normalization, so spoken PINs are caught there).
//
// Thread-safety: pure functions. MakePiiLogRedactor() returns a callable for
// hotline::SetLogRedactor (common/log.h).
#pragma once

#include <string>
#include <string_view>

#include "common/log.h"

namespace hotline::answer {

struct PiiCounts {
  int cards = 0;
  int phones = 0;
  int emails = 0;
  int pins = 0;
  int numbers = 0;
  int total() const { return cards + phones + emails + pins + numbers; }
};

// Returns `text` with personal data replaced by placeholders; counts what was replaced when
// `counts` is non-null. Input longer than 64 KiB is truncated (log lines and turns are shorter).
std::string RedactPii(std::string_view text, PiiCounts* counts = nullptr);

// True when the digits (non-digits ignored) pass the Luhn checksum; false for fewer than 2 digits.
bool LuhnValid(std::string_view digits);

// A redactor for SetLogRedactor(): RedactPii without counts.
Redactor MakePiiLogRedactor();

}  // namespace hotline::answer
