// L2 semantic cache lookup latency with 100,000 entries in-process, beside a brute-force cosine
// scan (the baseline the inverted index replaces) and the SimHash linear scan.
//
// Entries are real questions (Banking77 + CLINC150 training splits), each combined with the start
// of another question to reach the entry count; queries are the Banking77 test questions.
//   bench_answer_cache [entries=100000] [queries=3080]
// Prints one line per method: p50/p90/p99/max microseconds and hits; the semantic cache also
// as thread CPU time per lookup (independent of machine load).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <ctime>
#include <vector>

#include "answer/cache/semantic_cache.h"
#include "answer/eval/eval_data.h"
#include "answer/eval/simhash.h"
#include "answer/understand/normalize.h"
#include "answer/understand/pii.h"
#include "common/build_paths.h"

using namespace hotline::answer;
using Clock = std::chrono::steady_clock;

namespace {

double ThreadCpuUs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

void Report(const char* name, std::vector<double> us, size_t hits) {
  std::sort(us.begin(), us.end());
  auto at = [&](double q) { return us[static_cast<size_t>(q * (us.size() - 1))]; };
  std::printf("%-26s n=%-6zu p50=%8.1f us  p90=%8.1f us  p99=%8.1f us  max=%8.1f us  hits=%zu\n",
              name, us.size(), at(0.5), at(0.9), at(0.99), us.back(), hits);
}

}  // namespace

int main(int argc, char** argv) {
  size_t entries = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 100000;
  size_t max_queries = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 3080;
  std::string dir = std::string(HOTLINE_SHARED_DATA_DIR) + "/intent/";
  auto b = LoadLabelledTexts(dir + "banking77/train.csv", "");
  auto c = LoadLabelledTexts(dir + "clinc150/data_full.json", "train");
  auto q = LoadLabelledTexts(dir + "banking77/test.csv", "");
  if (!b.ok() || !c.ok() || !q.ok()) {
    std::fprintf(stderr, "cannot load the shared data sets under %s\n", dir.c_str());
    return 1;
  }
  std::vector<std::string> base;
  for (const auto& t : *b) base.push_back(RedactPii(NormalizeText(t.text)));
  for (const auto& t : *c) base.push_back(RedactPii(NormalizeText(t.text)));
  std::vector<std::string> questions;
  questions.reserve(entries);
  for (size_t i = 0; i < entries; ++i) {
    std::string s = base[i % base.size()];
    if (i >= base.size()) {
      auto words = SplitWords(base[(i * 7919) % base.size()]);
      for (size_t w = 0; w < std::min<size_t>(3, words.size()); ++w) s += " " + std::string(words[w]);
    }
    questions.push_back(std::move(s));
  }
  auto space = FeatureSpace::Build(base, FeatureConfig{}, 1);
  SemanticCacheConfig cfg;
  cfg.max_entries = static_cast<int>(entries);
  cfg.similarity_threshold = 0.8;
  SemanticCache cache(cfg, space);
  SimHashIndex simhash;
  auto t0 = Clock::now();
  for (const std::string& s : questions) {
    if (!cache.Insert(s, "answer", "t").ok()) return 1;
    simhash.Add(SimHash64(s));
  }
  double build_s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("entries=%zu (cache size %zu), build %.1f s (%.1f us per insert)\n", entries,
              cache.size(), build_s, 1e6 * build_s / static_cast<double>(entries));

  std::vector<std::string> queries;
  for (const auto& t : *q) {
    if (queries.size() >= max_queries) break;
    queries.push_back(RedactPii(NormalizeText(t.text)));
  }
  std::vector<double> us, cpu_us;
  size_t hits = 0;
  for (int pass = 0; pass < 2; ++pass) {  // the first pass warms caches and the scratch arrays
    us.clear();
    cpu_us.clear();
    hits = 0;
    for (const std::string& s : queries) {
      const double c0 = ThreadCpuUs();
      auto a = Clock::now();
      auto r = cache.Lookup(s);
      us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
      cpu_us.push_back(ThreadCpuUs() - c0);
      hits += r.ok() && r->hit ? 1 : 0;
    }
  }
  Report("semantic_cache.Lookup", us, hits);
  // CPU time of this thread per lookup: the work itself, without the time the thread waited for
  // a core (on a loaded machine the wall-clock tail is scheduling, not the index).
  Report("semantic_cache.Lookup cpu", cpu_us, hits);

  us.clear();
  hits = 0;
  for (const std::string& s : queries) {
    auto a = Clock::now();
    auto m = simhash.Nearest(SimHash64(s), 3);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
    hits += m.found ? 1 : 0;
  }
  Report("simhash linear scan (d<=3)", us, hits);

  // Baseline: cosine against every entry (what the inverted index avoids). A few queries only.
  std::vector<SparseVector> vecs;
  vecs.reserve(questions.size());
  for (const std::string& s : questions) vecs.push_back(space->Vectorize(s));
  us.clear();
  hits = 0;
  for (size_t i = 0; i < std::min<size_t>(100, queries.size()); ++i) {
    auto a = Clock::now();
    SparseVector v = space->Vectorize(queries[i]);
    float best = 0;
    for (const SparseVector& e : vecs) best = std::max(best, Dot(v, e));
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
    hits += best >= cfg.similarity_threshold ? 1 : 0;
  }
  Report("brute-force cosine scan", us, hits);
  return 0;
}
