// SentencePiece-style tokenization ("llama" vocabularies): spaces become U+2581 ("▁"), the text
// is split into UTF-8 characters, and the adjacent pair whose concatenation is the
// highest-scoring token is merged repeatedly (ties: leftmost first) — the bigram algorithm of
// llama.cpp's SPM tokenizer, which reproduces SentencePiece's BPE-mode output. Characters left
// that are not tokens become byte tokens <0xNN> (byte fallback), or the unknown token.
//
// Thread-safety: stateless apart from the vocabulary; Encode() is const and may run on many
// threads at once. Allocates O(text) scratch per call.
#pragma once

#include <string_view>
#include <vector>

#include "engine/vocab.h"

namespace hotline::engine {

class SpmTokenizer {
 public:
  // `vocab` must outlive the tokenizer and have model() == kSpm.
  explicit SpmTokenizer(const Vocabulary& vocab) : vocab_(vocab) {}

  // Appends the tokens of one fragment of raw text (no special-token parsing here). When
  // `add_space_prefix`, a space is put before the text (SentencePiece's dummy prefix).
  void Encode(std::string_view text, bool add_space_prefix, std::vector<TokenId>* out) const;

 private:
  const Vocabulary& vocab_;
};

// "▁" (U+2581), SentencePiece's visible space.
inline constexpr std::string_view kSpmSpace = "\xE2\x96\x81";

}  // namespace hotline::engine
