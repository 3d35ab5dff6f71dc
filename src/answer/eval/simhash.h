// SimHash baseline for question matching (Charikar 2002), as the original design proposed: a
// 64-bit fingerprint per question; two questions match when their fingerprints differ in at most
// `max_distance` bits. Kept to be measured beside the semantic cache (hotline eval cache).
//
// Features: word unigrams and bigrams of the normalized text, each hashed to 64 bits and weighted
// 1; bit i of the fingerprint is set when the features with bit i set outnumber those without.
//
// Thread-safety: SimHash64 is pure. SimHashIndex is not synchronized (build, then read from any
// number of threads). Lookup is a linear scan with popcount: ~0.1 ns per entry.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hotline::answer {

uint64_t SimHash64(std::string_view normalized);

inline int HammingDistance(uint64_t a, uint64_t b) { return __builtin_popcountll(a ^ b); }

class SimHashIndex {
 public:
  // Returns the entry's id (dense, in insertion order).
  uint32_t Add(uint64_t fingerprint);

  struct Match {
    bool found = false;
    uint32_t id = 0;
    int distance = 65;
  };
  // The nearest entry within `max_distance` bits (ties: the earliest). `skip` excludes one id
  // (leave-one-out calibration).
  Match Nearest(uint64_t fingerprint, int max_distance, int64_t skip = -1) const;

  size_t size() const { return prints_.size(); }

 private:
  std::vector<uint64_t> prints_;
};

// The largest Hamming distance at which nearest-neighbour hits on `labels` keep a false-hit rate
// <= `target_false_hit_rate` (leave-one-out over `fingerprints`, exact-duplicate texts excluded
// via `texts`). -1 when even distance 0 is above the target.
int CalibrateSimHashDistance(const std::vector<uint64_t>& fingerprints,
                             const std::vector<std::string>& texts,
                             const std::vector<std::string>& labels, double target_false_hit_rate);

}  // namespace hotline::answer
