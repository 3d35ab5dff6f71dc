// Text features shared by the intent classifier, the L2 semantic cache and the evaluation:
// hashed word unigrams and bigrams plus character n-grams inside word boundaries (subword
// features that survive misspellings and ASR errors: "acount" still shares "cou", "oun", "unt"
// with "account"), weighted by TF-IDF and L2-normalized.
//
// A feature is a 32-bit hash of its text; word and character features hash different prefixes,
// so they never collide by construction, only by chance (2^-32 per pair).
//
// FeatureSpace holds the document frequencies learned from a corpus (the training questions). It
// is immutable once built: share one const instance between threads. Vectorize allocates the
// returned vector (a few hundred entries); nothing else allocates.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"

namespace hotline::answer {

struct FeatureConfig {
  // Word unigrams: the backbone; cheap and precise.
  bool word_unigrams = true;
  // Word bigrams: capture order ("card declined" vs "declined card" are the same, "to savings"
  // vs "from savings" are not); doubles the word features.
  bool word_bigrams = true;
  // Character n-grams within word boundaries, lengths [char_ngram_min, char_ngram_max]. Wider
  // ranges tolerate more spelling variation but add features (and time) per question. 0 = off.
  int char_ngram_min = 3;
  int char_ngram_max = 5;
  // Weight of the character block relative to the word block before normalization. Lower values
  // let exact words dominate; higher values favour fuzzy matches.
  double char_weight = 0.5;

  template <class V>
  void Visit(V& v) {
    v.Field("word_unigrams", word_unigrams, "Use word unigram features");
    v.Field("word_bigrams", word_bigrams, "Use word bigram features");
    v.Field("char_ngram_min", char_ngram_min, "Shortest character n-gram (0 = no char n-grams)");
    v.Field("char_ngram_max", char_ngram_max, "Longest character n-gram");
    v.Field("char_weight", char_weight, "Weight of character n-grams relative to words");
  }
  Status Validate() const;
};

// Sparse vector: `ids` ascending and unique, `values` parallel to it.
struct SparseVector {
  std::vector<uint32_t> ids;
  std::vector<float> values;
  size_t size() const { return ids.size(); }
};

// Dot product of two sparse vectors (cosine when both are L2-normalized).
float Dot(const SparseVector& a, const SparseVector& b);

// Hash of one word as a unigram feature (the id Vectorize gives it).
uint32_t WordFeatureId(std::string_view word);

// Appends the feature hashes of `normalized` text (with repeats, one per occurrence) and each
// one's block weight (1 for words, char_weight for character n-grams).
void ExtractFeatures(std::string_view normalized, const FeatureConfig& config,
                     std::vector<uint32_t>* ids, std::vector<float>* weights);

class FeatureSpace {
 public:
  // Learns document frequencies from `normalized_docs`. Features seen in fewer than `min_df`
  // documents are unknown to the space. An empty corpus gives a space where every feature has
  // idf 1 (plain TF vectors).
  static std::shared_ptr<const FeatureSpace> Build(const std::vector<std::string>& normalized_docs,
                                                   const FeatureConfig& config, int min_df = 1);

  // TF-IDF vector (sublinear tf: 1 + log(count)), L2-normalized, ids = feature hashes. Unknown
  // features are kept with the largest idf (rare = informative).
  SparseVector Vectorize(std::string_view normalized) const;

  // Same weights, but ids are dense indices in [0, size()) and unknown features are dropped: the
  // input of linear models.
  SparseVector VectorizeIndexed(std::string_view normalized) const;

  // Word unigrams of `normalized` with their idf as values (not normalized): the keys of
  // SparseNeighbourIndex (common words are skipped by the index itself).
  SparseVector WordKeys(std::string_view normalized) const;

  size_t size() const { return idf_.size(); }
  const FeatureConfig& config() const { return config_; }

 private:
  FeatureSpace() = default;
  SparseVector Make(std::string_view normalized, bool indexed) const;

  FeatureConfig config_;
  std::unordered_map<uint32_t, uint32_t> index_;  // hash -> dense index
  std::vector<float> idf_;
  float unknown_idf_ = 1.0f;
};

}  // namespace hotline::answer
