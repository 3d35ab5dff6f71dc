// Nearest-neighbour search over sparse TF-IDF vectors (cosine similarity), for the L2 semantic
// cache and the intent classifier's neighbour check.
//
// Each entry has a full vector (words + character n-grams, L2-normalized) and a small key vector
// (its word unigrams with idf weights). A query first scores candidates through an inverted index
// over keys (only entries sharing a word with the query are touched), keeps the best
// `max_candidates`, and ranks those by the full cosine. Words present in more than
// `max_posting_share` of the entries are skipped as keys (they select everything and add time,
// not information). Key words are walked rarest first; once the rarer words have found
// max_candidates entries, a posting list longer than kLongPostingList only adds to the scores of
// entries already found (no new candidates, no candidate bookkeeping), which keeps a large index
// (100,000 entries) near the cost of a small one. Cost per query: the touched postings plus
// max_candidates sparse dot products.
//
// Thread-safety: none inside; the owner synchronizes (SemanticCache holds a shared_mutex:
// Search under a shared lock, Add/Remove under an exclusive one). Search allocates small per-call
// vectors and a scratch array sized to the index (reused per thread).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "answer/understand/features.h"

namespace hotline::answer {

struct Neighbour {
  uint32_t id = 0;
  float similarity = 0;  // cosine of the full vectors
};

// Posting lists longer than this add no new candidates once there are enough (see above); an
// index below 5 x this size never has one (its lists are cut at max_posting_share first).
inline constexpr size_t kLongPostingList = 4096;

class SparseNeighbourIndex {
 public:
  explicit SparseNeighbourIndex(double max_posting_share = 0.2) : max_share_(max_posting_share) {}

  // Adds an entry; returns its id (dense, never reused).
  uint32_t Add(SparseVector full, const SparseVector& keys);
  // Removes an entry from future results (its postings are dropped lazily).
  void Remove(uint32_t id);
  bool Contains(uint32_t id) const { return id < live_.size() && live_[id]; }

  // The up to `k` most similar live entries, best first.
  std::vector<Neighbour> Search(const SparseVector& query, const SparseVector& query_keys,
                                size_t k, size_t max_candidates = 64) const;

  size_t size() const { return live_count_; }
  size_t capacity() const { return live_.size(); }

 private:
  double max_share_;
  std::vector<SparseVector> vectors_;
  std::vector<bool> live_;
  size_t live_count_ = 0;
  std::unordered_map<uint32_t, std::vector<std::pair<uint32_t, float>>> postings_;
};

}  // namespace hotline::answer
