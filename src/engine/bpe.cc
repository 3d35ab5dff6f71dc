#include "engine/bpe.h"

#include <algorithm>
#include <queue>
#include <string>

#include "engine/pretokenize.h"
#include "engine/unicode.h"

namespace hotline::engine {
namespace {

struct Bigram {
  int32_t rank;
  int left;
  int right;
  uint32_t left_n;
  uint32_t right_n;
};

// Lowest rank first; equal ranks: leftmost first.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

void BpeTokenizer::Encode(std::string_view text, std::vector<TokenId>* out) const {
  std::vector<TextPiece> pieces;
  PreTokenizeScratch scratch;
  PreTokenize(vocab_.pre_tokenizer(), text, &pieces, &scratch);
  std::string word;
  std::vector<Symbol> symbols;
  for (const TextPiece& p : pieces) {
    word.clear();
    for (uint32_t i = p.begin; i < p.end; ++i) {
      word.append(ByteToBpeChar(static_cast<uint8_t>(text[i])));
    }
    EncodeWord(word, symbols, out);
  }
}

void BpeTokenizer::EncodeWord(std::string_view word, std::vector<Symbol>& symbols,
                              std::vector<TokenId>* out) const {
  if (vocab_.ignore_merges()) {
    const TokenId id = vocab_.Find(word);
    if (id != kNoToken) {
      out->push_back(id);
      return;
    }
  }
  symbols.clear();
  for (size_t pos = 0; pos < word.size();) {
    // The word is byte-level text, valid UTF-8 by construction.
    const size_t len =
        std::min(Utf8SequenceLength(static_cast<uint8_t>(word[pos])), word.size() - pos);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({index - 1, pos + len == word.size() ? -1 : index + 1,
                       static_cast<uint32_t>(pos), static_cast<uint32_t>(len),
                       vocab_.Find(word.substr(pos, len))});
    pos += len;
  }

  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto rank_of = [&](const Symbol& l, const Symbol& r) -> int32_t {
    if (l.id != kNoToken && r.id != kNoToken) {
      const int32_t rank = vocab_.MergeRank(l.id, r.id);
      if (rank >= 0 || !vocab_.has_text_merges()) return rank;
    }
    return vocab_.MergeRankByText(word.substr(l.begin, l.n), word.substr(r.begin, r.n));
  };
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[left];
    const Symbol& r = symbols[right];
    const int32_t rank = rank_of(l, r);
    if (rank < 0) return;
    queue.push({rank, left, right, l.n, r.n});
  };
  for (size_t i = 1; i < symbols.size(); ++i) {
    try_add(static_cast<int>(i - 1), static_cast<int>(i));
  }

  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = symbols[b.left];
    Symbol& r = symbols[b.right];
    // Stale: a symbol's start never moves, so equal lengths mean equal texts.
    if (l.n != b.left_n || r.n != b.right_n || r.n == 0) continue;
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    l.id = vocab_.Find(word.substr(l.begin, l.n));
    if (r.next >= 0) symbols[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }

  for (int i = symbols.empty() ? -1 : 0; i != -1; i = symbols[i].next) {
    const Symbol& s = symbols[i];
    if (s.id != kNoToken) {
      out->push_back(s.id);
      continue;
    }
    // A piece no merge produced and the vocabulary lacks (a vocabulary without all 256 byte
    // characters): fall back to its characters one by one, or the unknown token.
    const std::string_view piece = word.substr(s.begin, s.n);
    for (size_t pos = 0; pos < piece.size();) {
      const size_t len =
          std::min(Utf8SequenceLength(static_cast<uint8_t>(piece[pos])), piece.size() - pos);
      const TokenId id = vocab_.Find(piece.substr(pos, len));
      if (id != kNoToken) {
        out->push_back(id);
      } else if (vocab_.unk_id() != kNoToken) {
        out->push_back(vocab_.unk_id());
      }
      pos += len;
    }
  }
}

}  // namespace hotline::engine
