// UTF-8 validation for text read from outside (files, sockets, configuration): text that is not
// UTF-8 would be stored, then break every JSON event, log line and YAML dump that quotes it.
#pragma once

#include <cstddef>
#include <string_view>

namespace hotline {

// Length (1-4) of the valid UTF-8 sequence that starts at text[i], or 0 when none does there
// (overlong forms, UTF-16 surrogates, code points past U+10FFFF, cut-short sequences). i < size.
size_t Utf8SequenceLength(std::string_view text, size_t i);

// Offset of the first byte of `text` that does not start a valid UTF-8 sequence (overlong forms,
// UTF-16 surrogates and code points past U+10FFFF are invalid), or npos when all of it is UTF-8.
size_t FirstInvalidUtf8(std::string_view text);

}  // namespace hotline
