#include "train/bpe_trainer.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "engine/pretokenize.h"

namespace hotline::train {
namespace {

uint64_t PairKey(int32_t a, int32_t b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }

struct Word {
  std::vector<int32_t> symbols;
  int64_t count = 0;
};

void CountPairs(const Word& w, int64_t sign, std::unordered_map<uint64_t, int64_t>* pairs) {
  for (size_t i = 0; i + 1 < w.symbols.size(); ++i) {
    (*pairs)[PairKey(w.symbols[i], w.symbols[i + 1])] += sign * w.count;
  }
}

// The texts' distinct pre-tokenized pieces as byte symbols with their counts, in a fixed
// (sorted) order.
std::vector<Word> CountWords(std::span<const std::string> texts) {
  std::map<std::string, int64_t> piece_counts;
  std::vector<engine::TextPiece> pieces;
  engine::PreTokenizeScratch scratch;
  for (const std::string& text : texts) {
    pieces.clear();
    if (text.empty()) continue;
    engine::PreTokenize(engine::PreTokenizerKind::kGpt2, text, &pieces, &scratch);
    for (const engine::TextPiece& p : pieces) {
      ++piece_counts[text.substr(p.begin, p.end - p.begin)];
    }
  }
  std::vector<Word> words;
  words.reserve(piece_counts.size());
  for (const auto& [piece, count] : piece_counts) {
    Word w;
    w.count = count;
    for (unsigned char c : piece) w.symbols.push_back(c);
    words.push_back(std::move(w));
  }
  return words;
}

// The most frequent pair (ties: the smallest key); `count` gets its count, 0 when none is left.
uint64_t BestPair(const std::unordered_map<uint64_t, int64_t>& pairs, int64_t* count) {
  uint64_t best = 0;
  int64_t best_count = 0;
  for (const auto& [key, n] : pairs) {
    if (n > best_count || (n == best_count && n > 0 && key < best)) {
      best = key;
      best_count = n;
    }
  }
  *count = best_count;
  return best;
}

// Replaces every adjacent (a, b) in the words by `id`, keeping the pair counts current.
void MergeEverywhere(int32_t a, int32_t b, int32_t id, std::vector<Word>& words,
                     std::unordered_map<uint64_t, int64_t>& pairs) {
  for (Word& w : words) {
    bool has = false;
    for (size_t i = 0; i + 1 < w.symbols.size(); ++i) {
      if (w.symbols[i] == a && w.symbols[i + 1] == b) {
        has = true;
        break;
      }
    }
    if (!has) continue;
    CountPairs(w, -1, &pairs);
    std::vector<int32_t> out;
    out.reserve(w.symbols.size());
    for (size_t i = 0; i < w.symbols.size(); ++i) {
      if (i + 1 < w.symbols.size() && w.symbols[i] == a && w.symbols[i + 1] == b) {
        out.push_back(id);
        ++i;
      } else {
        out.push_back(w.symbols[i]);
      }
    }
    w.symbols = std::move(out);
    CountPairs(w, 1, &pairs);
  }
  std::erase_if(pairs, [](const auto& kv) { return kv.second == 0; });
}

}  // namespace

Result<engine::VocabData> TrainBpe(std::span<const std::string> texts,
                                   const BpeTrainOptions& options) {
  const int n_special = static_cast<int>(options.special_tokens.size());
  if (options.vocab_size < 256 + n_special || options.vocab_size > (1 << 20)) {
    return InvalidArgumentError("BPE vocabulary size " + std::to_string(options.vocab_size) +
                                " must be in [256 + special tokens, 1048576]");
  }
  std::set<std::string> seen;
  for (const std::string& s : options.special_tokens) {
    if (s.empty() || !seen.insert(s).second) {
      return InvalidArgumentError("special tokens must be non-empty and distinct");
    }
  }

  std::vector<Word> words = CountWords(texts);

  engine::VocabData v;
  v.model = "gpt2";
  v.pre = "gpt2";
  std::unordered_map<std::string, int32_t> ids;
  for (int b = 0; b < 256; ++b) {
    v.tokens.emplace_back(engine::ByteToBpeChar(static_cast<uint8_t>(b)));
    v.token_types.push_back(static_cast<int32_t>(engine::TokenType::kNormal));
    ids.emplace(v.tokens.back(), b);
  }
  std::unordered_map<uint64_t, int64_t> pairs;
  for (const Word& w : words) CountPairs(w, 1, &pairs);

  const int max_normal = options.vocab_size - n_special;
  while (static_cast<int>(v.tokens.size()) < max_normal) {
    int64_t best_count = 0;
    const uint64_t best = BestPair(pairs, &best_count);
    if (best_count < options.min_pair_count || best_count == 0) break;
    const int32_t a = static_cast<int32_t>(best >> 32);
    const int32_t b = static_cast<int32_t>(best & 0xFFFFFFFFu);
    const std::string merged = v.tokens[size_t(a)] + v.tokens[size_t(b)];
    int32_t id;
    if (auto it = ids.find(merged); it != ids.end()) {
      id = it->second;  // another merge order already built this text
    } else {
      id = static_cast<int32_t>(v.tokens.size());
      v.tokens.push_back(merged);
      v.token_types.push_back(static_cast<int32_t>(engine::TokenType::kNormal));
      ids.emplace(merged, id);
    }
    v.merges.push_back(v.tokens[size_t(a)] + " " + v.tokens[size_t(b)]);
    MergeEverywhere(a, b, id, words, pairs);
  }

  for (const std::string& s : options.special_tokens) {
    const int32_t id = static_cast<int32_t>(v.tokens.size());
    v.tokens.push_back(s);
    v.token_types.push_back(static_cast<int32_t>(engine::TokenType::kControl));
    if (v.eos_id == engine::kNoToken) v.eos_id = id;
    if (s == options.end_of_turn) v.eot_id = id;
  }
  // Fill the vocabulary to exactly vocab_size when the corpus ran out of pairs, so the model's
  // shape does not depend on the corpus.
  while (static_cast<int>(v.tokens.size()) < options.vocab_size) {
    v.tokens.push_back("<|unused_" + std::to_string(v.tokens.size()) + "|>");
    v.token_types.push_back(static_cast<int32_t>(engine::TokenType::kUnused));
  }
  v.add_bos = false;
  v.chat_template = options.chat_template;
  return v;
}

}  // namespace hotline::train
