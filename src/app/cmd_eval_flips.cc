// `hotline eval flips`: the L2 semantic cache's meaning guard and threshold calibration against a
// flip set (answer/eval/flip_eval.h): how many questions that mean the opposite of a stored one
// would be served its answer, and how many rewordings still are, at the default threshold and at
// thresholds calibrated on K examples per intent (a new deployment's first week, up to all).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "answer/eval/eval_data.h"
#include "answer/eval/flip_eval.h"
#include "answer/understand/normalize.h"
#include "answer/understand/pii.h"
#include "app/cli.h"
#include "common/build_paths.h"

namespace hotline::cli {
namespace {

constexpr const char* kUsage =
    "usage: hotline eval flips --train FILE [--set FILE] [--train-key K]\n"
    "                          [--examples-per-intent 5,20,all] [--seed S] [--json]\n"
    "\n"
    "  --set     flip set TSV (default: the shipped assets/eval/semantic_flips.tsv)\n"
    "  --train   labelled questions the deployment would have (Banking77-style CSV, or\n"
    "            CLINC150-style JSON with --train-key): the feature weights and the calibration\n"
    "  --examples-per-intent  sizes of the deployment's examples to calibrate on (default 5,all)\n"
    "  --json    the report as JSON\n"
    "\n"
    "Methods: default (the configured similarity_threshold), bounded (calibrated: the lowest\n"
    "threshold whose false-hit rate has a 95 % upper bound within the target; 'thin' when no\n"
    "threshold has that evidence and the default stands), point (the observed rate alone, for\n"
    "comparison).\n";

struct Scenario {
  std::string examples;  // "5", "all"
  std::string method;    // default | bounded | point
  size_t questions = 0;
  answer::SemanticCalibration cal;
  answer::FlipRun guarded, unguarded;
};

// `k` questions per label (all when k <= 0), drawn with `seed`, in the order of the file.
std::vector<answer::LabelledText> PerLabel(const std::vector<answer::LabelledText>& all, int k,
                                           int seed) {
  if (k <= 0) return all;
  std::vector<size_t> order(all.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937 rng(static_cast<uint32_t>(seed));
  std::shuffle(order.begin(), order.end(), rng);
  std::map<std::string, int> taken;
  std::vector<size_t> keep;
  for (size_t i : order) {
    if (taken[all[i].label]++ < k) keep.push_back(i);
  }
  std::sort(keep.begin(), keep.end());
  std::vector<answer::LabelledText> out;
  for (size_t i : keep) out.push_back(all[i]);
  return out;
}

nlohmann::json RunJson(const answer::FlipRun& r) {
  nlohmann::json j;
  for (const auto& [kind, c] : r.by_kind) j["by_kind"][kind] = {{"pairs", c.pairs}, {"hits", c.hits}};
  for (const auto& [split, c] : r.by_split) {
    j["flips_by_split"][split] = {{"pairs", c.pairs}, {"hits", c.hits}};
  }
  j["wrong_hits"] = nlohmann::json::array();
  for (const answer::FlipPair* p : r.wrong_hits) {
    j["wrong_hits"].push_back(
        {{"line", p->line}, {"kind", p->kind}, {"stored", p->stored}, {"probe", p->probe}});
  }
  return j;
}

std::string Share(const answer::FlipCount& c) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%zu/%zu", c.hits, c.pairs);
  return buf;
}

// "5,20,all" -> {5, 20, 0} (0 = every example).
Result<std::vector<int>> ParseSizes(const std::string& arg) {
  std::vector<int> sizes;
  std::stringstream ss(arg);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item == "all") {
      sizes.push_back(0);
      continue;
    }
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 2 || v > 100000) {
      return InvalidArgumentError("--examples-per-intent: '" + item +
                                  "' is not a count >= 2 or 'all'");
    }
    sizes.push_back(static_cast<int>(v));
  }
  if (sizes.empty()) return InvalidArgumentError("--examples-per-intent is empty");
  return sizes;
}

// Per example count: the default threshold, the bounded calibration and the point estimate,
// each run over the flip set with the meaning guard on and off.
std::vector<Scenario> RunScenarios(const std::vector<answer::FlipPair>& set,
                                   const std::vector<answer::LabelledText>& train,
                                   const std::vector<int>& sizes, int seed) {
  std::vector<Scenario> scenarios;
  const answer::SemanticCacheConfig defaults;
  for (int k : sizes) {
    const std::vector<answer::LabelledText> part = PerLabel(train, k, seed);
    std::vector<std::string> questions, labels;
    for (const auto& t : part) {
      questions.push_back(answer::RedactPii(answer::NormalizeText(t.text)));
      labels.push_back(t.label);
    }
    auto space = answer::FeatureSpace::Build(questions, answer::FeatureConfig{}, 1);
    for (const std::string method : {"default", "bounded", "point"}) {
      Scenario sc;
      sc.examples = k <= 0 ? "all" : std::to_string(k);
      sc.method = method;
      sc.questions = questions.size();
      answer::SemanticCacheConfig cfg = defaults;
      if (method == "point") cfg.calibration_confidence = 0.5;  // z = 0: the observed rate
      if (method == "default") {
        sc.cal.threshold = defaults.similarity_threshold;
      } else {
        sc.cal = answer::CalibrateSemanticThreshold(questions, labels, space, cfg);
      }
      sc.guarded = answer::RunFlipSet(set, space, sc.cal.threshold, true);
      sc.unguarded = answer::RunFlipSet(set, space, sc.cal.threshold, false);
      std::fprintf(stderr, "examples %s, %s: threshold %.3f\n", sc.examples.c_str(),
                   method.c_str(), sc.cal.threshold);
      scenarios.push_back(std::move(sc));
    }
  }
  return scenarios;
}

void PrintJson(const std::string& set_path, size_t pairs, const std::string& train_path,
               const std::vector<Scenario>& scenarios) {
  nlohmann::json j;
  j["set"] = set_path;
  j["pairs"] = pairs;
  j["train"] = train_path;
  for (const Scenario& sc : scenarios) {
    j["scenarios"].push_back({{"examples_per_intent", sc.examples},
                              {"method", sc.method},
                              {"calibration_questions", sc.questions},
                              {"threshold", sc.cal.threshold},
                              {"bounded", sc.cal.bounded},
                              {"calibration_false_hit_rate", sc.cal.false_hit_rate},
                              {"calibration_false_hit_bound", sc.cal.false_hit_bound},
                              {"guarded", RunJson(sc.guarded)},
                              {"unguarded", RunJson(sc.unguarded)}});
  }
  std::cout << j.dump(2) << "\n";
}

void PrintTable(const std::string& set_path, size_t pairs, const std::string& train_path,
                const std::vector<Scenario>& scenarios) {
  std::printf("flip set %s: %zu pairs; features and calibration from %s\n", set_path.c_str(),
              pairs, train_path.c_str());
  std::printf("%-9s %-8s %9s %-8s | %-37s | %-9s | %s\n", "examples", "method", "threshold",
              "evidence", "flips hit, guard on: dev / test", "controls", "flips hit, guard off");
  for (const Scenario& sc : scenarios) {
    auto split = [&](const answer::FlipRun& r, const char* s) {
      auto it = r.by_split.find(s);
      return it == r.by_split.end() ? std::string("-") : Share(it->second);
    };
    auto kind = [&](const answer::FlipRun& r, const char* s) {
      auto it = r.by_kind.find(s);
      return it == r.by_kind.end() ? answer::FlipCount{} : it->second;
    };
    const answer::FlipCount controls = kind(sc.guarded, "control");
    answer::FlipCount off;
    for (const auto& [s, c] : sc.unguarded.by_split) {
      off.pairs += c.pairs;
      off.hits += c.hits;
    }
    char ctl[64];
    std::snprintf(ctl, sizeof ctl, "%.0f %%",
                  controls.pairs ? 100.0 * controls.hits / controls.pairs : 0.0);
    const char* evidence = sc.method == "default" ? "-" : sc.cal.bounded ? "bounded" : "thin";
    std::printf("%-9s %-8s %9.3f %-8s | %-17s / %-17s | %-9s | %s\n", sc.examples.c_str(),
                sc.method.c_str(), sc.cal.threshold, evidence, split(sc.guarded, "dev").c_str(),
                split(sc.guarded, "test").c_str(), ctl, Share(off).c_str());
  }
  for (const Scenario& sc : scenarios) {
    for (const answer::FlipPair* p : sc.guarded.wrong_hits) {
      std::printf("  hit (%s per intent, %s): line %d %s [%s] '%s' -> '%s'\n",
                  sc.examples.c_str(), sc.method.c_str(), p->line, p->split.c_str(),
                  p->kind.c_str(), p->stored.c_str(), p->probe.c_str());
    }
  }
}

int RunEvalFlips(std::span<const std::string> argv) {
  auto parsed = Args::Parse(argv, {"--set", "--train", "--train-key", "--examples-per-intent",
                                   "--seed"});
  if (!parsed.ok()) return UsageError(parsed.status().message(), kUsage);
  Args& args = *parsed;
  const std::string set_path =
      args.GetOr("--set", std::string(HOTLINE_ASSETS_DIR) + "/eval/semantic_flips.tsv");
  auto train_path = args.Get("--train");
  const std::string train_key = args.GetOr("--train-key", "");
  const std::string sizes_arg = args.GetOr("--examples-per-intent", "5,all");
  auto seed = args.GetInt("--seed", 1, 0, 1 << 30);
  const bool json = args.Has("--json");
  if (!seed.ok()) return UsageError(seed.status().message(), kUsage);
  if (Status s = args.Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (!args.positional().empty()) {
    return UsageError("unexpected argument '" + args.positional()[0] + "'", kUsage);
  }
  if (!train_path) return UsageError("--train is required", kUsage);
  auto sizes = ParseSizes(sizes_arg);
  if (!sizes.ok()) return UsageError(sizes.status().message(), kUsage);

  auto set = answer::LoadFlipSet(set_path);
  if (!set.ok()) return Fail(set.status().WithContext("--set"));
  auto train = answer::LoadLabelledTexts(*train_path, train_key);
  if (!train.ok()) return Fail(train.status().WithContext("--train"));
  const std::vector<Scenario> scenarios =
      RunScenarios(*set, *train, *sizes, static_cast<int>(*seed));
  if (json) {
    PrintJson(set_path, set->size(), *train_path, scenarios);
  } else {
    PrintTable(set_path, set->size(), *train_path, scenarios);
  }
  return 0;
}

const CommandRegistrar kEvalFlips({"eval flips",
                                   "measure the semantic cache's meaning guard and calibration "
                                   "on a flip set",
                                   kUsage, RunEvalFlips});

}  // namespace
}  // namespace hotline::cli
