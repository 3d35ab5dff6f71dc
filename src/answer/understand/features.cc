#include "answer/understand/features.h"

#include <algorithm>
#include <cmath>

#include "answer/understand/normalize.h"
#include "common/utf8.h"

namespace hotline::answer {
namespace {

constexpr uint64_t kFnvOffset = 1469598103934665603ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

uint64_t Fnv(uint64_t h, std::string_view s) {
  for (unsigned char c : s) {
    h ^= c;
    h *= kFnvPrime;
  }
  return h;
}

uint32_t Fold(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  return static_cast<uint32_t>(h);
}

uint32_t Hash(char tag, std::string_view a) {
  uint64_t h = Fnv(kFnvOffset, std::string_view(&tag, 1));
  return Fold(Fnv(h, a));
}

uint32_t Hash2(char tag, std::string_view a, std::string_view b) {
  uint64_t h = Fnv(kFnvOffset, std::string_view(&tag, 1));
  h = Fnv(h, a);
  h = Fnv(h, " ");
  return Fold(Fnv(h, b));
}

}  // namespace

Status FeatureConfig::Validate() const {
  if (!word_unigrams && !word_bigrams && char_ngram_min == 0) {
    return InvalidArgumentError("no features enabled: turn on word_unigrams, word_bigrams or "
                                "character n-grams");
  }
  if (char_ngram_min < 0 || char_ngram_max > 8 || (char_ngram_min > 0 && char_ngram_max < char_ngram_min)) {
    return InvalidArgumentError("char_ngram_min/char_ngram_max must satisfy 0 <= min <= max <= 8, got " +
                                std::to_string(char_ngram_min) + "/" + std::to_string(char_ngram_max));
  }
  if (!(char_weight > 0 && char_weight <= 10)) {
    return InvalidArgumentError("char_weight must be in (0, 10], got " + std::to_string(char_weight));
  }
  return Status::Ok();
}

float Dot(const SparseVector& a, const SparseVector& b) {
  float s = 0;
  size_t i = 0, j = 0;
  while (i < a.ids.size() && j < b.ids.size()) {
    if (a.ids[i] < b.ids[j]) {
      ++i;
    } else if (a.ids[i] > b.ids[j]) {
      ++j;
    } else {
      s += a.values[i++] * b.values[j++];
    }
  }
  return s;
}

uint32_t WordFeatureId(std::string_view word) { return Hash('w', word); }

namespace {

bool IsOneHanCharacter(std::string_view w) {
  char32_t cp = 0;
  return !w.empty() && DecodeUtf8(w, 0, &cp) == w.size() && IsHan(cp);
}

}  // namespace

void ExtractFeatures(std::string_view normalized, const FeatureConfig& config,
                     std::vector<uint32_t>* ids, std::vector<float>* weights) {
  std::vector<std::string_view> words = SplitWords(normalized);
  const float cw = static_cast<float>(config.char_weight);
  std::string padded;
  for (size_t i = 0; i < words.size(); ++i) {
    if (config.word_unigrams) {
      ids->push_back(Hash('w', words[i]));
      weights->push_back(1.0f);
    }
    if (config.word_bigrams) {
      ids->push_back(Hash2('b', i == 0 ? std::string_view("^") : words[i - 1], words[i]));
      weights->push_back(1.0f);
    }
    // A Han character is a word of its own (NormalizeText splits Chinese into characters): its
    // unigram and its bigrams with the neighbours are its features; byte n-grams inside one
    // character would only repeat it.
    if (config.char_ngram_min > 0 && !IsOneHanCharacter(words[i])) {
      padded.assign(" ");
      padded.append(words[i]);
      padded.push_back(' ');
      for (int n = config.char_ngram_min; n <= config.char_ngram_max; ++n) {
        if (static_cast<size_t>(n) > padded.size()) break;
        for (size_t k = 0; k + n <= padded.size(); ++k) {
          ids->push_back(Hash('c', std::string_view(padded).substr(k, n)));
          weights->push_back(cw);
        }
      }
    }
  }
  if (config.word_bigrams && !words.empty()) {
    ids->push_back(Hash2('b', words.back(), "$"));
    weights->push_back(1.0f);
  }
}

std::shared_ptr<const FeatureSpace> FeatureSpace::Build(
    const std::vector<std::string>& normalized_docs, const FeatureConfig& config, int min_df) {
  auto space = std::shared_ptr<FeatureSpace>(new FeatureSpace());
  space->config_ = config;
  std::unordered_map<uint32_t, uint32_t> df;
  std::vector<uint32_t> ids;
  std::vector<float> weights;
  for (const std::string& doc : normalized_docs) {
    ids.clear();
    weights.clear();
    ExtractFeatures(doc, config, &ids, &weights);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (uint32_t id : ids) ++df[id];
  }
  const double n = static_cast<double>(normalized_docs.size());
  std::vector<std::pair<uint32_t, uint32_t>> kept;
  for (const auto& [id, count] : df) {
    if (static_cast<int>(count) >= min_df) kept.emplace_back(id, count);
  }
  std::sort(kept.begin(), kept.end());  // deterministic indices
  space->idf_.reserve(kept.size());
  space->index_.reserve(kept.size());
  for (const auto& [id, count] : kept) {
    space->index_.emplace(id, static_cast<uint32_t>(space->idf_.size()));
    space->idf_.push_back(static_cast<float>(std::log((n + 1) / (count + 1)) + 1));
  }
  space->unknown_idf_ = normalized_docs.empty() ? 1.0f : static_cast<float>(std::log(n + 1) + 1);
  return space;
}

SparseVector FeatureSpace::Make(std::string_view normalized, bool indexed) const {
  std::vector<uint32_t> ids;
  std::vector<float> weights;
  ids.reserve(256);
  weights.reserve(256);
  ExtractFeatures(normalized, config_, &ids, &weights);
  // Sort (id, weight) pairs by id, then merge repeats.
  std::vector<std::pair<uint32_t, float>> pairs(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) pairs[i] = {ids[i], weights[i]};
  std::sort(pairs.begin(), pairs.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  SparseVector v;
  v.ids.reserve(pairs.size());
  v.values.reserve(pairs.size());
  double norm = 0;
  for (size_t i = 0; i < pairs.size();) {
    size_t j = i;
    while (j < pairs.size() && pairs[j].first == pairs[i].first) ++j;
    float tf = 1.0f + std::log(static_cast<float>(j - i));
    uint32_t id = pairs[i].first;
    float idf = unknown_idf_;
    auto it = index_.find(id);
    if (it != index_.end()) {
      idf = idf_[it->second];
      if (indexed) id = it->second;
    } else if (indexed) {
      i = j;
      continue;
    }
    float w = tf * idf * pairs[i].second;
    v.ids.push_back(id);
    v.values.push_back(w);
    norm += static_cast<double>(w) * w;
    i = j;
  }
  if (indexed) {
    // Dense indices follow hash order, so the vector is still sorted.
  }
  if (norm > 0) {
    float inv = static_cast<float>(1.0 / std::sqrt(norm));
    for (float& x : v.values) x *= inv;
  }
  return v;
}

SparseVector FeatureSpace::WordKeys(std::string_view normalized) const {
  std::vector<std::pair<uint32_t, float>> pairs;
  for (std::string_view w : SplitWords(normalized)) {
    uint32_t id = WordFeatureId(w);
    auto it = index_.find(id);
    pairs.emplace_back(id, it == index_.end() ? unknown_idf_ : idf_[it->second]);
  }
  std::sort(pairs.begin(), pairs.end());
  SparseVector v;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (i > 0 && pairs[i].first == pairs[i - 1].first) continue;
    v.ids.push_back(pairs[i].first);
    v.values.push_back(pairs[i].second);
  }
  return v;
}

SparseVector FeatureSpace::Vectorize(std::string_view normalized) const {
  return Make(normalized, false);
}

SparseVector FeatureSpace::VectorizeIndexed(std::string_view normalized) const {
  return Make(normalized, true);
}

}  // namespace hotline::answer
