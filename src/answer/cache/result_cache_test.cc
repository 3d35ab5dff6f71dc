#include "answer/cache/result_cache.h"

#include <gtest/gtest.h>

#include "answer/cache/memory_store.h"

namespace hotline::answer {
namespace {

using std::chrono::milliseconds;

struct Fixture {
  FakeClock clock;
  std::unique_ptr<MemoryStore> store = MemoryStore::Create(MemoryStoreConfig{}, &clock).value();
  ResultCache cache{*store, ResultCacheConfig{}};
};

CachedAnswer Answer(std::string text, std::vector<std::string> deps = {}) {
  CachedAnswer a;
  a.text = std::move(text);
  a.source = "kb";
  a.depends_on = std::move(deps);
  return a;
}

TEST(ResultCache, ExactQuestionHitsWithTextAndAudio) {
  Fixture f;
  CachedAnswer a = Answer("You can track your order in the app under Orders.");
  a.audio = std::string("\x00\x01\xff\x7f", 4);
  a.audio_format = "s16le/16000";
  ASSERT_TRUE(f.cache.Insert("how do i track my order", a).ok());
  auto hit = f.cache.Lookup("how do i track my order");
  ASSERT_TRUE(hit.ok());
  ASSERT_TRUE(hit->has_value());
  EXPECT_EQ((*hit)->text, a.text);
  EXPECT_EQ((*hit)->audio, a.audio);
  EXPECT_EQ((*hit)->audio_format, "s16le/16000");
  EXPECT_EQ((*hit)->source, "kb");
  EXPECT_FALSE(f.cache.Lookup("how do i track my orders").value().has_value());
}

TEST(ResultCache, DefaultTtlIsFiveMinutes) {
  Fixture f;
  ASSERT_TRUE(f.cache.Insert("q", Answer("a")).ok());
  f.clock.Advance(milliseconds(5 * 60 * 1000 - 1));
  EXPECT_TRUE(f.cache.Lookup("q").value().has_value());
  f.clock.Advance(milliseconds(1));
  EXPECT_FALSE(f.cache.Lookup("q").value().has_value());
}

TEST(ResultCache, StampBumpInvalidatesOnlyDependentAnswers) {
  Fixture f;
  ASSERT_TRUE(f.cache.Insert("refund policy", Answer("30 days.", {"kb:article:7"})).ok());
  ASSERT_TRUE(f.cache.Insert("delivery time", Answer("3 to 5 days.", {"kb:article:9"})).ok());
  ASSERT_TRUE(f.cache.Invalidate("kb:article:7").ok());
  EXPECT_FALSE(f.cache.Lookup("refund policy").value().has_value());
  EXPECT_TRUE(f.cache.Lookup("delivery time").value().has_value());
}

TEST(ResultCache, UpdateDuringGenerationMakesTheAnswerAMiss) {
  Fixture f;
  const std::vector<std::string> deps{"kb:article:1"};
  auto snap = f.cache.Snapshot(deps);
  ASSERT_TRUE(snap.ok());
  ASSERT_TRUE(f.cache.Invalidate("kb:article:1").ok());  // the article changes meanwhile
  ASSERT_TRUE(f.cache.Insert("q", Answer("old text", deps), &*snap).ok());
  EXPECT_FALSE(f.cache.Lookup("q").value().has_value());
}

TEST(ResultCache, RefusesPersonalAndOversizedAnswers) {
  Fixture f;
  CachedAnswer a = Answer("Your bill last month was 42 dollars 17.");
  a.personal = true;
  EXPECT_EQ(f.cache.Insert("what was my bill", a).code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(f.cache.Lookup("what was my bill").value().has_value());
  EXPECT_EQ(f.store->Stats().entries, 0u);
  EXPECT_EQ(f.cache.Insert("q", Answer(std::string(5000, 'x'))).code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(f.cache.Insert(std::string(600, 'q'), Answer("a")).code(),
            StatusCode::kResourceExhausted);
}

TEST(ResultCache, MalformedEntriesAreMissesNotCrashes) {
  CachedAnswer a = Answer("text", {"s1", "s2"});
  const std::string good = ResultCache::Encode("q", a, {1, 2});
  auto d = ResultCache::Decode(good);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->answer.depends_on, a.depends_on);
  EXPECT_EQ(d->versions, (std::vector<uint64_t>{1, 2}));
  // Every truncation, and garbage appended, is rejected.
  for (size_t n = 0; n < good.size(); ++n) EXPECT_FALSE(ResultCache::Decode(good.substr(0, n)));
  EXPECT_FALSE(ResultCache::Decode(good + "x"));
  // A length field claiming 4 GB is rejected without allocating it.
  std::string huge = good;
  huge[4] = huge[5] = huge[6] = huge[7] = '\xff';
  EXPECT_FALSE(ResultCache::Decode(huge));

  Fixture f;
  ASSERT_TRUE(f.cache.Insert("q", Answer("a")).ok());
  // Overwrite the stored entry with garbage under the same key.
  const std::string key = "l3:" + [] {
    uint64_t h = 0xcbf29ce484222325ULL;
    h ^= 'q';
    h *= 0x100000001b3ULL;
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h));
    return std::string(hex);
  }();
  ASSERT_TRUE(f.store->Get(key).value().has_value());
  ASSERT_TRUE(f.store->Set(key, "garbage", milliseconds(1000)).ok());
  EXPECT_FALSE(f.cache.Lookup("q").value().has_value());
  EXPECT_FALSE(f.store->Get(key).value().has_value());  // dropped
}

}  // namespace
}  // namespace hotline::answer
