// The L2 semantic cache against questions that read alike and mean the opposite: a flip set
// (assets/eval/semantic_flips.tsv, written by scripts/make_flipset.py) of stored questions and
// probes, each an opposite action, a negation, swapped roles (expect a miss) or a rewording of
// the same question (a control: expect a hit). Every pair is tried on a fresh cache holding only
// the stored question, so a probe can only hit its own pair.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "answer/cache/semantic_cache.h"
#include "answer/understand/features.h"
#include "common/status.h"

namespace hotline::answer {

struct FlipPair {
  std::string split;   // "dev" (may guide changes to the guard) or "test" (reported only)
  std::string kind;    // action | negation | roles | control
  std::string stored;  // as written; normalized before use
  std::string probe;
  bool expect_hit = false;  // controls
  int line = 0;
};

// Reads the TSV (header `split kind stored probe expect`). Errors name the line.
Result<std::vector<FlipPair>> LoadFlipSet(const std::string& path);

struct FlipCount {
  size_t pairs = 0;
  size_t hits = 0;
};

struct FlipRun {
  double threshold = 0;
  bool meaning_guard = true;
  std::map<std::string, FlipCount> by_kind;   // "action", ..., "control"
  std::map<std::string, FlipCount> by_split;  // flips only (controls are by_kind["control"])
  std::vector<const FlipPair*> wrong_hits;    // flips served the stored answer
};

// Tries every pair of `set` at `threshold` with the features of `space`.
FlipRun RunFlipSet(const std::vector<FlipPair>& set, std::shared_ptr<const FeatureSpace> space,
                   double threshold, bool meaning_guard);

}  // namespace hotline::answer
