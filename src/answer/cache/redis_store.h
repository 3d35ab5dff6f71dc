// RedisStore: a Store shared by every Hotline process that points at the same Redis server.
//
// Keys live in Redis under RedisStoreConfig::key_prefix ("hotline:" + key); version stamps under
// prefix + "v:" + name (INCR). Every write also goes to a local MemoryStore, and every value read
// from Redis is copied into it with its remaining TTL, so that when Redis fails the process keeps
// answering from what it has seen:
//   - a failed command or connection counts a remote error, drops the pool's connections and
//     marks Redis down; until the backoff delay (doubling from backoff_initial_ms to
//     backoff_max_ms) has passed, every call is served by the local store without touching the
//     network (counted as local_fallbacks);
//   - after the delay, the next call (or the background health probe, every
//     health_interval_ms) tries to reconnect; on success sharing resumes, and version
//     stamps bumped locally while Redis was down are bumped in Redis too, so that entries other
//     processes stored before the outage cannot outlive an invalidation made during it.
// While Redis is up it is authoritative: a key absent in Redis is a miss even if the local copy
// still holds it (another process deleted it, or it expired).
//
// Thread-safety: all methods are thread-safe. Blocking: each call may block on the network up to
// connect_timeout_ms + command_timeout_ms; no lock is held during network I/O (a pool of
// connections, one caller per connection).
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "answer/cache/memory_store.h"
#include "answer/cache/store.h"

struct redisContext;

namespace hotline::answer {

class RedisStore final : public Store {
 public:
  // Creates the store without requiring Redis to be up (it connects on first use and serves
  // locally until it can). `clock` (nullptr: real clock) must outlive the store.
  static Result<std::unique_ptr<RedisStore>> Create(const RedisStoreConfig& config,
                                                    const Clock* clock = nullptr);
  ~RedisStore() override;

  Result<std::optional<std::string>> Get(std::string_view key) override;
  Status Set(std::string_view key, std::string_view value, std::chrono::milliseconds ttl) override;
  Status Delete(std::string_view key) override;
  Result<std::vector<uint64_t>> Versions(const std::vector<std::string>& names) override;
  Result<uint64_t> BumpVersion(std::string_view name) override;
  // INCR and, for a new key, PEXPIRE in one server-side script (atomic across processes).
  Result<int64_t> Increment(std::string_view key, std::chrono::milliseconds ttl) override;
  StoreStats Stats() const override;

  // Sends PING now (ignoring the backoff window); OK when Redis answered. For health checks.
  Status Ping();
  // True while Redis is marked down (inside a backoff window).
  bool down() const;
  // One health probe, as the background thread (health_interval_ms) runs it: PING over a pooled
  // connection, or a reconnection when the backoff window has passed; nothing inside the window.
  // True when Redis answered.
  bool Probe();
  // Probes that reached Redis (a test's way to see the background thread at work).
  uint64_t probes() const { return probes_.load(std::memory_order_relaxed); }

 private:
  RedisStore(const RedisStoreConfig& config, const Clock* clock,
             std::unique_ptr<MemoryStore> local);

  // A connection taken from the pool, or null when Redis is down / the pool stayed busy.
  redisContext* Acquire(bool ignore_backoff);
  // Returns a connection; `healthy` false closes it and marks Redis down.
  void Release(redisContext* ctx, bool healthy);
  void MarkDownLocked();
  // On a new connection after an outage: PINGs, then replays the stamps bumped meanwhile. False
  // when Redis does not answer the PING (a hung server's kernel still accepts connections): the
  // bumps stay pending and Redis stays down.
  bool ReplayPendingBumps(redisContext* ctx);
  void HealthLoop();

  RedisStoreConfig config_;
  std::string password_;  // config_.password, or the environment's (password_env)
  const Clock* clock_;
  std::unique_ptr<MemoryStore> local_;

  mutable std::mutex mu_;
  std::condition_variable pool_cv_;
  std::vector<redisContext*> idle_;
  int open_ = 0;
  bool down_ = false;
  bool ever_connected_ = false;
  std::chrono::steady_clock::time_point next_attempt_{};
  int backoff_ms_;
  std::set<std::string> pending_bumps_;  // stamps bumped locally while Redis was down

  std::atomic<uint64_t> remote_errors_{0}, local_fallbacks_{0}, reconnects_{0}, probes_{0};

  // The health probe's thread (declared last: it starts after, and stops before, the rest).
  std::mutex health_mu_;
  std::condition_variable health_cv_;
  bool stopping_ = false;
  std::thread health_;
};

}  // namespace hotline::answer
