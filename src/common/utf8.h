// UTF-8 validation for text read from outside (files, sockets, configuration): text that is not
// UTF-8 would be stored, then break every JSON event, log line and YAML dump that quotes it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hotline {

// Length (1-4) of the valid UTF-8 sequence that starts at text[i], or 0 when none does there
// (overlong forms, UTF-16 surrogates, code points past U+10FFFF, cut-short sequences). i < size.
size_t Utf8SequenceLength(std::string_view text, size_t i);

// Decodes the valid UTF-8 sequence at text[i] into `*cp` and returns its length (1-4), or 0 when
// none starts there (same rules as Utf8SequenceLength). i < size.
size_t DecodeUtf8(std::string_view text, size_t i, char32_t* cp);

// Appends the UTF-8 form of `cp` (REQUIRES: a Unicode scalar value, <= U+10FFFF, no surrogate).
void AppendUtf8(std::string& out, char32_t cp);

// A Han (Chinese) character: the CJK Unified Ideographs blocks and their extensions, and the
// compatibility ideographs. Chinese text has no spaces between words; code that splits text into
// words treats each run of these specially.
inline bool IsHan(char32_t cp) {
  return (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) ||
         (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x20000 && cp <= 0x2ffff) ||
         (cp >= 0x30000 && cp <= 0x3134f);
}

// Han characters in `text` (bytes that are not UTF-8 are skipped); ContainsHan stops at the first.
size_t CountHan(std::string_view text);
bool ContainsHan(std::string_view text);

// Offset of the first byte of `text` that does not start a valid UTF-8 sequence (overlong forms,
// UTF-16 surrogates and code points past U+10FFFF are invalid), or npos when all of it is UTF-8.
size_t FirstInvalidUtf8(std::string_view text);

}  // namespace hotline
