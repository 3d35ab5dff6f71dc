#include "answer/account/verification.h"

#include <gtest/gtest.h>

#include <atomic>

#include "answer/account/accounts.h"
#include "answer/account/caller.h"
#include "answer/cache/memory_store.h"

namespace hotline::answer {
namespace {

using std::chrono::seconds;

struct Fixture {
  Fixture() {
    db = AccountsDb::Open(":memory:", true).value();
    EXPECT_TRUE(db->SeedDemo().ok());
    counters = AccountsAttemptCounters(*db, [this] { return now_ms.load(); });
  }
  void Advance(seconds s) { now_ms += s.count() * 1000; }
  std::atomic<int64_t> now_ms{1'800'000'000'000};
  std::unique_ptr<AccountsDb> db;
  std::unique_ptr<AttemptCounters> counters;
  MetricsRegistry metrics;
};

TEST(VerificationConfig, ValidateNamesTheField) {
  VerificationConfig c;
  EXPECT_TRUE(c.Validate().ok());
  c.max_failures = 0;
  EXPECT_NE(c.Validate().message().find("max_failures"), std::string::npos);
  c = VerificationConfig{};
  c.max_lockout_s = 10;
  EXPECT_NE(c.Validate().message().find("max_lockout_s"), std::string::npos);
}

TEST(AccountsCounters, IncrementKeepsAFixedWindowAndExpires) {
  Fixture f;
  EXPECT_EQ(f.counters->Increment("k", seconds(60)).value(), 1);
  f.Advance(seconds(30));
  EXPECT_EQ(f.counters->Increment("k", seconds(60)).value(), 2);
  EXPECT_EQ(f.counters->Get("k").value(), 2);
  f.Advance(seconds(31));  // 61 s after the first: the window has passed
  EXPECT_EQ(f.counters->Get("k").value(), 0);
  EXPECT_EQ(f.counters->Increment("k", seconds(60)).value(), 1);
  ASSERT_TRUE(f.counters->Put("p", 7, seconds(5)).ok());
  EXPECT_EQ(f.counters->Get("p").value(), 7);
  ASSERT_TRUE(f.counters->Delete("p").ok());
  EXPECT_EQ(f.counters->Get("p").value(), 0);
}

TEST(VerificationLedger, KeysAreDigestsNotNumbers) {
  auto keys = VerificationLedger::KeysFor("+15550100", "C1001");
  ASSERT_EQ(keys.size(), 2u);
  for (const auto& k : keys) {
    EXPECT_EQ(k.find("5550100"), std::string::npos) << k;
    EXPECT_EQ(k.find("C1001"), std::string::npos) << k;
  }
  EXPECT_NE(keys[0], keys[1]);
  EXPECT_EQ(VerificationLedger::KeysFor("", "").size(), 0u);
}

TEST(VerificationLedger, LocksAfterMaxFailuresWithDoublingLockouts) {
  Fixture f;
  VerificationConfig c;
  c.max_failures = 3;
  c.lockout_s = 100;
  c.max_lockout_s = 350;
  VerificationLedger ledger(c, {f.counters.get()}, &f.metrics);
  const auto keys = VerificationLedger::KeysFor("+15550100", "C1001");
  for (int round = 0; round < 4; ++round) {
    EXPECT_FALSE(ledger.Locked(keys).value());
    EXPECT_FALSE(ledger.RecordFailure(keys).value().has_value());
    EXPECT_FALSE(ledger.RecordFailure(keys).value().has_value());
    auto lock = ledger.RecordFailure(keys).value();
    ASSERT_TRUE(lock.has_value());
    // 100, 200, then capped at 350.
    const int64_t want = round == 0 ? 100 : round == 1 ? 200 : 350;
    EXPECT_EQ(lock->count(), want) << "lock-out " << round + 1;
    EXPECT_TRUE(ledger.Locked(keys).value());
    f.Advance(seconds(want - 1));
    EXPECT_TRUE(ledger.Locked(keys).value());
    f.Advance(seconds(2));
    EXPECT_FALSE(ledger.Locked(keys).value());
  }
  EXPECT_EQ(f.metrics.GetCounter("hotline_answer_pin_lockouts_total", "").value(), 2u * 4);
  // A right PIN forgets the back-off: the next lock-out is the first length again.
  ASSERT_TRUE(ledger.RecordSuccess(keys).ok());
  for (int i = 0; i < 2; ++i) (void)ledger.RecordFailure(keys);
  EXPECT_EQ(ledger.RecordFailure(keys).value()->count(), 100);
}

TEST(VerificationLedger, FailuresOutsideTheWindowAreForgotten) {
  Fixture f;
  VerificationConfig c;
  c.max_failures = 3;
  c.failure_window_s = 60;
  VerificationLedger ledger(c, {f.counters.get()}, &f.metrics);
  const auto keys = VerificationLedger::KeysFor("+15550100", "");
  (void)ledger.RecordFailure(keys);
  (void)ledger.RecordFailure(keys);
  f.Advance(seconds(61));
  EXPECT_FALSE(ledger.RecordFailure(keys).value().has_value());
  EXPECT_FALSE(ledger.Locked(keys).value());
}

TEST(VerificationLedger, EveryBackendCountsAndAnyLockHolds) {
  Fixture f;
  auto store = MemoryStore::Create(MemoryStoreConfig{}).value();
  auto shared = StoreAttemptCounters(*store);
  VerificationConfig c;
  c.max_failures = 2;
  VerificationLedger ledger(c, {f.counters.get(), shared.get()}, &f.metrics);
  const auto keys = VerificationLedger::KeysFor("+15550100", "");
  (void)ledger.RecordFailure(keys);
  ASSERT_TRUE(ledger.RecordFailure(keys).value().has_value());
  // Another node sees only the shared store: it is locked there too.
  VerificationLedger other(c, {shared.get()}, &f.metrics);
  EXPECT_TRUE(other.Locked(keys).value());
}

// Six wrong PINs over two calls lock the account; the third call's right PIN is refused.
TEST(CallerIdentifier, WrongPinsCountAcrossCalls) {
  Fixture f;
  VerificationLedger ledger(VerificationConfig{}, {f.counters.get()}, &f.metrics);
  CallerIdentifier id(*f.db, CallerConfig{3}, &ledger);
  for (int call = 0; call < 2; ++call) {
    CallerSession s("+15550100");
    EXPECT_EQ(id.SubmitPin(s, "0000").value(), PinOutcome::kWrongPin);
    EXPECT_EQ(id.SubmitPin(s, "0001").value(), PinOutcome::kWrongPin);
    EXPECT_EQ(id.SubmitPin(s, "0002").value(), PinOutcome::kLocked);
  }
  CallerSession third("+15550100");
  EXPECT_EQ(id.SubmitPin(third, "4821").value(), PinOutcome::kLocked);
  EXPECT_FALSE(third.identified());
  // After the lock-out the right PIN works again, and forgets the failures.
  f.Advance(seconds(VerificationConfig{}.lockout_s + 1));
  CallerSession fourth("+15550100");
  EXPECT_EQ(id.SubmitPin(fourth, "4821").value(), PinOutcome::kIdentified);
}

TEST(CallerIdentifier, UnknownNumbersAreAnsweredLikeWrongPins) {
  Fixture f;
  VerificationLedger ledger(VerificationConfig{}, {f.counters.get()}, &f.metrics);
  CallerIdentifier id(*f.db, CallerConfig{3}, &ledger);
  for (const char* number : {"+15550100", "+19999999999"}) {
    CallerSession s(number);
    EXPECT_EQ(id.SubmitPin(s, "0000").value(), PinOutcome::kWrongPin) << number;
    EXPECT_EQ(id.SubmitPin(s, "0001").value(), PinOutcome::kWrongPin) << number;
    EXPECT_EQ(id.SubmitPin(s, "0002").value(), PinOutcome::kLocked) << number;
  }
  // Unknown numbers are counted and locked out the same way.
  CallerSession again("+19999999999");
  for (int i = 0; i < 3; ++i) (void)id.SubmitPin(again, "1234");
  CallerSession after("+19999999999");
  EXPECT_EQ(id.SubmitPin(after, "1234").value(), PinOutcome::kLocked);
}

}  // namespace
}  // namespace hotline::answer
