#include "answer/cache/semantic_index.h"

#include <algorithm>

namespace hotline::answer {

uint32_t SparseNeighbourIndex::Add(SparseVector full, const SparseVector& keys) {
  uint32_t id = static_cast<uint32_t>(vectors_.size());
  vectors_.push_back(std::move(full));
  live_.push_back(true);
  ++live_count_;
  for (size_t k = 0; k < keys.ids.size(); ++k) postings_[keys.ids[k]].emplace_back(id, keys.values[k]);
  return id;
}

void SparseNeighbourIndex::Remove(uint32_t id) {
  if (!Contains(id)) return;
  live_[id] = false;
  --live_count_;
  vectors_[id] = SparseVector();  // free the memory; postings are skipped via live_
}

std::vector<Neighbour> SparseNeighbourIndex::Search(const SparseVector& query,
                                                    const SparseVector& query_keys, size_t k,
                                                    size_t max_candidates) const {
  std::vector<Neighbour> out;
  if (live_count_ == 0 || k == 0) return out;
  // Scratch accumulator per thread, grown to the index size; `touched` lists what to reset.
  thread_local std::vector<float> acc;
  thread_local std::vector<uint32_t> touched;
  if (acc.size() < vectors_.size()) acc.resize(vectors_.size(), 0.0f);
  touched.clear();
  const size_t max_postings =
      std::max<size_t>(64, static_cast<size_t>(max_share_ * static_cast<double>(vectors_.size())));
  // Rarest words first: they select the few entries worth ranking. A long posting list (a
  // common word in a large index) is only walked while the rarer words have not yet found
  // enough candidates, which bounds the work per query whatever the index size.
  using List = const std::vector<std::pair<uint32_t, float>>;
  std::vector<std::pair<List*, float>> lists;
  lists.reserve(query_keys.ids.size());
  for (size_t q = 0; q < query_keys.ids.size(); ++q) {
    auto it = postings_.find(query_keys.ids[q]);
    if (it == postings_.end() || it->second.size() > max_postings) continue;
    lists.emplace_back(&it->second, query_keys.values[q]);
  }
  std::sort(lists.begin(), lists.end(),
            [](const auto& a, const auto& b) { return a.first->size() < b.first->size(); });
  for (const auto& [list, qv] : lists) {
    if (list->size() > kLongPostingList && touched.size() >= max_candidates) {
      // Enough candidates: a common word only adds to the scores of those it shares.
      for (const auto& [id, v] : *list) {
        if (acc[id] != 0.0f) acc[id] += qv * v;
      }
      continue;
    }
    for (const auto& [id, v] : *list) {
      if (acc[id] == 0.0f) touched.push_back(id);
      acc[id] += qv * v + 1e-12f;  // never exactly 0 once touched
    }
  }
  std::vector<std::pair<float, uint32_t>> cand;
  cand.reserve(touched.size());
  for (uint32_t id : touched) {
    if (live_[id]) cand.emplace_back(acc[id], id);
    acc[id] = 0.0f;
  }
  if (cand.size() > max_candidates) {
    std::nth_element(cand.begin(), cand.begin() + static_cast<long>(max_candidates), cand.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    cand.resize(max_candidates);
  }
  out.reserve(cand.size());
  for (const auto& [score, id] : cand) out.push_back({id, Dot(query, vectors_[id])});
  std::sort(out.begin(), out.end(), [](const Neighbour& a, const Neighbour& b) {
    return a.similarity > b.similarity || (a.similarity == b.similarity && a.id < b.id);
  });
  if (out.size() > k) out.resize(k);
  return out;
}

}  // namespace hotline::answer
