#include "answer/understand/intent_classifier.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "answer/eval/eval_data.h"
#include "answer/understand/normalize.h"
#include "common/build_paths.h"

namespace hotline::answer {
namespace {

// A small real subset of Banking77: the first 8 intents of train.csv, 40 examples each.
struct Subset {
  std::vector<IntentExample> train;
  std::vector<LabelledText> test;
};

const Subset& Banking() {
  static const Subset* s = [] {
    auto* out = new Subset();
    std::string dir = std::string(HOTLINE_SHARED_DATA_DIR) + "/intent/banking77/";
    auto train = LoadLabelledTexts(dir + "train.csv", "");
    auto test = LoadLabelledTexts(dir + "test.csv", "");
    if (!train.ok() || !test.ok()) return out;
    std::map<std::string, int> count;
    for (const auto& t : *train) {
      if (count.size() >= 8 && !count.count(t.label)) continue;
      if (count[t.label]++ < 40) out->train.push_back({t.text, t.label});
    }
    for (const auto& t : *test) {
      if (count.count(t.label)) out->test.push_back(t);
    }
    return out;
  }();
  return *s;
}

IntentClassifierConfig SmallConfig() {
  IntentClassifierConfig c;
  c.calibration_folds = 4;
  c.min_calibration_accepted = 10;
  c.target_precision = 0.98;
  return c;
}

TEST(IntentClassifier, LearnsRealIntentsAndAcceptsPrecisely) {
  const Subset& s = Banking();
  ASSERT_EQ(s.train.size(), 320u);
  ASSERT_GT(s.test.size(), 200u);
  auto clf = IntentClassifier::Train(s.train, SmallConfig());
  ASSERT_TRUE(clf.ok()) << clf.status();
  EXPECT_EQ((*clf)->intents().size(), 8u);
  EXPECT_GT((*clf)->calibration().cv_accuracy, 0.75);
  size_t right = 0, accepted = 0, accepted_right = 0;
  for (const auto& t : s.test) {
    IntentPrediction p = (*clf)->Predict(NormalizeText(t.text));
    right += p.intent == t.label;
    if (p.accepted) {
      ++accepted;
      accepted_right += p.intent == t.label;
      EXPECT_GE(p.score, (*clf)->threshold());
    }
    EXPECT_GE(p.confidence, 0.0);
    EXPECT_LE(p.confidence, 1.0);
  }
  double accuracy = static_cast<double>(right) / s.test.size();
  double coverage = static_cast<double>(accepted) / s.test.size();
  double precision = static_cast<double>(accepted_right) / std::max<size_t>(accepted, 1);
  EXPECT_GT(accuracy, 0.8);
  EXPECT_GT(coverage, 0.3);
  EXPECT_GT(precision, 0.95);
  // Accepted answers are more often right than the model overall: the reject option works.
  EXPECT_GT(precision, accuracy);
}

TEST(IntentClassifier, RejectsOutOfScopeQuestions) {
  auto clf = IntentClassifier::Train(Banking().train, SmallConfig());
  ASSERT_TRUE(clf.ok()) << clf.status();
  int accepted = 0;
  for (const char* q : {"what is the weather in paris tomorrow", "play some jazz music",
                        "how many calories are in an apple", "tell me a joke about cats",
                        "book a table for two at eight", ""}) {
    accepted += (*clf)->Predict(NormalizeText(q)).accepted ? 1 : 0;
  }
  EXPECT_LE(accepted, 1);
  EXPECT_FALSE((*clf)->Predict("").accepted);
}

TEST(IntentClassifier, DeterministicForASeed) {
  IntentClassifierConfig c = SmallConfig();
  c.threads = 3;
  auto a = IntentClassifier::Train(Banking().train, c);
  c.threads = 1;
  auto b = IntentClassifier::Train(Banking().train, c);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ((*a)->threshold(), (*b)->threshold());
  for (size_t i = 0; i < Banking().test.size(); i += 17) {
    std::string q = NormalizeText(Banking().test[i].text);
    EXPECT_EQ((*a)->Predict(q).intent, (*b)->Predict(q).intent);
    EXPECT_DOUBLE_EQ((*a)->Predict(q).score, (*b)->Predict(q).score);
  }
}

TEST(IntentClassifier, BadTrainingDataIsAnError) {
  IntentClassifierConfig c = SmallConfig();
  EXPECT_FALSE(IntentClassifier::Train({}, c).ok());
  EXPECT_FALSE(IntentClassifier::Train({{"a", "x"}, {"b", "x"}}, c).ok());  // one intent
  auto one = IntentClassifier::Train({{"a", "x"}, {"b", "x"}, {"c", "y"}}, c);
  ASSERT_FALSE(one.ok());
  EXPECT_NE(one.status().message().find("'y'"), std::string::npos);
  c.calibration_folds = 1;
  EXPECT_FALSE(c.Validate().ok());
  c = SmallConfig();
  c.target_precision = 1.5;
  EXPECT_FALSE(c.Validate().ok());
}

}  // namespace
}  // namespace hotline::answer
