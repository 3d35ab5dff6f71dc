// Store: the key/value interface under the answer caches (L2 semantic, L3 result).
//
// Values are opaque byte strings with a time-to-live. Version stamps are named counters kept in
// the same store, so every Hotline process sharing a store sees the same stamps: a cache entry
// records the stamps it depends on and is ignored once any of them moves (knowledge-base updates
// invalidate the answers that were built from the changed articles).
//
// Backends: MemoryStore (in-process, sharded LRU, bounded memory) and RedisStore (shared between
// processes, falls back to a local MemoryStore while Redis is unreachable). Create() picks one by
// StoreConfig::backend.
//
// Thread-safety: every method of every backend may be called from any thread concurrently.
// Blocking: MemoryStore never blocks on I/O (short per-shard locks only); RedisStore blocks on
// the network up to its configured timeouts, so call it from worker threads, never from an I/O
// thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace hotline::answer {

// Time comes from common/clock.h (Clock, SystemClock, FakeClock), injected so TTLs are testable.

struct MemoryStoreConfig {
  // Total bytes of keys + values (+ a fixed per-entry overhead) kept; least recently used
  // entries are evicted beyond it. More memory = more hits, but it is taken from the process.
  int64_t capacity_bytes = 256ll << 20;
  // Independent shards (each with its own lock and LRU list). More shards = less contention
  // under many threads, but LRU becomes per-shard and the capacity is split evenly between them.
  int shards = 16;
  // Largest single value accepted; bigger values are refused rather than flushing the cache.
  int64_t max_value_bytes = 4ll << 20;

  template <class V>
  void Visit(V& v) {
    v.Field("capacity_bytes", capacity_bytes, "Memory bound of the in-process store (LRU beyond)");
    v.Field("shards", shards, "Lock shards of the in-process store");
    v.Field("max_value_bytes", max_value_bytes, "Largest value the in-process store accepts");
  }
  Status Validate() const;
};

struct RedisStoreConfig {
  std::string host = "127.0.0.1";  // Redis server shared by all Hotline processes of a cluster
  int port = 6379;
  // Prefix of every key, so several deployments (or tests) can share one Redis.
  std::string key_prefix = "hotline:";
  // Connect and per-command timeouts. Short keeps a slow Redis from stalling answers (the local
  // store answers instead); too short turns ordinary network jitter into fallbacks.
  int connect_timeout_ms = 200;
  int command_timeout_ms = 50;
  // Reconnection backoff after a failure: the first retry waits initial, doubling up to max.
  // While waiting, the local store answers without touching the network.
  int backoff_initial_ms = 100;
  int backoff_max_ms = 5000;
  // Connections kept open; concurrent callers beyond it wait for a free one (up to the command
  // timeout) and then fall back to the local store.
  int pool_size = 8;
  // A background probe PINGs Redis this often (0: off). While Redis is up it finds a lost
  // server before a caller's look-up pays the timeout; while Redis is down it reconnects as soon
  // as the backoff window has passed, so sharing resumes even when no turn needs the store.
  int health_interval_ms = 1000;
  // Redis AUTH on every new connection: `username` (Redis 6 ACL user; empty: the default user)
  // and `password` (empty: no AUTH), or the password from the environment variable named by
  // password_env when set. Every caller hears the shared answers stored there, so a Redis
  // reachable by others should require it. (TLS to Redis is not available: Debian 12's hiredis
  // 0.14 has no TLS support; keep Redis on a private network or a local TLS tunnel.)
  std::string username;
  std::string password;
  std::string password_env;
  // The local store used while Redis is unreachable (and as a copy of what this process saw).
  MemoryStoreConfig local;

  template <class V>
  void Visit(V& v) {
    v.Field("host", host, "Redis host");
    v.Field("port", port, "Redis TCP port");
    v.Field("key_prefix", key_prefix, "Prefix of every Hotline key in Redis");
    v.Field("connect_timeout_ms", connect_timeout_ms, "Redis connect timeout");
    v.Field("command_timeout_ms", command_timeout_ms, "Redis per-command timeout");
    v.Field("backoff_initial_ms", backoff_initial_ms, "First reconnect delay after a failure");
    v.Field("backoff_max_ms", backoff_max_ms, "Longest reconnect delay");
    v.Field("pool_size", pool_size, "Redis connections kept open");
    v.Field("health_interval_ms", health_interval_ms,
            "Background PING interval that finds a lost Redis and reconnects (0: off)");
    v.Field("username", username, "Redis ACL user for AUTH (empty: the default user)");
    v.Field("password", password, "Redis AUTH password (empty: no AUTH)");
    v.Field("password_env", password_env,
            "Environment variable holding the Redis password (overrides password)");
    v.Section("local", local);
  }
  Status Validate() const;
};

struct StoreConfig {
  // "memory" (this process only) or "redis" (shared by every process using the same Redis).
  std::string backend = "memory";
  MemoryStoreConfig memory;
  RedisStoreConfig redis;

  template <class V>
  void Visit(V& v) {
    v.Field("backend", backend, "Answer store backend: memory | redis");
    v.Section("memory", memory);
    v.Section("redis", redis);
  }
  Status Validate() const;
};

// Counters every backend keeps (monotonic; read at any time).
struct StoreStats {
  uint64_t gets = 0;
  uint64_t hits = 0;
  uint64_t sets = 0;
  uint64_t evictions = 0;       // entries dropped to stay under the memory bound
  uint64_t expirations = 0;     // entries found past their TTL
  uint64_t entries = 0;         // current entry count (memory backends)
  uint64_t bytes = 0;           // current charged bytes (memory backends)
  uint64_t remote_errors = 0;   // failed Redis commands/connections
  uint64_t local_fallbacks = 0;  // operations served by the local store because Redis was down
  uint64_t reconnects = 0;      // successful (re)connections to Redis
};

class Store {
 public:
  virtual ~Store() = default;

  // The value of `key`, or nullopt when absent or expired. Errors only for invalid keys;
  // backends with a fallback answer from it rather than failing.
  virtual Result<std::optional<std::string>> Get(std::string_view key) = 0;
  // Stores `value` under `key` for `ttl` (> 0). Replaces any previous value.
  virtual Status Set(std::string_view key, std::string_view value, std::chrono::milliseconds ttl) = 0;
  virtual Status Delete(std::string_view key) = 0;

  // Current values of the named version stamps (0 for a stamp never bumped), in order.
  virtual Result<std::vector<uint64_t>> Versions(const std::vector<std::string>& names) = 0;
  // Increments a stamp and returns its new value.
  virtual Result<uint64_t> BumpVersion(std::string_view name) = 0;

  // Adds one to the integer counter at `key` and returns the new value; an absent or expired key
  // starts at 1 and expires `ttl` (> 0) later, which later increments keep (a fixed window).
  // Atomic among every process sharing the store (Redis). Get(key) reads it as decimal text.
  virtual Result<int64_t> Increment(std::string_view key, std::chrono::milliseconds ttl) = 0;

  virtual StoreStats Stats() const = 0;

  // Backend chosen by config.backend. `clock` must outlive the store (nullptr: the real clock).
  static Result<std::unique_ptr<Store>> Create(const StoreConfig& config,
                                               const Clock* clock = nullptr);
};

// Keys are bounded so that untrusted text can never make a huge key.
inline constexpr size_t kMaxStoreKeyBytes = 4096;
Status ValidateStoreKey(std::string_view key);

}  // namespace hotline::answer
