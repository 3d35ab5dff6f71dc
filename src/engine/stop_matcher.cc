#include "engine/stop_matcher.h"

#include <algorithm>

namespace hotline::engine {

Result<StopMatcher> StopMatcher::Create(std::vector<std::string> stops) {
  if (stops.size() > kMaxStops) {
    return InvalidArgumentError("at most " + std::to_string(kMaxStops) + " stop strings, got " +
                                std::to_string(stops.size()));
  }
  for (const auto& s : stops) {
    if (s.empty()) return InvalidArgumentError("a stop string is empty; remove it");
    if (s.size() > kMaxStopBytes) {
      return InvalidArgumentError("stop string '" + s.substr(0, 32) + "...' is " +
                                  std::to_string(s.size()) + " bytes; the limit is " +
                                  std::to_string(kMaxStopBytes));
    }
  }
  return StopMatcher(std::move(stops));
}

StopMatcher::Output StopMatcher::Push(std::string_view chunk) {
  Output out;
  if (stopped_) return out;
  if (stops_.empty()) {
    out.text.assign(chunk);
    return out;
  }
  held_.append(chunk);

  // Earliest full match. held_ never contains a full match on entry, so a match must end in the
  // new chunk; searching all of held_ (< longest stop + chunk) keeps this simple.
  size_t best = std::string::npos;
  const std::string* best_stop = nullptr;
  for (const auto& s : stops_) {
    const size_t p = held_.find(s);
    if (p < best) {
      best = p;
      best_stop = &s;
    }
  }
  if (best_stop != nullptr) {
    stopped_ = true;
    matched_ = *best_stop;
    out.stopped = true;
    out.text.assign(held_, 0, best);
    held_.clear();
    return out;
  }

  // Hold back the longest suffix of held_ that is a proper prefix of some stop string.
  size_t keep = 0;
  for (const auto& s : stops_) {
    const size_t max_len = std::min(s.size() - 1, held_.size());
    for (size_t len = max_len; len > keep; --len) {
      if (held_.compare(held_.size() - len, len, s, 0, len) == 0) {
        keep = len;
        break;
      }
    }
  }
  out.text.assign(held_, 0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopMatcher::Flush() {
  std::string rest;
  if (!stopped_) rest.swap(held_);
  held_.clear();
  return rest;
}

}  // namespace hotline::engine
