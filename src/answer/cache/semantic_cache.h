// L2 semantic cache: answers stored with their question; a new question is answered from a
// stored one when the two mean the same thing.
//
// "Mean the same" is: cosine similarity of their TF-IDF vectors (word uni/bigrams + character
// n-grams, features.h) at or above `similarity_threshold`, AND no meaning flip between them
// (semantic_guard.h: negation, opposite actions, swapped roles, different numbers/entities).
// The threshold is calibrated on labelled questions to a target false-hit rate
// (CalibrateSemanticThreshold): each labelled question looks up its nearest neighbour among the
// others, and a hit on a different label is a false hit.
//
// Only cacheable answers belong here: no personal data, no tool results (the caller of Insert
// decides; ARCHITECTURE.md §8). Questions must be redacted NormalizeText output.
//
// Storage: the index (vectors, questions) lives in this process; the answer texts live in a
// SemanticAnswerStore under "l2:<instance>:<number>" keys, so an in-process or shared (Redis) store can
// back them, expire them, or invalidate them (a missing answer is a miss and drops the entry).
// When full, the oldest entry is evicted.
//
// Thread-safety: Lookup may run concurrently from many threads (shared lock); Insert takes an
// exclusive lock. Store calls happen outside the index lock. Lookup allocates per call (vectors
// of a few hundred entries); P99 well under 1 ms at 100,000 entries (bench/answer_cache).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "answer/cache/semantic_index.h"
#include "answer/understand/features.h"
#include "common/status.h"

namespace hotline::answer {

// Key-value storage for cached answer texts. Implementations: InMemoryAnswerStore below, and the
// answer/ module's shared stores (in-process LRU/TTL, Redis) through an adapter.
// Thread-safety: implementations must allow concurrent calls.
class SemanticAnswerStore {
 public:
  virtual ~SemanticAnswerStore() = default;
  virtual Status Put(const std::string& key, const std::string& value) = 0;
  // nullopt when the key is absent (never stored, expired, evicted or invalidated).
  virtual Result<std::optional<std::string>> Get(const std::string& key) = 0;
  virtual Status Erase(const std::string& key) = 0;
};

// A mutex-guarded map; unbounded (the cache bounds the number of entries).
class InMemoryAnswerStore : public SemanticAnswerStore {
 public:
  Status Put(const std::string& key, const std::string& value) override;
  Result<std::optional<std::string>> Get(const std::string& key) override;
  Status Erase(const std::string& key) override;

 private:
  std::mutex mu_;
  std::unordered_map<std::string, std::string> map_;
};

struct SemanticCacheConfig {
  // Minimum cosine similarity for a hit. Higher = fewer false hits and fewer hits; calibrate it
  // with CalibrateSemanticThreshold on labelled questions rather than guessing.
  double similarity_threshold = 0.75;
  // False-hit rate (wrong answers / hits) the calibration aims for.
  double target_false_hit_rate = 0.01;
  // Confidence that the calibrated threshold's false-hit rate is within the target: the
  // calibration bounds the rate (CalibrateSemanticThreshold), so thin evidence (a deployment's
  // first few examples per intent) cannot carry a threshold below similarity_threshold.
  double calibration_confidence = 0.95;
  // Entries kept; the oldest is evicted beyond this. Memory is ~3 KB per entry.
  int max_entries = 100000;
  // Candidates ranked by full cosine per lookup: more = better recall, more time.
  int max_candidates = 32;
  // Reject hits whose question flips the meaning (negation, opposite action, roles, entities).
  // Turning this off is for measurements only.
  bool meaning_guard = true;

  template <class V>
  void Visit(V& v) {
    v.Field("similarity_threshold", similarity_threshold, "Minimum cosine similarity for a hit");
    v.Field("target_false_hit_rate", target_false_hit_rate,
            "False-hit rate the threshold calibration aims for");
    v.Field("calibration_confidence", calibration_confidence,
            "Confidence that a calibrated threshold meets target_false_hit_rate");
    v.Field("max_entries", max_entries, "Entries kept before the oldest is evicted");
    v.Field("max_candidates", max_candidates, "Candidates compared by full cosine per lookup");
    v.Field("meaning_guard", meaning_guard, "Block hits that flip the question's meaning");
  }
  Status Validate() const;
};

struct SemanticHit {
  std::string answer;
  std::string question;  // the stored question that matched
  std::string tag;       // what Insert was given (intent, knowledge-base article@version, ...)
  float similarity = 0;
};

struct SemanticLookupResult {
  std::optional<SemanticHit> hit;
  float best_similarity = 0;   // of the nearest stored question, hit or not
  std::string blocked_by;      // guard that rejected a candidate above the threshold, if any
};

class SemanticCache {
 public:
  // `space`: feature weights (e.g. IntentClassifier::shared_feature_space(), or one built from the
  // questions to be cached). `store`: where answers live; nullptr = a private InMemoryAnswerStore.
  SemanticCache(const SemanticCacheConfig& config, std::shared_ptr<const FeatureSpace> space,
                std::shared_ptr<SemanticAnswerStore> store = nullptr);

  // Stores `answer` for `question` (redacted, normalized). `tag` travels with the hit.
  // Errors: empty question/answer, or the store failing (the entry is then not indexed).
  Status Insert(std::string_view question, std::string_view answer, std::string_view tag = "");

  // Finds a stored answer for `question` (redacted, normalized). A store error is returned as
  // the Status (the caller falls through to the next tier).
  Result<SemanticLookupResult> Lookup(std::string_view question);

  // Only the index part of Lookup (no store access): the matching entry's id, or nullopt.
  struct Match {
    uint32_t id = 0;
    float similarity = 0;
    std::string blocked_by;
    float best_similarity = 0;
    bool hit = false;
  };
  Match FindMatch(std::string_view question) const;
  std::string TagOf(uint32_t id) const;

  // Drops every entry whose tag equals `tag` (e.g. a knowledge-base article that changed).
  size_t InvalidateTag(std::string_view tag);
  // Drops every entry whose tag, read as a `separator`-separated list, contains `item` (an
  // answer built from several articles is tagged "kb:a|kb:b").
  size_t InvalidateTagItem(std::string_view item, char separator = '|');

  void set_threshold(double t);
  double threshold() const;
  size_t size() const;

 private:
  struct Entry {
    std::string question;
    std::string tag;
    uint64_t key = 0;  // the answer's store key number
  };
  std::string StoreKey(uint64_t key) const;
  void DropLocked(uint32_t id);
  template <class Pred>
  size_t DropIf(Pred pred);

  SemanticCacheConfig config_;
  std::shared_ptr<const FeatureSpace> space_;
  std::shared_ptr<SemanticAnswerStore> store_;
  mutable std::shared_mutex mu_;
  SparseNeighbourIndex index_;
  std::unordered_map<uint32_t, Entry> entries_;
  std::deque<uint32_t> order_;  // insertion order, for eviction
  std::atomic<uint64_t> next_key_{1};
  uint64_t instance_ = 0;  // random per cache, part of every store key
};

struct SemanticCalibration {
  double threshold = 1.0;      // the similarity threshold chosen
  double false_hit_rate = 0;   // on the calibration set at that threshold
  double false_hit_bound = 1;  // upper confidence bound on it (calibration_confidence)
  double coverage = 0;         // share of questions that hit at that threshold
  size_t questions = 0;
  // The evidence bounded the false-hit rate at some threshold (then `threshold` is the lowest
  // such). False when it was too thin: `threshold` is then config.similarity_threshold, or
  // higher where the observed false hits at that threshold exceed the target.
  bool bounded = false;
};

// Leave-one-out calibration on labelled (normalized) questions: every question looks up its
// nearest other question (exact duplicates of its own text excluded) through the meaning guard;
// a hit with a different label is a false hit. The threshold is the lowest similarity at which
// the false-hit rate's upper bound at config.calibration_confidence (Wilson score) is within
// config.target_false_hit_rate. With a thousand hits and a few false ones that is close to the
// point estimate; with a few dozen questions no threshold has that evidence, and the prior
// (config.similarity_threshold) stands: thin data never lowers the threshold.
SemanticCalibration CalibrateSemanticThreshold(const std::vector<std::string>& questions,
                                               const std::vector<std::string>& labels,
                                               std::shared_ptr<const FeatureSpace> space,
                                               const SemanticCacheConfig& config);

}  // namespace hotline::answer
