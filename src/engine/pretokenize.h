// Pre-tokenizers of byte-level BPE vocabularies: split text into the pieces that BPE merges
// never cross, exactly as the models' reference regular expressions do, implemented by hand over
// Unicode categories (engine/unicode.h) instead of a regex engine:
//
//   gpt-2:  's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//   llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}
//           | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   qwen2:  as llama3 with \p{N} (one digit per piece)
//
// Input is UTF-8; malformed bytes count as "other" characters (never letters, digits or
// whitespace) and are kept byte for byte. Pieces cover the input exactly, in order.
//
// Thread-safety: pure function. Allocates the output vector (and one scratch vector of code
// points) per call; callers on a hot path reuse `scratch`.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/vocab.h"

namespace hotline::engine {

struct TextPiece {
  uint32_t begin = 0;  // byte offsets into the input
  uint32_t end = 0;
};

// Per-character scratch for PreTokenize: code point class and byte offset.
struct PreTokenizeScratch {
  std::vector<uint8_t> cls;
  std::vector<uint32_t> offset;
};

// Appends the pieces of `text` to `out`. REQUIRES: kind != kNone and text.size() < 4 GiB.
void PreTokenize(PreTokenizerKind kind, std::string_view text, std::vector<TextPiece>* out,
                 PreTokenizeScratch* scratch);

}  // namespace hotline::engine
