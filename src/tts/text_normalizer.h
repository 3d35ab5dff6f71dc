// TextNormalizer: turns text written for the eye (LLM output, knowledge-base answers, templates)
// into text a synthesizer reads correctly to a caller.
//
// What it does, in order:
//  - drops template placeholders left unfilled ("{{Order Number}}"), or replaces them;
//  - strips markdown (headers, bullets, numbered lists, emphasis, inline code, code fences,
//    block quotes, tables, rules; links and images keep their text) and ends list items and
//    headers with a full stop so they are spoken as separate phrases;
//  - removes URLs, reads e-mail addresses ("anna at example dot com"), removes emoji and other
//    pictographs, maps typographic quotes and dashes to plain ones;
//  - expands currency ("$12.50" → "twelve dollars and fifty cents", also €, £ and "5 USD"),
//    percentages, times ("9:30 am" → "nine thirty a m"), dates ("03/05/2024", "2024-03-05",
//    "March 5th, 2024"), ordinals ("21st"), years after "in/since/by/..." and month names,
//    decimals ("3.5" → "three point five"), grouped numbers ("1,250"), negative numbers, simple
//    fractions, phone numbers (digit groups with pauses), numbers with units ("5GB");
//  - reads identifiers digit by digit: "#A12345" → "number A one two three four five",
//    "order 123456" → "order one two three four five six", any long digit run or code mixing
//    letters and digits;
//  - expands common abbreviations (Dr., St. as Saint/Street, Mr., approx., etc., e.g., i.e.,
//    Ave., Jan., ...), keeping a sentence-final full stop.
//
// The result is plain UTF-8 with single spaces. Text it does not recognize passes through.
// Thread-safety: Normalize() is const and may be called from many threads. It allocates; cost is
// a few microseconds per sentence (see bench/tts).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace hotline::tts {

struct TextNormalizerConfig {
  // Digit runs at least this long (no separators) are read digit by digit even without a
  // keyword like "order" before them: account, card and tracking numbers are long; quantities
  // rarely are. Lower reads more numbers as digits.
  int digit_by_digit_min_digits = 6;
  // What an unfilled {{Placeholder}} becomes. Empty drops it (the sentence usually still reads);
  // a phrase like "the number on your receipt" keeps the sentence whole.
  std::string placeholder_text;
  // Read e-mail addresses aloud ("anna at example dot com"); off drops them like URLs.
  bool speak_emails = true;

  template <class V>
  void Visit(V& v) {
    v.Field("digit_by_digit_min_digits", digit_by_digit_min_digits,
            "Digit runs this long or longer are read digit by digit");
    v.Field("placeholder_text", placeholder_text, "Replacement for {{Placeholders}} (empty: drop)");
    v.Field("speak_emails", speak_emails, "Read e-mail addresses aloud (else drop them)");
  }
  Status Validate() const;
};

class TextNormalizer {
 public:
  explicit TextNormalizer(TextNormalizerConfig config = {}) : config_(std::move(config)) {}

  // Input of any size is accepted; invalid UTF-8 bytes are dropped.
  std::string Normalize(std::string_view text) const;

 private:
  TextNormalizerConfig config_;
};

}  // namespace hotline::tts
