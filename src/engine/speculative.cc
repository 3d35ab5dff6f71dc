#include "engine/speculative.h"

#include <algorithm>

namespace hotline::engine {

namespace {

bool SameTokens(std::span<const int32_t> a, std::span<const int32_t> b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

int Append(std::span<const int32_t> from, int max_tokens, std::vector<int32_t>* out) {
  const int n = std::min(static_cast<int>(from.size()), max_tokens);
  out->insert(out->end(), from.begin(), from.begin() + n);
  return n;
}

}  // namespace

int DraftFromContext(std::span<const int32_t> context, const DraftConfig& config, int max_tokens,
                     std::vector<int32_t>* out, int* matched) {
  const int len = static_cast<int>(context.size());
  if (matched != nullptr) *matched = 0;
  if (max_tokens <= 0) return 0;
  for (int n = std::min(config.ngram_max, len - 1); n >= std::max(config.ngram_min, 1); --n) {
    const std::span<const int32_t> suffix = context.subspan(size_t(len - n));
    // The latest earlier occurrence: it starts before the suffix, so a token follows it.
    for (int i = len - n - 1; i >= 0; --i) {
      if (context[size_t(i + n - 1)] != suffix.back()) continue;
      if (!SameTokens(context.subspan(size_t(i), size_t(n)), suffix)) continue;
      if (matched != nullptr) *matched = n;
      return Append(context.subspan(size_t(i + n)), max_tokens, out);
    }
  }
  return 0;
}

AnswerNgramCache::AnswerNgramCache(const DraftConfig& config, int capacity_tokens)
    : config_(config), capacity_(std::max(capacity_tokens, 0)) {
  config_.ngram_min = std::max(config_.ngram_min, 1);
  config_.ngram_max = std::max(config_.ngram_max, config_.ngram_min);
}

uint64_t AnswerNgramCache::Hash(std::span<const int32_t> ngram) {
  // splitmix64 steps chained over the tokens, seeded with the length.
  uint64_t h = 0x9e3779b97f4a7c15ull * (ngram.size() + 1);
  for (int32_t t : ngram) {
    h ^= static_cast<uint32_t>(t);
    h += 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
  }
  return h;
}

const std::vector<int32_t>* AnswerNgramCache::Find(uint64_t serial) const {
  if (serial < first_serial_ || serial - first_serial_ >= answers_.size()) return nullptr;
  return &answers_[size_t(serial - first_serial_)];
}

void AnswerNgramCache::Add(std::span<const int32_t> answer) {
  const int len = static_cast<int>(answer.size());
  if (len < config_.ngram_min + 1 || len > capacity_) return;
  const uint64_t serial = first_serial_ + answers_.size();
  answers_.emplace_back(answer.begin(), answer.end());
  tokens_ += len;
  // Every n-gram that some token follows; a later answer's entry replaces an earlier one's.
  for (int end = config_.ngram_min; end < len; ++end) {
    for (int n = config_.ngram_min; n <= std::min(config_.ngram_max, end); ++n) {
      index_[Hash(answer.subspan(size_t(end - n), size_t(n)))] = Where{serial, end};
    }
  }
  Evict();
}

void AnswerNgramCache::Evict() {
  while (tokens_ > capacity_ && !answers_.empty()) {
    const std::vector<int32_t>& old = answers_.front();
    const int len = static_cast<int>(old.size());
    for (int end = config_.ngram_min; end < len; ++end) {
      for (int n = config_.ngram_min; n <= std::min(config_.ngram_max, end); ++n) {
        const std::span<const int32_t> ngram(old.data() + (end - n), size_t(n));
        auto it = index_.find(Hash(ngram));
        if (it != index_.end() && it->second.answer == first_serial_) index_.erase(it);
      }
    }
    tokens_ -= len;
    answers_.pop_front();
    ++first_serial_;
  }
}

int AnswerNgramCache::Draft(std::span<const int32_t> context, int max_tokens,
                            std::vector<int32_t>* out, int* matched) const {
  const int len = static_cast<int>(context.size());
  if (matched != nullptr) *matched = 0;
  if (max_tokens <= 0 || index_.empty()) return 0;
  for (int n = std::min(config_.ngram_max, len); n >= config_.ngram_min; --n) {
    const std::span<const int32_t> suffix = context.subspan(size_t(len - n));
    const auto it = index_.find(Hash(suffix));
    if (it == index_.end()) continue;
    const std::vector<int32_t>* answer = Find(it->second.answer);
    if (answer == nullptr) continue;
    const std::span<const int32_t> a(*answer);
    const int end = it->second.end;
    if (!SameTokens(a.subspan(size_t(end - n), size_t(n)), suffix)) continue;  // a collision
    if (matched != nullptr) *matched = n;
    return Append(a.subspan(size_t(end)), max_tokens, out);
  }
  return 0;
}

SpeculationGovernor::SpeculationGovernor(int max_sequences)
    : sizes_(size_t(std::max(max_sequences, 0)) + 1) {}

bool SpeculationGovernor::Choose(int sequences) {
  if (sequences < 1 || sequences >= static_cast<int>(sizes_.size())) return false;
  Size& s = sizes_[size_t(sequences)];
  const uint64_t pass = s.passes++;
  constexpr int kFirst = 4;  // passes of each kind before the averages are trusted
  if (s.draft_n < kFirst) return true;
  if (s.plain_n < kFirst) return false;
  const bool better = s.draft < s.plain;
  return pass % 32 == 31 ? !better : better;
}

void SpeculationGovernor::Record(int sequences, bool drafted, double ms, int tokens) {
  if (sequences < 1 || sequences >= static_cast<int>(sizes_.size()) || tokens < 1 || ms < 0) {
    return;
  }
  Size& s = sizes_[size_t(sequences)];
  double& avg = drafted ? s.draft : s.plain;
  int& n = drafted ? s.draft_n : s.plain_n;
  const double v = ms / tokens;
  avg = n == 0 ? v : avg + (v - avg) / 8;
  ++n;
}

double SpeculationGovernor::plain_ms_per_token(int sequences) const {
  if (sequences < 1 || sequences >= static_cast<int>(sizes_.size())) return 0;
  return sizes_[size_t(sequences)].plain;
}

double SpeculationGovernor::draft_ms_per_token(int sequences) const {
  if (sequences < 1 || sequences >= static_cast<int>(sizes_.size())) return 0;
  return sizes_[size_t(sequences)].draft;
}

}  // namespace hotline::engine
