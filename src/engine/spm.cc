#include "engine/spm.h"

#include <algorithm>
#include <queue>

#include "engine/unicode.h"

namespace hotline::engine {
namespace {

struct Symbol {
  int prev;
  int next;
  uint32_t begin;  // byte offset into the escaped text
  uint32_t n;      // bytes; 0 once merged into its left neighbour
};

struct Bigram {
  float score;
  int left;
  int right;
  uint32_t size;
};

// Highest score first; equal scores: leftmost first.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

void SpmTokenizer::Encode(std::string_view raw, bool add_space_prefix,
                          std::vector<TokenId>* out) const {
  std::string text;
  text.reserve(raw.size() + raw.size() / 2 + 3);
  if (add_space_prefix) text.append(kSpmSpace);
  for (char c : raw) {
    if (c == ' ') {
      text.append(kSpmSpace);
    } else {
      text.push_back(c);
    }
  }
  if (text.empty()) return;

  std::vector<Symbol> symbols;
  symbols.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    // Malformed bytes become one-byte symbols (byte fallback keeps them exact) rather than
    // swallowing the next character, as a plain lead-byte length would.
    size_t next = pos;
    DecodeUtf8(text, &next);
    const size_t len = next - pos;
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({index - 1, pos + len == text.size() ? -1 : index + 1,
                       static_cast<uint32_t>(pos), static_cast<uint32_t>(len)});
    pos += len;
  }

  std::vector<Bigram> heap_storage;
  heap_storage.reserve(symbols.size());
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue(BigramOrder{},
                                                                      std::move(heap_storage));
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[left];
    const Symbol& r = symbols[right];
    // Symbols are contiguous in the text, so the pair's text is one slice.
    const std::string_view pair(text.data() + l.begin, l.n + r.n);
    const TokenId id = vocab_.Find(pair);
    if (id == kNoToken) return;
    queue.push({vocab_.Score(id), left, right, l.n + r.n});
  };
  for (size_t i = 1; i < symbols.size(); ++i) {
    try_add(static_cast<int>(i - 1), static_cast<int>(i));
  }

  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = symbols[b.left];
    Symbol& r = symbols[b.right];
    // Stale: one side was merged elsewhere since this pair was queued.
    if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }

  for (int i = 0; i != -1; i = symbols[i].next) {
    const Symbol& s = symbols[i];
    const std::string_view piece(text.data() + s.begin, s.n);
    const TokenId id = vocab_.Find(piece);
    if (id != kNoToken) {
      out->push_back(id);
      continue;
    }
    // Every merged symbol is a token, so this is one character that is not: byte fallback.
    bool all_bytes = true;
    for (char c : piece) all_bytes &= vocab_.ByteToken(static_cast<uint8_t>(c)) != kNoToken;
    if (all_bytes) {
      for (char c : piece) out->push_back(vocab_.ByteToken(static_cast<uint8_t>(c)));
    } else if (vocab_.unk_id() != kNoToken) {
      out->push_back(vocab_.unk_id());
    }
  }
}

}  // namespace hotline::engine
