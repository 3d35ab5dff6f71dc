#include "answer/eval/eval.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "answer/eval/simhash.h"
#include "answer/understand/normalize.h"
#include "answer/understand/pii.h"
#include "answer/understand/understanding.h"

namespace hotline::answer {
namespace {

using Clock = std::chrono::steady_clock;

double Micros(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t idx = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(idx, v.size() - 1)];
}

// One method's answer to one question: the intent it answered with, or "" for no answer.
struct Answer {
  std::string intent;
  double us = 0;
};

struct Tiers {
  std::unique_ptr<IntentClassifier> classifier;
  std::unique_ptr<SemanticCache> semantic;
  std::unordered_map<std::string, std::string> exact;
  SimHashIndex simhash;
  std::vector<std::string> simhash_labels;
  int simhash_distance = -1;
};

Answer L1(const Tiers& t, const std::string& text, IntentPrediction* pred_out) {
  auto t0 = Clock::now();
  Understanding u = Understand(text, t.classifier.get());
  Answer a;
  if (u.intent && u.intent->accepted) a.intent = u.intent->intent;
  a.us = Micros(t0, Clock::now());
  if (pred_out != nullptr && u.intent) *pred_out = *u.intent;
  return a;
}

Answer L2(Tiers& t, const std::string& text) {
  auto t0 = Clock::now();
  std::string q = RedactPii(NormalizeText(text));
  Answer a;
  auto r = t.semantic->Lookup(q);
  if (r.ok() && r->hit) a.intent = r->hit->tag;
  a.us = Micros(t0, Clock::now());
  return a;
}

Answer L3(const Tiers& t, const std::string& text) {
  auto t0 = Clock::now();
  std::string q = RedactPii(NormalizeText(text));
  Answer a;
  auto it = t.exact.find(q);
  if (it != t.exact.end()) a.intent = it->second;
  a.us = Micros(t0, Clock::now());
  return a;
}

Answer SimHash(const Tiers& t, const std::string& text, int* distance_out) {
  auto t0 = Clock::now();
  uint64_t fp = SimHash64(NormalizeText(text));
  SimHashIndex::Match m = t.simhash.Nearest(fp, t.simhash_distance);
  Answer a;
  if (m.found) a.intent = t.simhash_labels[m.id];
  a.us = Micros(t0, Clock::now());
  if (distance_out != nullptr) *distance_out = m.distance;
  return a;
}

struct Tally {
  MethodReport r;
  std::vector<double> us;
  void Add(const Answer& a, const std::string& gold) {
    us.push_back(a.us);
    if (a.intent.empty()) return;
    ++r.answered;
    if (a.intent == gold) ++r.correct;
  }
  void AddNegative(const Answer& a) {
    us.push_back(a.us);
    if (!a.intent.empty()) ++r.negatives_answered;
  }
  MethodReport Finish(size_t tests, size_t negatives) {
    r.coverage = tests ? static_cast<double>(r.answered) / static_cast<double>(tests) : 0;
    r.precision = r.answered ? static_cast<double>(r.correct) / static_cast<double>(r.answered) : 1;
    r.false_hits_on_negatives =
        negatives ? static_cast<double>(r.negatives_answered) / static_cast<double>(negatives) : 0;
    r.lookup_p50_us = Percentile(us, 0.50);
    r.lookup_p99_us = Percentile(us, 0.99);
    return r;
  }
};

std::vector<CurvePoint> Rescale(std::vector<CurvePoint> c, size_t total) {
  // Curves come from outcomes over answerable questions only; express coverage over all tests.
  for (CurvePoint& p : c) {
    p.coverage = total ? static_cast<double>(p.accepted) / static_cast<double>(total) : 0;
  }
  return c;
}

// Trains every method on `train`: the intent classifier, the semantic cache and the exact-result
// map (both on redacted normalized questions, as the serving path stores them), and SimHash;
// records their calibration in `rep`.
Status BuildTiers(const std::vector<LabelledText>& train, const CacheEvalOptions& options,
                  Tiers& tiers, CacheEvalReport& rep) {
  auto t0 = Clock::now();
  std::vector<IntentExample> examples;
  examples.reserve(train.size());
  for (const LabelledText& t : train) examples.push_back({t.text, t.label});
  ASSIGN_OR_RETURN(tiers.classifier, IntentClassifier::Train(examples, options.intent));
  rep.intents = tiers.classifier->intents().size();

  std::vector<std::string> questions, labels;
  questions.reserve(train.size());
  for (const LabelledText& t : train) {
    questions.push_back(RedactPii(NormalizeText(t.text)));
    labels.push_back(t.label);
  }
  rep.semantic_calibration = CalibrateSemanticThreshold(
      questions, labels, tiers.classifier->shared_feature_space(), options.semantic);
  SemanticCacheConfig sc = options.semantic;
  sc.similarity_threshold = rep.semantic_calibration.threshold;
  sc.max_entries = std::max<int>(sc.max_entries, static_cast<int>(train.size()));
  tiers.semantic = std::make_unique<SemanticCache>(sc, tiers.classifier->shared_feature_space());
  for (size_t i = 0; i < questions.size(); ++i) {
    if (questions[i].empty()) continue;
    RETURN_IF_ERROR(tiers.semantic->Insert(questions[i], "answer for " + labels[i], labels[i]));
    tiers.exact.emplace(questions[i], labels[i]);
  }
  std::vector<uint64_t> prints;
  std::vector<std::string> normalized;
  for (const LabelledText& t : train) {
    normalized.push_back(NormalizeText(t.text));
    prints.push_back(SimHash64(normalized.back()));
    tiers.simhash.Add(prints.back());
    tiers.simhash_labels.push_back(t.label);
  }
  tiers.simhash_distance = CalibrateSimHashDistance(prints, normalized, labels,
                                                    options.simhash_target_false_hit_rate);
  rep.simhash_max_distance = tiers.simhash_distance;
  rep.training_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  rep.intent_calibration = tiers.classifier->calibration();
  rep.intent_calibration.outcomes.clear();
  return Status::Ok();
}

// The chained path, timed as a whole: L1, then L2 on a miss, then L3. `a1`..`a3`: each tier's
// own answer (empty when an earlier tier answered).
Answer Serve(Tiers& tiers, const std::string& text, IntentPrediction* pred, Answer* a1, Answer* a2,
             Answer* a3) {
  auto c0 = Clock::now();
  Answer out;
  *a1 = L1(tiers, text, pred);
  out.intent = a1->intent;
  if (out.intent.empty()) {
    *a2 = L2(tiers, text);
    out.intent = a2->intent;
  } else {
    *a2 = Answer{};
  }
  if (out.intent.empty()) {
    *a3 = L3(tiers, text);
    out.intent = a3->intent;
  } else {
    *a3 = Answer{};
  }
  out.us = Micros(c0, Clock::now());
  return out;
}

// Every method's answers to the test questions and the negatives, and per test question what
// the curves need.
struct Measured {
  Tally hot, l1, l2, l3, sh;
  std::vector<ScoredOutcome> l1_out, sh_out;
  std::vector<std::string> l2_answer;  // L2's answer on its own, per test question
};

Measured Measure(Tiers& tiers, const std::vector<LabelledText>& test,
                 const std::vector<std::string>& negatives) {
  Measured m;
  m.hot.r.name = "hotline";
  m.l1.r.name = "l1_intent";
  m.l2.r.name = "l2_semantic";
  m.l3.r.name = "l3_exact";
  m.sh.r.name = "simhash";
  m.l2_answer.resize(test.size());
  for (size_t i = 0; i < test.size(); ++i) {
    const LabelledText& t = test[i];
    IntentPrediction pred;
    Answer a1, a2, a3;
    m.hot.Add(Serve(tiers, t.text, &pred, &a1, &a2, &a3), t.label);
    m.l1.Add(a1, t.label);
    m.l1_out.push_back({pred.score, pred.intent == t.label});
    Answer b2 = L2(tiers, t.text);
    m.l2.Add(b2, t.label);
    m.l2_answer[i] = b2.intent;
    m.l3.Add(L3(tiers, t.text), t.label);
    m.sh.Add(SimHash(tiers, t.text, nullptr), t.label);
    // Nearest fingerprint's label decides correctness at any distance.
    SimHashIndex::Match nearest = tiers.simhash.Nearest(SimHash64(NormalizeText(t.text)), 64);
    m.sh_out.push_back({-static_cast<double>(nearest.distance),
                        nearest.distance <= 64 && tiers.simhash_labels[nearest.id] == t.label});
  }
  for (const std::string& n : negatives) {
    IntentPrediction pred;
    Answer a1, a2, a3;
    m.hot.AddNegative(Serve(tiers, n, &pred, &a1, &a2, &a3));
    m.l1.AddNegative(a1);
    m.l2.AddNegative(L2(tiers, n));
    m.l3.AddNegative(L3(tiers, n));
    m.sh.AddNegative(SimHash(tiers, n, nullptr));
  }
  return m;
}

// L2's curve: the best unblocked neighbour's similarity, whatever the threshold.
std::vector<ScoredOutcome> SemanticOutcomes(Tiers& tiers, const std::vector<LabelledText>& test) {
  std::vector<ScoredOutcome> out;
  const double saved = tiers.semantic->threshold();
  tiers.semantic->set_threshold(1e-6);
  for (const LabelledText& t : test) {
    SemanticCache::Match m = tiers.semantic->FindMatch(RedactPii(NormalizeText(t.text)));
    if (m.hit) out.push_back({m.similarity, tiers.semantic->TagOf(m.id) == t.label});
  }
  tiers.semantic->set_threshold(saved);
  return out;
}

// The chained path's curve: the L1 threshold swept over L1's curve points, L2 fixed at its
// calibration.
std::vector<CurvePoint> CombinedCurve(const std::vector<CurvePoint>& l1_curve, const Measured& m,
                                      const std::vector<LabelledText>& test) {
  std::vector<CurvePoint> curve;
  const size_t tn = test.size();
  for (const CurvePoint& p : l1_curve) {
    CurvePoint c;
    c.threshold = p.threshold;
    size_t answered = 0, correct = 0;
    for (size_t i = 0; i < tn; ++i) {
      if (m.l1_out[i].score >= p.threshold) {
        ++answered;
        correct += m.l1_out[i].correct ? 1 : 0;
      } else if (!m.l2_answer[i].empty()) {
        ++answered;
        correct += m.l2_answer[i] == test[i].label ? 1 : 0;
      }
    }
    c.accepted = answered;
    c.coverage = static_cast<double>(answered) / static_cast<double>(tn);
    c.precision = answered ? static_cast<double>(correct) / static_cast<double>(answered) : 1;
    curve.push_back(c);
  }
  return curve;
}

}  // namespace

Result<CacheEvalReport> RunCacheEval(const std::vector<LabelledText>& train,
                                     const std::vector<LabelledText>& test,
                                     const std::vector<std::string>& negatives,
                                     const CacheEvalOptions& options) {
  RETURN_IF_ERROR(options.intent.Validate().WithContext("intent"));
  RETURN_IF_ERROR(options.semantic.Validate().WithContext("semantic"));
  if (test.empty()) return InvalidArgumentError("the test set is empty");
  CacheEvalReport rep;
  rep.train_examples = train.size();
  rep.test_examples = test.size();
  rep.negatives = negatives.size();
  rep.intent_target_precision = options.intent.target_precision;
  Tiers tiers;
  RETURN_IF_ERROR(BuildTiers(train, options, tiers, rep));

  Measured m = Measure(tiers, test, negatives);
  const size_t tn = test.size(), nn = negatives.size();
  const auto points = static_cast<size_t>(options.curve_points);
  MethodReport r_l1 = m.l1.Finish(tn, nn);
  r_l1.curve = Rescale(PrecisionCoverageCurve(m.l1_out, points), tn);
  MethodReport r_sh = m.sh.Finish(tn, nn);
  r_sh.curve = Rescale(PrecisionCoverageCurve(m.sh_out, points), tn);
  MethodReport r_l2 = m.l2.Finish(tn, nn);
  r_l2.curve = Rescale(PrecisionCoverageCurve(SemanticOutcomes(tiers, test), points), tn);
  MethodReport r_hot = m.hot.Finish(tn, nn);
  r_hot.curve = CombinedCurve(r_l1.curve, m, test);
  MethodReport r_l3 = m.l3.Finish(tn, nn);
  rep.methods = {r_hot, r_l1, r_l2, r_l3, r_sh};
  return rep;
}

std::string CacheEvalReportJson(const CacheEvalReport& rep) {
  using nlohmann::json;
  auto r4 = [](double v) { return std::round(v * 10000.0) / 10000.0; };
  json j;
  j["train_examples"] = rep.train_examples;
  j["test_examples"] = rep.test_examples;
  j["negatives"] = rep.negatives;
  j["intents"] = rep.intents;
  j["training_seconds"] = r4(rep.training_seconds);
  json cal;
  cal["intent"] = {{"target_precision", rep.intent_target_precision},
                   {"threshold", r4(rep.intent_calibration.threshold)},
                   {"cv_accuracy", r4(rep.intent_calibration.cv_accuracy)},
                   {"cv_coverage", r4(rep.intent_calibration.cv_coverage)},
                   {"cv_precision", r4(rep.intent_calibration.cv_precision)}};
  cal["semantic"] = {{"threshold", r4(rep.semantic_calibration.threshold)},
                     {"false_hit_rate", r4(rep.semantic_calibration.false_hit_rate)},
                     {"false_hit_bound", r4(rep.semantic_calibration.false_hit_bound)},
                     {"bounded", rep.semantic_calibration.bounded},
                     {"coverage", r4(rep.semantic_calibration.coverage)}};
  cal["simhash"] = {{"max_hamming_distance", rep.simhash_max_distance}};
  j["calibration"] = cal;
  json methods = json::object();
  for (const MethodReport& m : rep.methods) {
    json mj;
    mj["coverage"] = r4(m.coverage);
    mj["precision"] = r4(m.precision);
    mj["false_hits_on_negatives"] = r4(m.false_hits_on_negatives);
    mj["lookup_p50_us"] = std::round(m.lookup_p50_us * 10) / 10;
    mj["lookup_p99_us"] = std::round(m.lookup_p99_us * 10) / 10;
    mj["answered"] = m.answered;
    mj["correct"] = m.correct;
    mj["negatives_answered"] = m.negatives_answered;
    json curve = json::array();
    for (const CurvePoint& p : m.curve) {
      curve.push_back({{"threshold", r4(p.threshold)},
                       {"coverage", r4(p.coverage)},
                       {"precision", r4(p.precision)}});
    }
    mj["curve"] = curve;
    methods[m.name] = mj;
  }
  j["methods"] = methods;
  return j.dump(2) + "\n";
}

std::string CacheEvalReportTable(const CacheEvalReport& rep) {
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof(buf), "train %zu (%zu intents), test %zu, negatives %zu; training %.1f s\n",
                rep.train_examples, rep.intents, rep.test_examples, rep.negatives,
                rep.training_seconds);
  out += buf;
  std::snprintf(buf, sizeof(buf), "%-12s %9s %9s %9s %9s %9s\n", "method", "coverage", "precision",
                "neg_hits", "p50_us", "p99_us");
  out += buf;
  for (const MethodReport& m : rep.methods) {
    std::snprintf(buf, sizeof(buf), "%-12s %9.4f %9.4f %9.4f %9.1f %9.1f\n", m.name.c_str(),
                  m.coverage, m.precision, m.false_hits_on_negatives, m.lookup_p50_us,
                  m.lookup_p99_us);
    out += buf;
  }
  return out;
}

}  // namespace hotline::answer
