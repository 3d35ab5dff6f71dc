// Byte-level BPE tokenization ("gpt2" vocabularies): the text is split by the vocabulary's
// pre-tokenizer (engine/pretokenize.h), each piece's bytes are mapped to GPT-2's byte-level
// characters, and within each piece the adjacent pair with the lowest merge rank is merged
// repeatedly (ties: leftmost first). With Llama-3's pre-tokenizer a piece that is already a token
// is emitted as is (ignore_merges).
//
// Thread-safety: Encode() is const and may run on many threads at once. Allocates O(text)
// scratch per call.
#pragma once

#include <string_view>
#include <vector>

#include "engine/vocab.h"

namespace hotline::engine {

class BpeTokenizer {
 public:
  // `vocab` must outlive the tokenizer and have model() == kBpe.
  explicit BpeTokenizer(const Vocabulary& vocab) : vocab_(vocab) {}

  // Appends the tokens of one fragment of raw text (no special-token parsing here).
  void Encode(std::string_view text, std::vector<TokenId>* out) const;

 private:
  struct Symbol {
    int prev;
    int next;
    uint32_t begin;  // byte offset into the encoded word
    uint32_t n;      // bytes; 0 once merged into its left neighbour
    TokenId id;      // token of the symbol's text, or kNoToken
  };
  void EncodeWord(std::string_view word, std::vector<Symbol>& symbols,
                  std::vector<TokenId>* out) const;

  const Vocabulary& vocab_;
};

}  // namespace hotline::engine
