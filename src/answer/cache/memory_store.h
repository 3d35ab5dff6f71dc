// MemoryStore: the in-process Store backend.
//
// Sharded by key hash; each shard is a hash map plus an LRU list under its own mutex, so
// concurrent callers on different keys rarely meet. Memory is bounded: every entry is charged
// key + value + kEntryOverheadBytes, and each shard evicts its least recently used entries beyond
// capacity_bytes / shards. Expired entries are dropped when met (Get) or evicted (LRU).
//
// Thread-safety: all methods are thread-safe. Blocking: only short per-shard critical sections
// (one hash lookup, one list splice, a value copy); no I/O. Get copies the value out.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "answer/cache/store.h"

namespace hotline::answer {

class MemoryStore final : public Store {
 public:
  // Approximate bookkeeping bytes per entry (map node, list node, strings' headers).
  static constexpr int64_t kEntryOverheadBytes = 128;

  // `clock` must outlive the store; nullptr means the real clock. Config must be valid.
  static Result<std::unique_ptr<MemoryStore>> Create(const MemoryStoreConfig& config,
                                                     const Clock* clock = nullptr);
  ~MemoryStore() override;

  Result<std::optional<std::string>> Get(std::string_view key) override;
  Status Set(std::string_view key, std::string_view value, std::chrono::milliseconds ttl) override;
  Status Delete(std::string_view key) override;
  Result<std::vector<uint64_t>> Versions(const std::vector<std::string>& names) override;
  Result<uint64_t> BumpVersion(std::string_view name) override;
  // A counter is an ordinary entry (subject to the memory bound like any other).
  Result<int64_t> Increment(std::string_view key, std::chrono::milliseconds ttl) override;
  StoreStats Stats() const override;

  // Remaining time to live of `key` (nullopt when absent or expired). Used by RedisStore to copy
  // entries with their deadline.
  std::optional<std::chrono::milliseconds> RemainingTtl(std::string_view key);
  // Sets a stamp to at least `value` (keeps the larger): used to mirror stamps seen in Redis.
  void RaiseVersion(std::string_view name, uint64_t value);

 private:
  struct Entry;
  struct Shard;
  MemoryStore(const MemoryStoreConfig& config, const Clock* clock);
  Shard& ShardFor(std::string_view key);

  MemoryStoreConfig config_;
  const Clock* clock_;
  int64_t shard_capacity_bytes_;
  std::vector<std::unique_ptr<Shard>> shards_;

  std::mutex increment_mu_;  // serializes Increment's read-modify-write
  mutable std::mutex versions_mu_;
  std::unordered_map<std::string, uint64_t> versions_;

  std::atomic<uint64_t> gets_{0}, hits_{0}, sets_{0}, evictions_{0}, expirations_{0};
};

}  // namespace hotline::answer
