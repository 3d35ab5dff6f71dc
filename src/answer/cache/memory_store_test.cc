#include "answer/cache/memory_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace hotline::answer {
namespace {

using std::chrono::milliseconds;

std::unique_ptr<MemoryStore> Make(const Clock* clock, int64_t capacity = 1 << 20, int shards = 4) {
  MemoryStoreConfig c;
  c.capacity_bytes = capacity;
  c.shards = shards;
  auto s = MemoryStore::Create(c, clock);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(s).value();
}

TEST(MemoryStore, SetGetDelete) {
  FakeClock clock;
  auto s = Make(&clock);
  ASSERT_TRUE(s->Set("a", "alpha", milliseconds(1000)).ok());
  auto v = s->Get("a");
  ASSERT_TRUE(v.ok());
  ASSERT_TRUE(v->has_value());
  EXPECT_EQ(**v, "alpha");
  ASSERT_TRUE(s->Set("a", "beta", milliseconds(1000)).ok());
  EXPECT_EQ(*s->Get("a").value(), "beta");
  ASSERT_TRUE(s->Delete("a").ok());
  EXPECT_FALSE(s->Get("a").value().has_value());
  EXPECT_EQ(s->Stats().entries, 0u);
}

TEST(MemoryStore, TtlExpiresWithInjectedClock) {
  FakeClock clock;
  auto s = Make(&clock);
  ASSERT_TRUE(s->Set("k", "v", milliseconds(300'000)).ok());
  clock.Advance(milliseconds(299'999));
  EXPECT_TRUE(s->Get("k").value().has_value());
  EXPECT_EQ(s->RemainingTtl("k"), milliseconds(1));
  clock.Advance(milliseconds(1));
  EXPECT_FALSE(s->Get("k").value().has_value());
  EXPECT_EQ(s->Stats().expirations, 1u);
  EXPECT_EQ(s->Stats().entries, 0u);
}

TEST(MemoryStore, RejectsBadInput) {
  FakeClock clock;
  auto s = Make(&clock);
  EXPECT_EQ(s->Set("", "v", milliseconds(10)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s->Set("k", "v", milliseconds(0)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s->Get(std::string(kMaxStoreKeyBytes + 1, 'x')).status().code(),
            StatusCode::kInvalidArgument);
  // A value larger than a shard is refused instead of flushing the shard.
  EXPECT_EQ(s->Set("big", std::string(300'000, 'x'), milliseconds(10)).code(),
            StatusCode::kResourceExhausted);
  MemoryStoreConfig bad;
  bad.shards = 0;
  EXPECT_FALSE(MemoryStore::Create(bad).ok());
}

TEST(MemoryStore, EvictsLeastRecentlyUsedWithinMemoryBound) {
  FakeClock clock;
  // One shard so that LRU order is global; room for ~10 entries of ~228 bytes.
  auto s = Make(&clock, 2300, 1);
  const std::string value(90, 'v');
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(s->Set("key" + std::to_string(i), value, milliseconds(1000)).ok());
  }
  // Touch key0 so key1 becomes the least recently used.
  ASSERT_TRUE(s->Get("key0").value().has_value());
  ASSERT_TRUE(s->Set("key10", value, milliseconds(1000)).ok());
  EXPECT_TRUE(s->Get("key0").value().has_value());
  EXPECT_FALSE(s->Get("key1").value().has_value());
  EXPECT_TRUE(s->Get("key10").value().has_value());
  const StoreStats st = s->Stats();
  EXPECT_LE(st.bytes, 2300u);
  EXPECT_GE(st.evictions, 1u);
  // Many more inserts never push the charged bytes over the bound.
  for (int i = 0; i < 1000; ++i) {
    ASSERT_TRUE(s->Set("more" + std::to_string(i), value, milliseconds(1000)).ok());
  }
  EXPECT_LE(s->Stats().bytes, 2300u);
}

TEST(MemoryStore, VersionStamps) {
  auto s = Make(nullptr);
  EXPECT_EQ(s->Versions({"a", "b"}).value(), (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(s->BumpVersion("a").value(), 1u);
  EXPECT_EQ(s->BumpVersion("a").value(), 2u);
  s->RaiseVersion("b", 7);
  s->RaiseVersion("b", 3);
  EXPECT_EQ(s->Versions({"a", "b"}).value(), (std::vector<uint64_t>{2, 7}));
}

TEST(MemoryStore, ConcurrentReadersAndWritersStayConsistent) {
  auto s = Make(nullptr, 64 << 10, 8);
  constexpr int kThreads = 8;
  constexpr int kOps = 5000;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kOps; ++i) {
        const std::string key = "k" + std::to_string((i * 7 + t) % 500);
        if (i % 3 == 0) {
          // Every value names its key, so a reader can tell a torn or misplaced value.
          (void)s->Set(key, key + "=value", milliseconds(60'000));
        } else if (i % 17 == 0) {
          (void)s->Delete(key);
        } else {
          auto v = s->Get(key);
          if (!v.ok() || (v->has_value() && **v != key + "=value")) wrong.fetch_add(1);
        }
        if (i % 101 == 0) (void)s->BumpVersion("stamp");
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  const StoreStats st = s->Stats();
  EXPECT_LE(st.bytes, 64u << 10);
  EXPECT_EQ(s->Versions({"stamp"}).value()[0], static_cast<uint64_t>(kThreads * ((kOps + 100) / 101)));
}

}  // namespace
}  // namespace hotline::answer
