#include "answer/eval/simhash.h"

#include <array>

#include "answer/understand/normalize.h"

namespace hotline::answer {
namespace {

uint64_t Hash64(std::string_view a, std::string_view b) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : a) h = (h ^ c) * 1099511628211ull;
  h = (h ^ ' ') * 1099511628211ull;
  for (unsigned char c : b) h = (h ^ c) * 1099511628211ull;
  // Final mix so that every output bit depends on every input byte.
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return h;
}

}  // namespace

uint64_t SimHash64(std::string_view normalized) {
  std::array<int, 64> votes{};
  std::vector<std::string_view> words = SplitWords(normalized);
  auto add = [&](uint64_t h) {
    for (int i = 0; i < 64; ++i) votes[static_cast<size_t>(i)] += ((h >> i) & 1) ? 1 : -1;
  };
  for (size_t i = 0; i < words.size(); ++i) {
    add(Hash64("", words[i]));
    if (i > 0) add(Hash64(words[i - 1], words[i]));
  }
  uint64_t out = 0;
  for (int i = 0; i < 64; ++i) {
    if (votes[static_cast<size_t>(i)] > 0) out |= 1ull << i;
  }
  return out;
}

uint32_t SimHashIndex::Add(uint64_t fingerprint) {
  prints_.push_back(fingerprint);
  return static_cast<uint32_t>(prints_.size() - 1);
}

SimHashIndex::Match SimHashIndex::Nearest(uint64_t fingerprint, int max_distance,
                                          int64_t skip) const {
  Match m;
  for (size_t i = 0; i < prints_.size(); ++i) {
    if (static_cast<int64_t>(i) == skip) continue;
    int d = HammingDistance(fingerprint, prints_[i]);
    if (d < m.distance) {
      m.distance = d;
      m.id = static_cast<uint32_t>(i);
    }
  }
  m.found = m.distance <= max_distance;
  return m;
}

int CalibrateSimHashDistance(const std::vector<uint64_t>& fingerprints,
                             const std::vector<std::string>& texts,
                             const std::vector<std::string>& labels, double target_false_hit_rate) {
  // hits[d], wrong[d]: nearest-neighbour outcomes at exactly distance d.
  std::array<size_t, 65> hits{}, wrong{};
  const size_t n = fingerprints.size();
  for (size_t i = 0; i < n; ++i) {
    int best = 65;
    size_t best_j = 0;
    for (size_t j = 0; j < n; ++j) {
      if (j == i || texts[j] == texts[i]) continue;
      int d = HammingDistance(fingerprints[i], fingerprints[j]);
      if (d < best) {
        best = d;
        best_j = j;
      }
    }
    if (best > 64) continue;
    ++hits[static_cast<size_t>(best)];
    if (labels[best_j] != labels[i]) ++wrong[static_cast<size_t>(best)];
  }
  int chosen = -1;
  size_t h = 0, w = 0;
  for (int d = 0; d <= 64; ++d) {
    h += hits[static_cast<size_t>(d)];
    w += wrong[static_cast<size_t>(d)];
    if (h > 0 && static_cast<double>(w) / static_cast<double>(h) <= target_false_hit_rate) {
      chosen = d;
    }
  }
  return chosen;
}

}  // namespace hotline::answer
