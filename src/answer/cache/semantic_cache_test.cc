#include "answer/cache/semantic_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "answer/cache/semantic_guard.h"
#include "answer/cache/semantic_store.h"
#include "answer/understand/normalize.h"
#include "answer/understand/pii.h"

namespace hotline::answer {
namespace {

std::string N(const char* s) { return RedactPii(NormalizeText(s)); }

std::shared_ptr<const FeatureSpace> Space() {
  static auto space = FeatureSpace::Build(
      {N("how do i activate my card"), N("how do i cancel my card"), N("transfer money"),
       N("what is my balance"), N("where is my order"), N("reset my password")},
      FeatureConfig{}, 1);
  return space;
}

SemanticCacheConfig Config(double threshold = 0.5) {
  SemanticCacheConfig c;
  c.similarity_threshold = threshold;
  return c;
}

// Pairs that look alike and mean different things: neither may answer for the other.
const std::vector<std::pair<const char*, const char*>>& FlipPairs() {
  static const std::vector<std::pair<const char*, const char*>> pairs = {
      {"how do i activate my card", "how do i cancel my card"},
      {"transfer 100 dollars from checking to savings",
       "transfer 100 dollars from savings to checking"},
      {"my card payment was declined", "my card payment was not declined"},
      {"i want to lock my card", "i want to unlock my card"},
      {"send 50 dollars to my sister", "send 500 dollars to my sister"},
      {"what was my bill in march", "what was my bill in april"},
      {"where is order a5531", "where is order b7702"},
      {"can i pay with visa", "can i pay with mastercard"},
      {"how do i increase my credit limit", "how do i decrease my credit limit"},
      {"i want to deposit cash", "i want to withdraw cash"},
      {"i received money from abroad", "i sent money abroad"},
      {"why was i charged a fee", "why was i not charged a fee"},
      {"open a savings account", "close a savings account"},
      {"exchange dollars to euros", "exchange euros to dollars"},
  };
  return pairs;
}

TEST(MeaningFlip, NamesTheDifference) {
  EXPECT_EQ(MeaningFlip(N("how do i activate my card"), N("how do i cancel my card")), "action");
  EXPECT_EQ(MeaningFlip(N("my card was charged"), N("my card was not charged")), "negation");
  EXPECT_EQ(MeaningFlip(N("move money from checking to savings"),
                        N("move money from savings to checking")),
            "roles");
  EXPECT_EQ(MeaningFlip(N("send 50 dollars"), N("send 60 dollars")), "entities");
  EXPECT_EQ(MeaningFlip(N("my checking balance"), N("my savings balance")), "entities");
  EXPECT_EQ(MeaningFlip(N("how do i activate my card"), N("how can i activate the card")), "");
  EXPECT_EQ(MeaningFlip(N("my card has not arrived"), N("i still don't have my card")), "");
}

TEST(SemanticCache, FlipPairsNeverHitEachOther) {
  for (const auto& [a, b] : FlipPairs()) {
    EXPECT_FALSE(MeaningFlip(N(a), N(b)).empty()) << a << " | " << b;
    for (int order = 0; order < 2; ++order) {
      // Even with a permissive threshold the guard must hold.
      SemanticCache cache(Config(0.05), Space());
      const char* stored = order == 0 ? a : b;
      const char* asked = order == 0 ? b : a;
      ASSERT_TRUE(cache.Insert(N(stored), "answer", "t").ok());
      auto r = cache.Lookup(N(asked));
      ASSERT_TRUE(r.ok());
      EXPECT_FALSE(r->hit.has_value()) << "'" << asked << "' was answered by '" << stored << "'";
      EXPECT_FALSE(r->blocked_by.empty()) << asked;
      // The stored question itself still hits.
      auto same = cache.Lookup(N(stored));
      ASSERT_TRUE(same.ok());
      EXPECT_TRUE(same->hit.has_value()) << stored;
    }
  }
}

TEST(SemanticCache, ParaphraseHitsAndUnrelatedMisses) {
  SemanticCache cache(Config(0.5), Space());
  ASSERT_TRUE(cache.Insert(N("how do i reset my password"), "Use the reset link.", "pw").ok());
  ASSERT_TRUE(cache.Insert(N("what are your opening hours"), "Nine to five.", "hours").ok());
  auto r = cache.Lookup(N("How do I reset my password?"));
  ASSERT_TRUE(r.ok() && r->hit);
  EXPECT_EQ(r->hit->answer, "Use the reset link.");
  EXPECT_EQ(r->hit->tag, "pw");
  r = cache.Lookup(N("um how can i reset the password"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->hit.has_value());
  r = cache.Lookup(N("is there a fee for international transfers"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->hit.has_value());
  EXPECT_FALSE(cache.Insert("", "x").ok());
  EXPECT_FALSE(cache.Insert("q", "").ok());
}

TEST(SemanticCache, EvictsOldestAndHonoursTheStore) {
  auto store = std::make_shared<InMemoryAnswerStore>();
  SemanticCacheConfig c = Config(0.5);
  c.max_entries = 2;
  SemanticCache cache(c, Space(), store);
  ASSERT_TRUE(cache.Insert(N("where is my order"), "a1", "orders").ok());
  ASSERT_TRUE(cache.Insert(N("what is my balance"), "a2", "balance").ok());
  ASSERT_TRUE(cache.Insert(N("reset my password"), "a3", "pw").ok());
  EXPECT_EQ(cache.size(), 2u);
  auto r = cache.Lookup(N("where is my order"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->hit.has_value());  // evicted
  EXPECT_EQ(cache.InvalidateTag("balance"), 1u);
  r = cache.Lookup(N("what is my balance"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->hit.has_value());
  EXPECT_EQ(cache.size(), 1u);
}

// A store whose answers can vanish (expiry in Redis) or fail.
class FlakyStore : public SemanticAnswerStore {
 public:
  Status Put(const std::string& k, const std::string& v) override {
    if (fail) return UnavailableError("store down");
    return inner.Put(k, v);
  }
  Result<std::optional<std::string>> Get(const std::string& k) override {
    if (fail) return UnavailableError("store down");
    if (forget) return std::optional<std::string>();
    return inner.Get(k);
  }
  Status Erase(const std::string& k) override { return inner.Erase(k); }
  InMemoryAnswerStore inner;
  bool fail = false;
  bool forget = false;
};

TEST(SemanticCache, StoreFailuresAreErrorsAndMissingAnswersAreMisses) {
  auto store = std::make_shared<FlakyStore>();
  SemanticCache cache(Config(0.5), Space(), store);
  ASSERT_TRUE(cache.Insert(N("where is my order"), "on its way", "o").ok());
  store->fail = true;
  EXPECT_FALSE(cache.Lookup(N("where is my order")).ok());
  EXPECT_FALSE(cache.Insert(N("what is my balance"), "x", "b").ok());
  EXPECT_EQ(cache.size(), 1u);  // the failed insert is not indexed
  store->fail = false;
  store->forget = true;
  auto r = cache.Lookup(N("where is my order"));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->hit.has_value());
  EXPECT_EQ(cache.size(), 0u);  // dropped with its answer
}

TEST(SemanticCache, ConcurrentLookupsAndInserts) {
  SemanticCache cache(Config(0.5), Space());
  ASSERT_TRUE(cache.Insert(N("where is my order"), "on its way", "o").ok());
  std::atomic<int> hits{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        if (t == 0) {
          (void)cache.Insert(N(("question number " + std::to_string(i) + " about fees").c_str()),
                             "a", "x");
        } else {
          auto r = cache.Lookup(N("where is my order"));
          if (r.ok() && r->hit) ++hits;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(hits.load(), 600);
  EXPECT_EQ(cache.size(), 201u);
}

TEST(SemanticCache, CalibrationMeetsTheTargetOnItsData) {
  std::vector<std::string> q, l;
  const char* groups[][4] = {
      {"where is my order", "where is my parcel", "has my order shipped", "track my order"},
      {"what is my balance", "how much money do i have", "show my balance", "balance please"},
      {"reset my password", "i forgot my password", "change my password", "password reset"},
  };
  for (int g = 0; g < 3; ++g) {
    for (const char* s : groups[g]) {
      q.push_back(N(s));
      l.push_back(std::to_string(g));
    }
  }
  SemanticCacheConfig c;
  c.target_false_hit_rate = 0.0;
  SemanticCalibration cal = CalibrateSemanticThreshold(q, l, FeatureSpace::Build(q, {}, 1), c);
  EXPECT_EQ(cal.questions, q.size());
  EXPECT_LE(cal.false_hit_rate, 0.0);
  EXPECT_GT(cal.threshold, 0.0);
  EXPECT_LE(cal.threshold, 1.0);
}

// A deployment's first week: two examples per intent. Leave-one-out finds each question's twin
// at a fair similarity and no false hit, but twelve outcomes bound nothing at 1 %: the prior
// threshold stands instead of a point estimate's low cut.
TEST(SemanticCache, ThinEvidenceNeverLowersThePriorThreshold) {
  std::vector<std::string> q, l;
  const char* groups[][2] = {
      {"where is my order", "where is my order now"},
      {"what is my balance", "what is my balance today"},
      {"reset my password", "reset my password please"},
      {"close my account", "close my account now"},
      {"talk to an agent", "talk to an agent please"},
      {"report a lost card", "report a lost card today"},
  };
  for (int g = 0; g < 6; ++g) {
    for (const char* s : groups[g]) {
      q.push_back(N(s));
      l.push_back(std::to_string(g));
    }
  }
  SemanticCacheConfig c;  // similarity_threshold 0.75, 1 % at 95 %
  c.similarity_threshold = 0.95;
  SemanticCalibration cal = CalibrateSemanticThreshold(q, l, FeatureSpace::Build(q, {}, 1), c);
  EXPECT_FALSE(cal.bounded);
  EXPECT_DOUBLE_EQ(cal.threshold, 0.95);
  EXPECT_GT(cal.false_hit_bound, c.target_false_hit_rate);
  // The point estimate alone would have accepted every twin (no false hit among twelve).
  c.calibration_confidence = 0.5;  // z = 0: the bound is the point estimate
  c.target_false_hit_rate = 0.01;
  SemanticCalibration point = CalibrateSemanticThreshold(q, l, FeatureSpace::Build(q, {}, 1), c);
  EXPECT_TRUE(point.bounded);
  EXPECT_LT(point.threshold, 0.95);
  EXPECT_DOUBLE_EQ(point.false_hit_rate, 0.0);
}

TEST(SemanticCacheConfig, Validate) {
  SemanticCacheConfig c;
  EXPECT_TRUE(c.Validate().ok());
  c.similarity_threshold = 0;
  EXPECT_FALSE(c.Validate().ok());
  c = {};
  c.max_entries = 0;
  EXPECT_FALSE(c.Validate().ok());
  c = {};
  c.calibration_confidence = 1.0;
  EXPECT_FALSE(c.Validate().ok());
}

}  // namespace
}  // namespace hotline::answer

namespace hotline::answer {
namespace {

TEST(SemanticCache, AnswersLiveInTheSharedStore) {
  StoreConfig sc;  // default backend: in-process
  auto store = Store::Create(sc);
  ASSERT_TRUE(store.ok()) << store.status();
  auto backed = std::make_shared<StoreBackedAnswerStore>(store->get(), std::chrono::minutes(5));
  SemanticCache a(Config(0.5), Space(), backed);
  ASSERT_TRUE(a.Insert(N("where is my order"), "on its way", "o").ok());
  auto r = a.Lookup(N("where is my order"));
  ASSERT_TRUE(r.ok() && r->hit);
  EXPECT_EQ(r->hit->answer, "on its way");
  EXPECT_GE((*store)->Stats().sets, 1u);
}

}  // namespace
}  // namespace hotline::answer
