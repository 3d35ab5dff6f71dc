#include "answer/cache/memory_store.h"

#include <functional>

namespace hotline::answer {

namespace {
using SteadyTime = MonoTime;
}  // namespace

Status ValidateStoreKey(std::string_view key) {
  if (key.empty()) return InvalidArgumentError("store key is empty");
  if (key.size() > kMaxStoreKeyBytes) {
    return InvalidArgumentError("store key is " + std::to_string(key.size()) +
                                " bytes; the limit is " + std::to_string(kMaxStoreKeyBytes));
  }
  return Status::Ok();
}

Status MemoryStoreConfig::Validate() const {
  if (shards < 1 || shards > 4096) {
    return InvalidArgumentError("shards must be in [1, 4096], got " + std::to_string(shards));
  }
  if (capacity_bytes < 1024) {
    return InvalidArgumentError("capacity_bytes must be at least 1024, got " +
                                std::to_string(capacity_bytes));
  }
  if (max_value_bytes < 1) {
    return InvalidArgumentError("max_value_bytes must be positive, got " +
                                std::to_string(max_value_bytes));
  }
  return Status::Ok();
}

struct MemoryStore::Entry {
  std::string key;
  std::string value;
  SteadyTime expires;
  int64_t charge = 0;
};

struct MemoryStore::Shard {
  std::mutex mu;
  std::list<Entry> lru;  // front = most recently used
  // Keys view the strings owned by the list nodes, which never move.
  std::unordered_map<std::string_view, std::list<Entry>::iterator> index;
  int64_t bytes = 0;

  void Erase(std::list<Entry>::iterator it) {
    bytes -= it->charge;
    index.erase(std::string_view(it->key));
    lru.erase(it);
  }
};

Result<std::unique_ptr<MemoryStore>> MemoryStore::Create(const MemoryStoreConfig& config,
                                                         const Clock* clock) {
  RETURN_IF_ERROR(config.Validate().WithContext("memory store"));
  return std::unique_ptr<MemoryStore>(new MemoryStore(config, clock ? clock : &SystemClock::Get()));
}

MemoryStore::MemoryStore(const MemoryStoreConfig& config, const Clock* clock)
    : config_(config),
      clock_(clock),
      shard_capacity_bytes_(config.capacity_bytes / config.shards) {
  shards_.reserve(config.shards);
  for (int i = 0; i < config.shards; ++i) shards_.push_back(std::make_unique<Shard>());
}

MemoryStore::~MemoryStore() = default;

MemoryStore::Shard& MemoryStore::ShardFor(std::string_view key) {
  // Mix the hash: std::hash of a string can leave low bits poorly spread on some libraries.
  uint64_t h = std::hash<std::string_view>{}(key);
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return *shards_[h % shards_.size()];
}

Result<std::optional<std::string>> MemoryStore::Get(std::string_view key) {
  RETURN_IF_ERROR(ValidateStoreKey(key));
  gets_.fetch_add(1, std::memory_order_relaxed);
  Shard& s = ShardFor(key);
  const SteadyTime now = clock_->Now();
  std::lock_guard lock(s.mu);
  auto found = s.index.find(key);
  if (found == s.index.end()) return std::optional<std::string>();
  auto it = found->second;
  if (it->expires <= now) {
    s.Erase(it);
    expirations_.fetch_add(1, std::memory_order_relaxed);
    return std::optional<std::string>();
  }
  s.lru.splice(s.lru.begin(), s.lru, it);
  hits_.fetch_add(1, std::memory_order_relaxed);
  return std::optional<std::string>(it->value);
}

Status MemoryStore::Set(std::string_view key, std::string_view value,
                        std::chrono::milliseconds ttl) {
  RETURN_IF_ERROR(ValidateStoreKey(key));
  if (ttl.count() <= 0) {
    return InvalidArgumentError("store TTL must be positive, got " + std::to_string(ttl.count()) +
                                " ms");
  }
  if (static_cast<int64_t>(value.size()) > config_.max_value_bytes) {
    return ResourceExhaustedError("value of " + std::to_string(value.size()) +
                                  " bytes exceeds max_value_bytes " +
                                  std::to_string(config_.max_value_bytes));
  }
  const int64_t charge = static_cast<int64_t>(key.size() + value.size()) + kEntryOverheadBytes;
  if (charge > shard_capacity_bytes_) {
    return ResourceExhaustedError("entry of " + std::to_string(charge) +
                                  " bytes does not fit a store shard of " +
                                  std::to_string(shard_capacity_bytes_) +
                                  " bytes; raise capacity_bytes or lower shards");
  }
  sets_.fetch_add(1, std::memory_order_relaxed);
  Shard& s = ShardFor(key);
  const SteadyTime expires = clock_->Now() + ttl;
  // Build the node outside the lock; only the splice and index update happen under it.
  std::list<Entry> node;
  node.push_back(Entry{std::string(key), std::string(value), expires, charge});
  uint64_t evicted = 0;
  {
    std::lock_guard lock(s.mu);
    if (auto found = s.index.find(key); found != s.index.end()) s.Erase(found->second);
    s.lru.splice(s.lru.begin(), node);
    s.index.emplace(std::string_view(s.lru.front().key), s.lru.begin());
    s.bytes += charge;
    while (s.bytes > shard_capacity_bytes_ && s.lru.size() > 1) {
      s.Erase(std::prev(s.lru.end()));
      ++evicted;
    }
  }
  if (evicted) evictions_.fetch_add(evicted, std::memory_order_relaxed);
  return Status::Ok();
}

Status MemoryStore::Delete(std::string_view key) {
  RETURN_IF_ERROR(ValidateStoreKey(key));
  Shard& s = ShardFor(key);
  std::lock_guard lock(s.mu);
  if (auto found = s.index.find(key); found != s.index.end()) s.Erase(found->second);
  return Status::Ok();
}

std::optional<std::chrono::milliseconds> MemoryStore::RemainingTtl(std::string_view key) {
  Shard& s = ShardFor(key);
  const SteadyTime now = clock_->Now();
  std::lock_guard lock(s.mu);
  auto found = s.index.find(key);
  if (found == s.index.end() || found->second->expires <= now) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::milliseconds>(found->second->expires - now);
}

Result<std::vector<uint64_t>> MemoryStore::Versions(const std::vector<std::string>& names) {
  std::vector<uint64_t> out;
  out.reserve(names.size());
  std::lock_guard lock(versions_mu_);
  for (const auto& n : names) {
    auto it = versions_.find(n);
    out.push_back(it == versions_.end() ? 0 : it->second);
  }
  return out;
}

Result<uint64_t> MemoryStore::BumpVersion(std::string_view name) {
  RETURN_IF_ERROR(ValidateStoreKey(name));
  std::lock_guard lock(versions_mu_);
  return ++versions_[std::string(name)];
}

Result<int64_t> MemoryStore::Increment(std::string_view key, std::chrono::milliseconds ttl) {
  RETURN_IF_ERROR(ValidateStoreKey(key));
  if (ttl.count() <= 0) return InvalidArgumentError("counter TTL must be positive");
  std::lock_guard lock(increment_mu_);
  int64_t value = 1;
  std::chrono::milliseconds keep = ttl;
  if (auto remaining = RemainingTtl(key); remaining && remaining->count() > 0) {
    ASSIGN_OR_RETURN(std::optional<std::string> current, Get(key));
    if (current) {
      int64_t n = 0;
      for (char c : current->substr(0, 18)) {
        if (c < '0' || c > '9') break;
        n = n * 10 + (c - '0');
      }
      value = n + 1;
      keep = *remaining;
    }
  }
  RETURN_IF_ERROR(Set(key, std::to_string(value), keep));
  return value;
}

void MemoryStore::RaiseVersion(std::string_view name, uint64_t value) {
  std::lock_guard lock(versions_mu_);
  uint64_t& v = versions_[std::string(name)];
  if (value > v) v = value;
}

StoreStats MemoryStore::Stats() const {
  StoreStats st;
  st.gets = gets_.load(std::memory_order_relaxed);
  st.hits = hits_.load(std::memory_order_relaxed);
  st.sets = sets_.load(std::memory_order_relaxed);
  st.evictions = evictions_.load(std::memory_order_relaxed);
  st.expirations = expirations_.load(std::memory_order_relaxed);
  for (const auto& s : shards_) {
    std::lock_guard lock(s->mu);
    st.entries += s->index.size();
    st.bytes += static_cast<uint64_t>(s->bytes);
  }
  return st;
}

}  // namespace hotline::answer
