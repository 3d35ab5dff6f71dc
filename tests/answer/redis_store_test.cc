// RedisStore against a real redis-server on a loopback port: sharing between two stores (two
// Hotline processes), fallback to the local store when Redis is killed, and sharing again after
// it is restarted.
#include "answer/cache/redis_store.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "answer/account/accounts.h"
#include "answer/account/verification.h"
#include "answer/cache/result_cache.h"
#include "redis_server.h"

namespace hotline::answer {
namespace {

using std::chrono::milliseconds;

RedisStoreConfig ConfigFor(int port) {
  RedisStoreConfig c;
  c.port = port;
  c.key_prefix = "test:";
  c.backoff_initial_ms = 20;
  c.backoff_max_ms = 80;
  c.command_timeout_ms = 200;
  c.local.capacity_bytes = 1 << 20;
  return c;
}

std::optional<std::string> GetOrDie(Store& s, std::string_view key) {
  auto v = s.Get(key);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::nullopt;
}

// Retries until `pred` holds or 3 s pass (reconnection waits for the backoff window).
template <class Pred>
bool Eventually(Pred pred) {
  for (int i = 0; i < 300; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return false;
}

class RedisStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status s = server_.Start();
    ASSERT_TRUE(s.ok()) << s;
    a_ = RedisStore::Create(ConfigFor(server_.port())).value();
    b_ = RedisStore::Create(ConfigFor(server_.port())).value();
  }
  testing::RedisServer server_;
  std::unique_ptr<RedisStore> a_, b_;
};

TEST_F(RedisStoreTest, TwoProcessesShareEntriesAndStamps) {
  ASSERT_TRUE(a_->Set("greeting", "hello", milliseconds(10'000)).ok());
  EXPECT_EQ(GetOrDie(*b_, "greeting"), "hello");
  ASSERT_TRUE(b_->Delete("greeting").ok());
  EXPECT_EQ(GetOrDie(*a_, "greeting"), std::nullopt);  // Redis is authoritative while up

  EXPECT_EQ(a_->BumpVersion("kb:article:1").value(), 1u);
  EXPECT_EQ(b_->BumpVersion("kb:article:1").value(), 2u);
  EXPECT_EQ(a_->Versions({"kb:article:1", "never"}).value(), (std::vector<uint64_t>{2, 0}));

  // Binary values survive the round trip.
  const std::string bytes("\x00\x01\x02\xff\r\n", 6);
  ASSERT_TRUE(a_->Set("audio", bytes, milliseconds(10'000)).ok());
  EXPECT_EQ(GetOrDie(*b_, "audio"), bytes);
  EXPECT_EQ(a_->Stats().remote_errors, 0u);
}

TEST_F(RedisStoreTest, RedisTtlApplies) {
  ASSERT_TRUE(a_->Set("short", "v", milliseconds(50)).ok());
  EXPECT_TRUE(Eventually([&] { return !GetOrDie(*b_, "short").has_value(); }));
}

TEST_F(RedisStoreTest, KilledMidTestServesLocallyThenSharingResumes) {
  // A L3 cache over each store, as two Hotline processes would have.
  ResultCache cache_a(*a_, ResultCacheConfig{});
  ResultCache cache_b(*b_, ResultCacheConfig{});
  CachedAnswer answer;
  answer.text = "Refunds reach your card within 5 to 7 business days.";
  answer.source = "kb";
  answer.depends_on = {"kb:article:refund"};
  ASSERT_TRUE(cache_a.Insert("how long does a refund take", answer).ok());
  // B sees A's answer through Redis (and keeps a local copy of what it saw).
  auto seen = cache_b.Lookup("how long does a refund take");
  ASSERT_TRUE(seen.ok() && seen->has_value());

  server_.Kill();

  // Answers keep coming from each process's local store.
  for (int i = 0; i < 20; ++i) {
    auto ra = cache_a.Lookup("how long does a refund take");
    auto rb = cache_b.Lookup("how long does a refund take");
    ASSERT_TRUE(ra.ok() && ra->has_value()) << "lookup " << i;
    ASSERT_TRUE(rb.ok() && rb->has_value()) << "lookup " << i;
    EXPECT_EQ((*rb)->text, answer.text);
  }
  // Writes during the outage succeed locally.
  ASSERT_TRUE(a_->Set("during-outage", "local only", milliseconds(10'000)).ok());
  EXPECT_EQ(GetOrDie(*a_, "during-outage"), "local only");
  EXPECT_GT(a_->Stats().remote_errors, 0u);
  EXPECT_GT(a_->Stats().local_fallbacks, 0u);
  EXPECT_TRUE(a_->down());
  // An invalidation made during the outage is replayed into Redis after reconnection.
  ASSERT_TRUE(a_->BumpVersion("kb:article:refund").ok());

  ASSERT_TRUE(server_.Restart().ok());

  // Sharing resumes once the backoff window has passed.
  EXPECT_TRUE(Eventually([&] {
    return a_->Set("after-restart", "shared again", milliseconds(10'000)).ok() && !a_->down() &&
           GetOrDie(*b_, "after-restart") == std::optional<std::string>("shared again");
  }));
  EXPECT_FALSE(b_->down());
  EXPECT_GE(a_->Stats().reconnects, 2u);  // first connection + the one after the restart
  EXPECT_GE(b_->Versions({"kb:article:refund"}).value()[0], 1u);
}

// A hung Redis (SIGSTOP) still completes connections in its kernel's backlog, so reconnecting
// alone proves nothing: the store stays down through the hang (every look-up served locally, no
// "reachable again" counted), an invalidation made meanwhile waits, and it reaches Redis once
// Redis answers again.
TEST_F(RedisStoreTest, HungServerIsNotTakenForBack) {
  ASSERT_TRUE(a_->Set("hung", "before", milliseconds(10'000)).ok());
  ASSERT_FALSE(a_->down());
  server_.Pause();
  ASSERT_TRUE(a_->BumpVersion("kb:article:hung").ok());  // times out: bumped locally, pending
  EXPECT_TRUE(a_->down());
  const uint64_t reconnects = a_->Stats().reconnects;
  // Several backoff windows (20-80 ms), each ending in a reconnection that reaches the backlog.
  const auto until = std::chrono::steady_clock::now() + milliseconds(700);
  while (std::chrono::steady_clock::now() < until) {
    EXPECT_EQ(GetOrDie(*a_, "hung"), std::optional<std::string>("before"));  // the local copy
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(a_->Stats().reconnects, reconnects) << "a hung server was taken for one that is back";
  EXPECT_TRUE(a_->down());
  EXPECT_EQ(a_->Versions({"kb:article:hung"}).value()[0], 1u);  // local
  server_.Resume();
  EXPECT_TRUE(Eventually([&] {
    (void)GetOrDie(*a_, "hung");
    return !a_->down();
  })) << "no reconnection after the server answered again";
  EXPECT_GT(a_->Stats().reconnects, reconnects);
  EXPECT_GE(b_->Versions({"kb:article:hung"}).value()[0], 1u)
      << "the pending bump never reached Redis";
}

// With no look-up at all, the health probe finds the lost server and reconnects after its
// restart (a node whose turns are all answered by the intent templates still shares again).
TEST_F(RedisStoreTest, HealthProbeReconnectsWithoutAnyLookUp) {
  RedisStoreConfig config = ConfigFor(server_.port());
  config.health_interval_ms = 20;
  auto store = RedisStore::Create(config).value();
  EXPECT_TRUE(Eventually([&] { return store->probes() > 0 && !store->down(); }));
  server_.Kill();
  EXPECT_TRUE(Eventually([&] { return store->down(); })) << "the probe never saw Redis go";
  // Read before the restart: the probe may reconnect before Restart() returns.
  const uint64_t reconnects = store->Stats().reconnects;
  ASSERT_TRUE(server_.Restart().ok());
  EXPECT_TRUE(Eventually([&] { return !store->down(); })) << "no reconnection after the restart";
  EXPECT_GT(store->Stats().reconnects, reconnects);
  EXPECT_EQ(store->Stats().local_fallbacks, 0u);  // nothing was looked up
}

TEST(RedisStore, ProbeIsOffWhenTheIntervalIsZeroAndTheIntervalIsValidated) {
  RedisStoreConfig config = ConfigFor(1);
  config.health_interval_ms = 0;
  auto store = RedisStore::Create(config).value();
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(store->probes(), 0u);
  EXPECT_EQ(store->Stats().remote_errors, 0u);  // no thread touched the (closed) port
  config.health_interval_ms = -1;
  EXPECT_FALSE(RedisStore::Create(config).ok());
}

TEST(RedisStore, UnreachableFromTheStartServesLocally) {
  testing::RedisServer server;
  ASSERT_TRUE(server.Start().ok());
  const int port = server.port();
  server.Kill();  // nothing listens on this port now
  auto store = RedisStore::Create(ConfigFor(port)).value();
  ASSERT_TRUE(store->Set("k", "v", milliseconds(10'000)).ok());
  EXPECT_EQ(GetOrDie(*store, "k"), "v");
  EXPECT_FALSE(store->Ping().ok());
  EXPECT_GE(store->Stats().remote_errors, 1u);
}

// Counters for the verification ledger: atomic across stores (nodes), with a fixed window.
TEST_F(RedisStoreTest, IncrementIsSharedAndKeepsItsWindow) {
  EXPECT_EQ(a_->Increment("pin:fail:x", milliseconds(300)).value(), 1);
  EXPECT_EQ(b_->Increment("pin:fail:x", milliseconds(300)).value(), 2);
  EXPECT_EQ(GetOrDie(*a_, "pin:fail:x"), "2");
  std::this_thread::sleep_for(milliseconds(400));
  EXPECT_EQ(b_->Increment("pin:fail:x", milliseconds(300)).value(), 1);
}

// Two nodes with their own accounts databases share lock-outs through Redis: wrong PINs spread
// over both lock the number on both.
TEST_F(RedisStoreTest, WrongPinsOnTwoNodesLockTheNumberOnBoth) {
  auto db_a = AccountsDb::Open(":memory:", true).value();
  auto db_b = AccountsDb::Open(":memory:", true).value();
  auto local_a = AccountsAttemptCounters(*db_a);
  auto local_b = AccountsAttemptCounters(*db_b);
  auto shared_a = StoreAttemptCounters(*a_);
  auto shared_b = StoreAttemptCounters(*b_);
  MetricsRegistry metrics;
  VerificationConfig c;
  c.max_failures = 4;
  VerificationLedger node_a(c, {local_a.get(), shared_a.get()}, &metrics);
  VerificationLedger node_b(c, {local_b.get(), shared_b.get()}, &metrics);
  const auto keys = VerificationLedger::KeysFor("+15550100", "C1001");
  for (int i = 0; i < 3; ++i) {
    auto& node = i % 2 == 0 ? node_a : node_b;
    EXPECT_FALSE(node.RecordFailure(keys).value().has_value()) << i;
  }
  EXPECT_TRUE(node_b.RecordFailure(keys).value().has_value());
  EXPECT_TRUE(node_a.Locked(keys).value());
  EXPECT_TRUE(node_b.Locked(keys).value());
}

TEST(RedisAuth, ConnectsWithThePasswordAndFallsBackWithoutIt) {
  testing::RedisServer server;
  server.SetExtraArgs({"--requirepass", "pw-for-tests"});
  ASSERT_TRUE(server.Start().ok());
  RedisStoreConfig good = ConfigFor(server.port());
  good.password = "pw-for-tests";
  auto with = RedisStore::Create(good).value();
  EXPECT_TRUE(with->Ping().ok());
  ASSERT_TRUE(with->Set("k", "v", milliseconds(10'000)).ok());

  RedisStoreConfig bad = ConfigFor(server.port());
  bad.password = "wrong";
  auto without = RedisStore::Create(bad).value();
  EXPECT_FALSE(without->Ping().ok());
  EXPECT_EQ(GetOrDie(*without, "k"), std::nullopt);  // served locally: Redis refused it

  RedisStoreConfig from_env = ConfigFor(server.port());
  from_env.password_env = "HOTLINE_TEST_REDIS_PASSWORD";
  ::setenv("HOTLINE_TEST_REDIS_PASSWORD", "pw-for-tests", 1);
  auto env = RedisStore::Create(from_env).value();
  ::unsetenv("HOTLINE_TEST_REDIS_PASSWORD");
  EXPECT_EQ(GetOrDie(*env, "k"), "v");
}

}  // namespace
}  // namespace hotline::answer
