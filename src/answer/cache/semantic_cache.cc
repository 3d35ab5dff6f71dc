#include "answer/cache/semantic_cache.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "answer/cache/semantic_guard.h"
#include "answer/understand/calibration.h"

namespace hotline::answer {

Status InMemoryAnswerStore::Put(const std::string& key, const std::string& value) {
  std::lock_guard<std::mutex> lock(mu_);
  map_[key] = value;
  return Status::Ok();
}

Result<std::optional<std::string>> InMemoryAnswerStore::Get(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = map_.find(key);
  if (it == map_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Status InMemoryAnswerStore::Erase(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  map_.erase(key);
  return Status::Ok();
}

Status SemanticCacheConfig::Validate() const {
  if (!(similarity_threshold > 0 && similarity_threshold <= 1.0)) {
    return InvalidArgumentError("similarity_threshold must be in (0, 1], got " +
                                std::to_string(similarity_threshold));
  }
  if (!(target_false_hit_rate >= 0 && target_false_hit_rate < 0.5)) {
    return InvalidArgumentError("target_false_hit_rate must be in [0, 0.5), e.g. 0.01");
  }
  if (!(calibration_confidence >= 0.5 && calibration_confidence <= 0.9999)) {
    return InvalidArgumentError("calibration_confidence must be in [0.5, 0.9999], e.g. 0.95");
  }
  if (max_entries < 1 || max_entries > 50'000'000) {
    return InvalidArgumentError("max_entries must be in [1, 50000000]");
  }
  if (max_candidates < 1 || max_candidates > 4096) {
    return InvalidArgumentError("max_candidates must be in [1, 4096]");
  }
  return Status::Ok();
}

SemanticCache::SemanticCache(const SemanticCacheConfig& config,
                             std::shared_ptr<const FeatureSpace> space,
                             std::shared_ptr<SemanticAnswerStore> store)
    : config_(config), space_(std::move(space)), store_(std::move(store)) {
  if (!space_) space_ = FeatureSpace::Build({}, FeatureConfig{}, 1);
  if (!store_) store_ = std::make_shared<InMemoryAnswerStore>();
  // Processes sharing one store must not overwrite each other's keys.
  std::random_device rd;
  instance_ = (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

std::string SemanticCache::StoreKey(uint64_t key) const {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "l2:%016llx:%llu", static_cast<unsigned long long>(instance_),
                static_cast<unsigned long long>(key));
  return buf;
}

Status SemanticCache::Insert(std::string_view question, std::string_view answer,
                             std::string_view tag) {
  if (question.empty()) return InvalidArgumentError("semantic cache: empty question");
  if (answer.empty()) return InvalidArgumentError("semantic cache: empty answer");
  SparseVector v = space_->Vectorize(question);
  SparseVector keys = space_->WordKeys(question);
  // The answer is stored before the entry becomes visible, so a concurrent Lookup never finds
  // an entry whose answer is missing.
  const uint64_t key = next_key_.fetch_add(1);
  RETURN_IF_ERROR(store_->Put(StoreKey(key), std::string(answer))
                      .WithContext("semantic cache: storing the answer failed"));
  std::vector<uint64_t> evicted;
  {
    std::unique_lock lock(mu_);
    uint32_t id = index_.Add(std::move(v), keys);
    entries_[id] = Entry{std::string(question), std::string(tag), key};
    order_.push_back(id);
    while (index_.size() > static_cast<size_t>(config_.max_entries) && !order_.empty()) {
      uint32_t old = order_.front();
      order_.pop_front();
      auto it = entries_.find(old);
      if (it == entries_.end()) continue;
      evicted.push_back(it->second.key);
      DropLocked(old);
    }
  }
  for (uint64_t old : evicted) (void)store_->Erase(StoreKey(old));  // best effort
  return Status::Ok();
}

void SemanticCache::DropLocked(uint32_t id) {
  index_.Remove(id);
  entries_.erase(id);
}

SemanticCache::Match SemanticCache::FindMatch(std::string_view question) const {
  Match m;
  if (question.empty()) return m;
  SparseVector v = space_->Vectorize(question);
  SparseVector keys = space_->WordKeys(question);
  std::shared_lock lock(mu_);
  std::vector<Neighbour> nn = index_.Search(v, keys, 8, static_cast<size_t>(config_.max_candidates));
  if (nn.empty()) return m;
  m.best_similarity = nn[0].similarity;
  for (const Neighbour& n : nn) {
    if (n.similarity < config_.similarity_threshold) break;
    auto it = entries_.find(n.id);
    if (it == entries_.end()) continue;
    if (config_.meaning_guard) {
      std::string_view flip = MeaningFlip(question, it->second.question);
      if (!flip.empty()) {
        if (m.blocked_by.empty()) m.blocked_by = std::string(flip);
        continue;
      }
    }
    m.id = n.id;
    m.similarity = n.similarity;
    m.hit = true;
    break;
  }
  return m;
}

std::string SemanticCache::TagOf(uint32_t id) const {
  std::shared_lock lock(mu_);
  auto it = entries_.find(id);
  return it == entries_.end() ? std::string() : it->second.tag;
}

Result<SemanticLookupResult> SemanticCache::Lookup(std::string_view question) {
  SemanticLookupResult r;
  Match m = FindMatch(question);
  r.best_similarity = m.best_similarity;
  r.blocked_by = m.blocked_by;
  if (!m.hit) return r;
  SemanticHit hit;
  uint64_t key = 0;
  {
    std::shared_lock lock(mu_);
    auto it = entries_.find(m.id);
    if (it == entries_.end()) return r;  // evicted meanwhile
    hit.question = it->second.question;
    hit.tag = it->second.tag;
    key = it->second.key;
  }
  auto answer = store_->Get(StoreKey(key));
  if (!answer.ok()) return answer.status().WithContext("semantic cache: reading the answer");
  if (!answer->has_value()) {
    // Expired or invalidated in the store: forget the entry too.
    std::unique_lock lock(mu_);
    auto it = entries_.find(m.id);
    if (it != entries_.end() && it->second.key == key) DropLocked(m.id);
    return r;
  }
  hit.answer = std::move(**answer);
  hit.similarity = m.similarity;
  r.hit = std::move(hit);
  return r;
}

template <class Pred>
size_t SemanticCache::DropIf(Pred pred) {
  std::vector<uint32_t> ids;
  std::vector<uint64_t> keys;
  {
    std::unique_lock lock(mu_);
    for (const auto& [id, e] : entries_) {
      if (pred(e.tag)) {
        ids.push_back(id);
        keys.push_back(e.key);
      }
    }
    for (uint32_t id : ids) DropLocked(id);
  }
  for (uint64_t key : keys) (void)store_->Erase(StoreKey(key));  // best effort
  return ids.size();
}

size_t SemanticCache::InvalidateTag(std::string_view tag) {
  return DropIf([tag](const std::string& t) { return t == tag; });
}

size_t SemanticCache::InvalidateTagItem(std::string_view item, char separator) {
  if (item.empty()) return 0;
  return DropIf([item, separator](const std::string& t) {
    size_t start = 0;
    while (start <= t.size()) {
      size_t end = t.find(separator, start);
      if (end == std::string::npos) end = t.size();
      if (std::string_view(t).substr(start, end - start) == item) return true;
      start = end + 1;
    }
    return false;
  });
}

void SemanticCache::set_threshold(double t) {
  std::unique_lock lock(mu_);
  config_.similarity_threshold = t;
}

double SemanticCache::threshold() const {
  std::shared_lock lock(mu_);
  return config_.similarity_threshold;
}

size_t SemanticCache::size() const {
  std::shared_lock lock(mu_);
  return index_.size();
}

SemanticCalibration CalibrateSemanticThreshold(const std::vector<std::string>& questions,
                                               const std::vector<std::string>& labels,
                                               std::shared_ptr<const FeatureSpace> space,
                                               const SemanticCacheConfig& config) {
  SemanticCalibration cal;
  cal.questions = questions.size();
  if (questions.size() < 2 || labels.size() != questions.size()) return cal;
  SparseNeighbourIndex index;
  std::vector<SparseVector> vecs;
  std::vector<SparseVector> keys;
  vecs.reserve(questions.size());
  for (const std::string& q : questions) {
    vecs.push_back(space->Vectorize(q));
    keys.push_back(space->WordKeys(q));
    index.Add(vecs.back(), keys.back());
  }
  std::vector<ScoredOutcome> outcomes;
  outcomes.reserve(questions.size());
  for (size_t i = 0; i < questions.size(); ++i) {
    auto nn = index.Search(vecs[i], keys[i], 8, static_cast<size_t>(config.max_candidates));
    for (const Neighbour& n : nn) {
      if (questions[n.id] == questions[i]) continue;  // itself or an exact duplicate
      if (config.meaning_guard && !MeaningFlip(questions[i], questions[n.id]).empty()) continue;
      outcomes.push_back({n.similarity, labels[n.id] == labels[i]});
      break;
    }
  }
  const double bounded = ThresholdForWrongRateBound(outcomes, config.target_false_hit_rate,
                                                    config.calibration_confidence);
  cal.bounded = std::isfinite(bounded);
  if (cal.bounded) {
    cal.threshold = bounded;
  } else {
    // Too little evidence to go below the prior; the observed false hits may still raise it.
    const double point = ThresholdForPrecision(outcomes, 1.0 - config.target_false_hit_rate, 20);
    cal.threshold = std::max(config.similarity_threshold, std::isfinite(point) ? point : 0.0);
  }
  cal.threshold = std::min(cal.threshold, 1.0);
  size_t hits = 0, wrong = 0;
  for (const ScoredOutcome& o : outcomes) {
    if (o.score >= cal.threshold) {
      ++hits;
      wrong += o.correct ? 0 : 1;
    }
  }
  cal.false_hit_rate = hits == 0 ? 0 : static_cast<double>(wrong) / static_cast<double>(hits);
  cal.false_hit_bound = RateUpperBound(wrong, hits, config.calibration_confidence);
  cal.coverage = static_cast<double>(hits) / static_cast<double>(questions.size());
  return cal;
}

}  // namespace hotline::answer
