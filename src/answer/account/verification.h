// VerificationLedger: wrong PINs remembered across calls, so a PIN cannot be guessed one call at
// a time.
//
//   VerificationLedger ledger(config.verification, {&accounts_counters, &redis_counters});
//   auto keys = VerificationLedger::KeysFor(caller_id, customer_id);
//   if (*ledger.Locked(keys)) { /* refuse, offer a human */ }
//   ... wrong PIN:  auto locked = ledger.RecordFailure(keys);   // nullopt: not (yet) locked
//   ... right PIN:  ledger.RecordSuccess(keys);
//
// Failures are counted per claimed number and per account (both keys of a call). When one key
// reaches max_failures within failure_window_s, that key is locked for lockout_s, doubled for
// each further lock-out remembered within backoff_memory_s (capped at max_lockout_s): the
// exponential back-off. A lock-out refuses every PIN, the right one too, until it expires.
//
// Counters live in one or more AttemptCounters backends: the accounts database (SQLite; survives
// restarts; every process on that file sees it) and, when the answer store is Redis, Redis too
// (so every node of a cluster sees them). A key is locked when any backend says so; a count is
// the highest any backend returns; a failing backend is logged and skipped (all failing is an
// error: the caller is then not verified). Keys are stored as SHA-256 digests of the number or
// account id, so no phone number is written in clear.
//
// Thread-safety: thread-safe (the backends are). Blocking: SQLite and the network; call from
// worker threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/metrics.h"
#include "common/status.h"

namespace hotline::answer {

class AccountsDb;
class Store;

struct VerificationConfig {
  // Wrong PINs for one number or one account, over any number of calls, before it is locked.
  // Lower resists guessing better; too low locks out customers who mistype. With the default
  // three attempts per call (answer.caller.max_pin_attempts), six is two calls.
  int max_failures = 6;
  // Failures are counted in a window that starts at the first one; after it they are forgotten.
  int failure_window_s = 3600;
  // The first lock-out's length; each further lock-out within backoff_memory_s doubles it.
  int lockout_s = 900;
  // The longest lock-out the doubling reaches.
  int max_lockout_s = 86400;
  // How long lock-outs are remembered for the doubling (after it, the next one is lockout_s).
  int backoff_memory_s = 7 * 86400;

  template <class V>
  void Visit(V& v) {
    v.Field("max_failures", max_failures, "Wrong PINs per number or account before a lock-out");
    v.Field("failure_window_s", failure_window_s, "Window in which wrong PINs are counted");
    v.Field("lockout_s", lockout_s, "First lock-out length (doubles for each further one)");
    v.Field("max_lockout_s", max_lockout_s, "Longest lock-out");
    v.Field("backoff_memory_s", backoff_memory_s, "How long lock-outs count for the doubling");
  }
  Status Validate() const;
};

// Expiring integer counters: the primitive the ledger is built on.
class AttemptCounters {
 public:
  virtual ~AttemptCounters() = default;
  // Adds one to `key` and returns the new value; a key that is absent or expired starts at 1 and
  // expires `ttl` later (later increments keep that expiry).
  virtual Result<int64_t> Increment(std::string_view key, std::chrono::milliseconds ttl) = 0;
  // The value of `key`; 0 when absent or expired.
  virtual Result<int64_t> Get(std::string_view key) = 0;
  // Sets `key` to `value`, expiring `ttl` from now.
  virtual Status Put(std::string_view key, int64_t value, std::chrono::milliseconds ttl) = 0;
  virtual Status Delete(std::string_view key) = 0;
  // For logs ("accounts database", "answer store").
  virtual std::string_view name() const = 0;
};

// Counters in the accounts database (table verification_counters). `now_unix_ms` null: the
// system clock. `accounts` must outlive the counters.
std::unique_ptr<AttemptCounters> AccountsAttemptCounters(
    AccountsDb& accounts, std::function<int64_t()> now_unix_ms = nullptr);
// Counters in an answer store (Redis: shared by every node). `store` must outlive the counters.
std::unique_ptr<AttemptCounters> StoreAttemptCounters(Store& store);

class VerificationLedger {
 public:
  // `backends` (not empty) and `metrics` (null: the global registry) must outlive the ledger.
  VerificationLedger(VerificationConfig config, std::vector<AttemptCounters*> backends,
                     MetricsRegistry* metrics = nullptr);

  // The keys of one verification: the claimed number (when not withheld) and the account it
  // belongs to (when there is one). Digests, safe to store and to log.
  static std::vector<std::string> KeysFor(std::string_view caller_id, std::string_view customer_id);

  // True while any of `keys` is locked out. Counted as a refused attempt when true.
  Result<bool> Locked(const std::vector<std::string>& keys);
  // A wrong PIN for `keys`. Returns the lock-out it caused (its length), or nullopt.
  Result<std::optional<std::chrono::seconds>> RecordFailure(const std::vector<std::string>& keys);
  // A right PIN: the keys' failure counts and back-off are forgotten.
  Status RecordSuccess(const std::vector<std::string>& keys);

  const VerificationConfig& config() const { return config_; }

 private:
  // Runs `op` on every backend; the error when all of them failed.
  Status Each(const std::function<Status(AttemptCounters&)>& op, std::string_view what);

  VerificationConfig config_;
  std::vector<AttemptCounters*> backends_;
  Counter* failures_;
  Counter* lockouts_;
  Counter* refused_;
};

}  // namespace hotline::answer
