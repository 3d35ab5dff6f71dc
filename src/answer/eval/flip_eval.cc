#include "answer/eval/flip_eval.h"

#include <fstream>
#include <sstream>

#include "answer/understand/normalize.h"
#include "answer/understand/pii.h"

namespace hotline::answer {
namespace {

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t tab = line.find('\t', start);
    out.push_back(line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return out;
    start = tab + 1;
  }
}

}  // namespace

Result<std::vector<FlipPair>> LoadFlipSet(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError("cannot open flip set '" + path + "'");
  std::vector<FlipPair> set;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(n) + ": ";
    std::vector<std::string> f = SplitTabs(line);
    if (n == 1) {
      if (f != std::vector<std::string>{"split", "kind", "stored", "probe", "expect"}) {
        return InvalidArgumentError(where + "expected the header 'split<TAB>kind<TAB>stored<TAB>"
                                            "probe<TAB>expect'");
      }
      continue;
    }
    if (f.size() != 5) {
      return InvalidArgumentError(where + "expected 5 tab-separated fields, got " +
                                  std::to_string(f.size()));
    }
    FlipPair p{f[0], f[1], f[2], f[3], f[4] == "hit", n};
    if (p.split != "dev" && p.split != "test") {
      return InvalidArgumentError(where + "split must be dev or test, got '" + p.split + "'");
    }
    if (f[4] != "hit" && f[4] != "miss") {
      return InvalidArgumentError(where + "expect must be hit or miss, got '" + f[4] + "'");
    }
    if (p.expect_hit != (p.kind == "control")) {
      return InvalidArgumentError(where + "controls expect a hit and every other kind a miss");
    }
    if (p.stored.empty() || p.probe.empty() || p.stored.size() > 1000 || p.probe.size() > 1000) {
      return InvalidArgumentError(where + "stored and probe must be 1 to 1000 bytes");
    }
    set.push_back(std::move(p));
  }
  if (set.empty()) return InvalidArgumentError(path + ": no pairs");
  return set;
}

FlipRun RunFlipSet(const std::vector<FlipPair>& set, std::shared_ptr<const FeatureSpace> space,
                   double threshold, bool meaning_guard) {
  FlipRun run;
  run.threshold = threshold;
  run.meaning_guard = meaning_guard;
  SemanticCacheConfig config;
  config.similarity_threshold = threshold;
  config.meaning_guard = meaning_guard;
  for (const FlipPair& p : set) {
    SemanticCache cache(config, space);
    const bool stored = cache.Insert(RedactPii(NormalizeText(p.stored)), "answer", "pair").ok();
    const bool hit = stored && cache.FindMatch(RedactPii(NormalizeText(p.probe))).hit;
    FlipCount& k = run.by_kind[p.kind];
    ++k.pairs;
    k.hits += hit ? 1 : 0;
    if (p.expect_hit) continue;
    FlipCount& s = run.by_split[p.split];
    ++s.pairs;
    s.hits += hit ? 1 : 0;
    if (hit) run.wrong_hits.push_back(&p);
  }
  return run;
}

}  // namespace hotline::answer
