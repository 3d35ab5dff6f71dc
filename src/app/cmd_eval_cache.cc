// `hotline eval cache`: seeds the answer cache tiers from a training split and reports coverage,
// precision, false hits on out-of-scope questions and lookup latency on a test split, beside the
// SimHash baseline (answer/eval/eval.h).
#include <fstream>
#include <iostream>

#include "answer/eval/eval.h"
#include "app/cli.h"

namespace hotline::cli {
namespace {

constexpr const char* kUsage =
    "usage: hotline eval cache --train FILE --test FILE [--negatives FILE]\n"
    "                          [--train-key K] [--test-key K] [--negatives-key K]\n"
    "                          [--target-precision P] [--false-hit-rate R] [--threads N]\n"
    "                          [--seed S] [--json] [-o FILE]\n"
    "\n"
    "  --train, --test   Banking77-style CSV (header with text,category) or CLINC150-style\n"
    "                    JSON (then --train-key/--test-key name the arrays, e.g. train, test)\n"
    "  --negatives       out-of-scope questions: one per line, or JSON with --negatives-key\n"
    "  --target-precision  intent tier precision calibrated on training folds (default 0.994)\n"
    "  --false-hit-rate  semantic tier and SimHash target false-hit rate (default 0.01)\n"
    "  --json            print the full report (with precision-coverage curves) as JSON\n"
    "  -o FILE           also write the JSON report to FILE\n";

int RunEvalCache(std::span<const std::string> argv) {
  auto parsed = Args::Parse(argv, {"--train", "--test", "--negatives", "--train-key", "--test-key",
                                   "--negatives-key", "--target-precision", "--false-hit-rate",
                                   "--threads", "--seed", "-o"});
  if (!parsed.ok()) return UsageError(parsed.status().message(), kUsage);
  Args& args = *parsed;
  auto train_path = args.Get("--train");
  auto test_path = args.Get("--test");
  auto neg_path = args.Get("--negatives");
  std::string train_key = args.GetOr("--train-key", "");
  std::string test_key = args.GetOr("--test-key", "");
  std::string neg_key = args.GetOr("--negatives-key", "");
  bool json = args.Has("--json");
  auto out_path = args.Get("-o");
  answer::CacheEvalOptions opt;
  auto tp = args.GetDouble("--target-precision", opt.intent.target_precision, 0.5, 1.0);
  auto fh = args.GetDouble("--false-hit-rate", opt.semantic.target_false_hit_rate, 0.0, 0.5);
  auto threads = args.GetInt("--threads", opt.intent.threads, 1, 256);
  auto seed = args.GetInt("--seed", opt.intent.seed, 0, 1 << 30);
  for (const Status& s : {tp.status(), fh.status(), threads.status(), seed.status()}) {
    if (!s.ok()) return UsageError(s.message(), kUsage);
  }
  if (Status s = args.Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (!args.positional().empty()) {
    return UsageError("unexpected argument '" + args.positional()[0] + "'", kUsage);
  }
  if (!train_path || !test_path) return UsageError("--train and --test are required", kUsage);
  opt.intent.target_precision = *tp;
  opt.semantic.target_false_hit_rate = *fh;
  opt.simhash_target_false_hit_rate = *fh;
  opt.intent.threads = static_cast<int>(*threads);
  opt.intent.seed = static_cast<int>(*seed);

  auto train = answer::LoadLabelledTexts(*train_path, train_key);
  if (!train.ok()) return Fail(train.status().WithContext("--train"));
  auto test = answer::LoadLabelledTexts(*test_path, test_key);
  if (!test.ok()) return Fail(test.status().WithContext("--test"));
  std::vector<std::string> negatives;
  if (neg_path) {
    auto neg = answer::LoadNegativeTexts(*neg_path, neg_key);
    if (!neg.ok()) return Fail(neg.status().WithContext("--negatives"));
    negatives = std::move(*neg);
  } else if (!neg_key.empty()) {
    return UsageError("--negatives-key needs --negatives", kUsage);
  }
  auto report = answer::RunCacheEval(*train, *test, negatives, opt);
  if (!report.ok()) return Fail(report.status());
  std::string js = answer::CacheEvalReportJson(*report);
  if (out_path) {
    std::ofstream out(*out_path);
    if (!(out << js)) return Fail("cannot write " + *out_path);
  }
  std::cout << (json ? js : answer::CacheEvalReportTable(*report));
  return 0;
}

const CommandRegistrar kEvalCache({"eval cache",
                                   "measure the answer cache tiers and the SimHash baseline on "
                                   "labelled questions",
                                   kUsage, RunEvalCache});

}  // namespace
}  // namespace hotline::cli
