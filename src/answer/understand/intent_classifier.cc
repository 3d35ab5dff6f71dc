#include "answer/understand/intent_classifier.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <thread>

#include "answer/understand/normalize.h"

namespace hotline::answer {
namespace {

struct Trained {
  std::shared_ptr<const FeatureSpace> space;
  SoftmaxRegression model;
  SparseNeighbourIndex neighbours;
  std::vector<int> neighbour_labels;
};

bool UsesNeighbours(const IntentClassifierConfig& c) {
  return c.require_neighbour_agreement || c.neighbour_similarity_scale > 0;
}

// Score of one prediction (see IntentPrediction::score).
double Score(double margin, double similarity, int best, int neighbour_label,
             const IntentClassifierConfig& c) {
  double s = margin;
  if (c.neighbour_similarity_scale > 0) s = std::min(s, similarity / c.neighbour_similarity_scale);
  if (c.require_neighbour_agreement && neighbour_label != best) s -= 1.0;
  return s;
}

Trained TrainOne(const std::vector<std::string>& docs, const std::vector<int>& labels,
                 const std::vector<size_t>& rows, int num_classes,
                 const IntentClassifierConfig& config, uint64_t seed) {
  std::vector<std::string> train_docs;
  train_docs.reserve(rows.size());
  for (size_t r : rows) train_docs.push_back(docs[r]);
  Trained t;
  t.space = FeatureSpace::Build(train_docs, config.features, 1);
  std::vector<SparseVector> x;
  std::vector<int> y;
  x.reserve(rows.size());
  y.reserve(rows.size());
  for (size_t r : rows) {
    x.push_back(t.space->VectorizeIndexed(docs[r]));
    y.push_back(labels[r]);
  }
  SoftmaxTrainOptions o;
  o.epochs = config.epochs;
  o.learning_rate = config.learning_rate;
  o.l2 = config.l2;
  o.seed = seed;
  t.model = SoftmaxRegression::Train(x, y, t.space->size(), num_classes, o);
  if (UsesNeighbours(config)) {
    for (size_t r : rows) {
      t.neighbours.Add(t.space->Vectorize(docs[r]), t.space->WordKeys(docs[r]));
      t.neighbour_labels.push_back(labels[r]);
    }
  }
  return t;
}

// Best and runner-up of a probability vector.
void TopTwo(const std::vector<float>& p, int* best, int* second) {
  *best = 0;
  *second = p.size() > 1 ? 1 : 0;
  if (p.size() > 1 && p[1] > p[0]) std::swap(*best, *second);
  for (int c = 2; c < static_cast<int>(p.size()); ++c) {
    if (p[c] > p[*best]) {
      *second = *best;
      *best = c;
    } else if (p[c] > p[*second]) {
      *second = c;
    }
  }
}

// The examples' intents and how many examples each has. Errors: an empty label, fewer than two
// intents, an intent with a single example.
Result<std::map<std::string, int>> CountIntents(const std::vector<IntentExample>& examples) {
  std::map<std::string, int> counts;
  for (const IntentExample& e : examples) {
    if (e.intent.empty()) return InvalidArgumentError("an example has an empty intent label");
    ++counts[e.intent];
  }
  if (counts.size() < 2) {
    return InvalidArgumentError("intent training needs at least 2 intents, got " +
                                std::to_string(counts.size()));
  }
  for (const auto& [intent, n] : counts) {
    if (n < 2) {
      return InvalidArgumentError("intent '" + intent +
                                  "' has 1 example; give every intent at least 2");
    }
  }
  return counts;
}

// Stratified folds: each intent's examples shuffled, then dealt round-robin into `k` folds.
std::vector<int> StratifiedFolds(const std::vector<int>& labels, int num_classes, int k,
                                 uint64_t seed) {
  std::vector<int> fold(labels.size());
  std::mt19937_64 rng(seed);
  std::vector<std::vector<size_t>> by_class(static_cast<size_t>(num_classes));
  for (size_t i = 0; i < labels.size(); ++i) by_class[static_cast<size_t>(labels[i])].push_back(i);
  int next = 0;
  for (auto& rows : by_class) {
    std::shuffle(rows.begin(), rows.end(), rng);
    for (size_t r : rows) fold[r] = next++ % k;
  }
  return fold;
}

// Fold `job`'s model `t` scores the examples it was not trained on: each one's score and whether
// its best intent is right; `correct` counts the right ones.
std::vector<ScoredOutcome> ScoreHeldOut(const Trained& t, const std::vector<std::string>& docs,
                                        const std::vector<int>& labels,
                                        const std::vector<int>& fold, int job,
                                        const IntentClassifierConfig& config, size_t* correct) {
  std::vector<ScoredOutcome> outcomes;
  std::vector<float> p;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (fold[i] != job) continue;
    t.model.Probabilities(t.space->VectorizeIndexed(docs[i]), &p);
    int best = 0, second = 0;
    TopTwo(p, &best, &second);
    bool ok = best == labels[i];
    *correct += ok ? 1 : 0;
    int nl = -1;
    double sim = 0;
    if (UsesNeighbours(config)) {
      auto nn = t.neighbours.Search(t.space->Vectorize(docs[i]), t.space->WordKeys(docs[i]), 1);
      if (!nn.empty()) {
        nl = t.neighbour_labels[nn[0].id];
        sim = nn[0].similarity;
      }
    }
    double margin = p[static_cast<size_t>(best)] - p[static_cast<size_t>(second)];
    outcomes.push_back({Score(margin, sim, best, nl, config), ok});
  }
  return outcomes;
}

// The calibration from the held-out outcomes: the threshold that reaches the target precision,
// and the coverage and precision it gives on the folds.
void Calibrate(const IntentClassifierConfig& config, IntentCalibrationReport& rep) {
  rep.threshold = ThresholdForPrecision(rep.outcomes, config.target_precision,
                                        static_cast<size_t>(config.min_calibration_accepted));
  size_t accepted = 0, accepted_correct = 0;
  for (const ScoredOutcome& o : rep.outcomes) {
    if (o.score >= rep.threshold) {
      ++accepted;
      accepted_correct += o.correct ? 1 : 0;
    }
  }
  rep.cv_coverage = static_cast<double>(accepted) / static_cast<double>(rep.outcomes.size());
  rep.cv_precision =
      accepted == 0 ? 1.0 : static_cast<double>(accepted_correct) / static_cast<double>(accepted);
  rep.curve = PrecisionCoverageCurve(rep.outcomes, 20);
}

}  // namespace

Status IntentClassifierConfig::Validate() const {
  RETURN_IF_ERROR(features.Validate().WithContext("features"));
  if (epochs < 1 || epochs > 200) {
    return InvalidArgumentError("epochs must be in [1, 200], got " + std::to_string(epochs));
  }
  if (!(learning_rate > 0 && learning_rate <= 100)) {
    return InvalidArgumentError("learning_rate must be in (0, 100]");
  }
  if (!(l2 >= 0 && l2 < 0.1)) return InvalidArgumentError("l2 must be in [0, 0.1)");
  if (calibration_folds < 2 || calibration_folds > 20) {
    return InvalidArgumentError("calibration_folds must be in [2, 20], got " +
                                std::to_string(calibration_folds));
  }
  if (!(target_precision > 0.5 && target_precision <= 1.0)) {
    return InvalidArgumentError("target_precision must be in (0.5, 1], e.g. 0.99");
  }
  if (min_calibration_accepted < 1) return InvalidArgumentError("min_calibration_accepted must be >= 1");
  if (threads < 1 || threads > 256) return InvalidArgumentError("threads must be in [1, 256]");
  return Status::Ok();
}

Result<std::unique_ptr<IntentClassifier>> IntentClassifier::Train(
    const std::vector<IntentExample>& examples, const IntentClassifierConfig& config) {
  RETURN_IF_ERROR(config.Validate());
  using IntentCounts = std::map<std::string, int>;
  ASSIGN_OR_RETURN(const IntentCounts counts, CountIntents(examples));
  auto clf = std::unique_ptr<IntentClassifier>(new IntentClassifier());
  std::map<std::string, int> ids;
  for (const auto& [intent, n] : counts) {
    ids.emplace(intent, static_cast<int>(clf->intents_.size()));
    clf->intents_.push_back(intent);
  }
  const int num_classes = static_cast<int>(clf->intents_.size());
  std::vector<std::string> docs;
  std::vector<int> labels;
  docs.reserve(examples.size());
  for (const IntentExample& e : examples) {
    docs.push_back(NormalizeText(e.text));
    labels.push_back(ids[e.intent]);
  }
  const int k = config.calibration_folds;
  const std::vector<int> fold =
      StratifiedFolds(labels, num_classes, k, static_cast<uint64_t>(config.seed));

  // Jobs 0..k-1: fold models scoring their held-out fold; job k: the final model on everything.
  std::vector<std::vector<ScoredOutcome>> fold_outcomes(static_cast<size_t>(k));
  std::vector<size_t> fold_correct(static_cast<size_t>(k), 0);
  Trained final_model;
  std::atomic<int> next_job{0};
  auto worker = [&] {
    for (int job = next_job++; job <= k; job = next_job++) {
      std::vector<size_t> rows;
      for (size_t i = 0; i < docs.size(); ++i) {
        if (job == k || fold[i] != job) rows.push_back(i);
      }
      uint64_t seed = static_cast<uint64_t>(config.seed) * 1000003u + static_cast<uint64_t>(job);
      Trained t = TrainOne(docs, labels, rows, num_classes, config, seed);
      if (job == k) {
        final_model = std::move(t);
        continue;
      }
      fold_outcomes[static_cast<size_t>(job)] =
          ScoreHeldOut(t, docs, labels, fold, job, config, &fold_correct[static_cast<size_t>(job)]);
    }
  };
  const int nthreads = std::min(config.threads, k + 1);
  std::vector<std::thread> pool;
  for (int t = 1; t < nthreads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();

  IntentCalibrationReport& rep = clf->report_;
  size_t correct = 0;
  for (int f = 0; f < k; ++f) {
    correct += fold_correct[static_cast<size_t>(f)];
    rep.outcomes.insert(rep.outcomes.end(), fold_outcomes[static_cast<size_t>(f)].begin(),
                        fold_outcomes[static_cast<size_t>(f)].end());
  }
  rep.examples = docs.size();
  rep.cv_accuracy = static_cast<double>(correct) / static_cast<double>(docs.size());
  Calibrate(config, rep);
  clf->calibrator_.Fit(rep.outcomes);
  clf->space_ = std::move(final_model.space);
  clf->model_ = std::move(final_model.model);
  clf->neighbours_ = std::move(final_model.neighbours);
  clf->neighbour_labels_ = std::move(final_model.neighbour_labels);
  clf->config_ = config;
  return clf;
}

IntentPrediction IntentClassifier::Predict(std::string_view normalized) const {
  IntentPrediction out;
  if (!space_ || intents_.empty()) return out;
  std::vector<float> p;
  model_.Probabilities(space_->VectorizeIndexed(normalized), &p);
  int best = 0, second = 0;
  TopTwo(p, &best, &second);
  out.intent_id = best;
  out.intent = intents_[static_cast<size_t>(best)];
  out.runner_up = intents_[static_cast<size_t>(second)];
  out.probability = p[static_cast<size_t>(best)];
  out.margin = p[static_cast<size_t>(best)] - p[static_cast<size_t>(second)];
  out.top_two = p[static_cast<size_t>(best)] + p[static_cast<size_t>(second)];
  int nl = -1;
  if (UsesNeighbours(config_)) {
    auto nn = neighbours_.Search(space_->Vectorize(normalized), space_->WordKeys(normalized), 1);
    if (!nn.empty()) {
      nl = neighbour_labels_[nn[0].id];
      out.neighbour_intent = intents_[static_cast<size_t>(nl)];
      out.neighbour_similarity = nn[0].similarity;
    }
  }
  out.score = Score(out.margin, out.neighbour_similarity, best, nl, config_);
  out.confidence = calibrator_.Map(out.score);
  // An empty question carries no evidence and is never accepted.
  out.accepted = !normalized.empty() && out.score >= report_.threshold;
  return out;
}

}  // namespace hotline::answer
