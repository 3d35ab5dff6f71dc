// Prints lookup latency percentiles of the answer stores:
//   - MemoryStore::Get and ResultCache::Lookup (L3) with 100,000 entries, 1 and 4 threads;
//   - baseline: std::unordered_map::find on the same keys (no locks, no copies);
//   - RedisStore::Get against a real redis-server on loopback, with a raw PING baseline.
// Usage: answer_store_bench [--entries N] [--lookups N]
#include <hiredis/hiredis.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "answer/cache/memory_store.h"
#include "answer/cache/redis_store.h"
#include "answer/cache/result_cache.h"
#include "redis_server.h"

namespace hotline::answer {
namespace {

using Clock = std::chrono::steady_clock;

struct Summary {
  double p50_us, p99_us, p999_us, max_us;
};

Summary Summarize(std::vector<double>& ns) {
  std::sort(ns.begin(), ns.end());
  auto at = [&](double q) { return ns[std::min(ns.size() - 1, static_cast<size_t>(q * ns.size()))] / 1000.0; };
  return {at(0.50), at(0.99), at(0.999), ns.back() / 1000.0};
}

void Print(const char* name, int threads, std::vector<double>& ns) {
  Summary s = Summarize(ns);
  std::printf("%-44s threads=%d n=%zu  p50=%.2f us  p99=%.2f us  p99.9=%.2f us  max=%.1f us\n", name,
              threads, ns.size(), s.p50_us, s.p99_us, s.p999_us, s.max_us);
}

std::string Question(int i) { return "how do i do thing number " + std::to_string(i) + " with my account"; }

// Runs `op(i)` `per_thread` times on each of `threads` threads; returns per-op latencies in ns.
template <class Op>
std::vector<double> Measure(int threads, int per_thread, Op op) {
  std::vector<std::vector<double>> parts(threads);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      parts[t].reserve(per_thread);
      for (int i = 0; i < per_thread; ++i) {
        const uint32_t r = rng();
        const auto t0 = Clock::now();
        op(r);
        parts[t].push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
      }
    });
  }
  for (auto& t : ts) t.join();
  std::vector<double> all;
  for (auto& p : parts) all.insert(all.end(), p.begin(), p.end());
  return all;
}

int Run(int entries, int lookups) {
  const std::string answer(180, 'a');  // a voice-length answer
  std::printf("answer store lookups: %d entries, %d lookups per measurement (10%% misses)\n", entries, lookups);

  // Baseline: a plain hash map, single thread, no locking, no copy.
  std::unordered_map<std::string, std::string> plain;
  for (int i = 0; i < entries; ++i) plain[Question(i)] = answer;
  std::vector<std::string> keys;
  for (int i = 0; i < entries * 11 / 10; ++i) keys.push_back(Question(i));  // last 10%: misses
  size_t found = 0;
  auto base = Measure(1, lookups, [&](uint32_t r) { found += plain.count(keys[r % keys.size()]); });
  Print("baseline std::unordered_map::find", 1, base);

  MemoryStoreConfig mc;
  mc.capacity_bytes = 256ll << 20;
  auto store = MemoryStore::Create(mc).value();
  for (int i = 0; i < entries; ++i) (void)store->Set(Question(i), answer, std::chrono::minutes(5));
  for (int threads : {1, 4}) {
    auto ns = Measure(threads, lookups / threads, [&](uint32_t r) {
      auto v = store->Get(keys[r % keys.size()]);
      found += v.ok() && v->has_value();
    });
    Print("MemoryStore::Get", threads, ns);
  }

  auto l3_store = MemoryStore::Create(mc).value();
  ResultCache l3(*l3_store, ResultCacheConfig{});
  CachedAnswer ca;
  ca.text = answer;
  ca.source = "kb";
  for (int i = 0; i < entries; ++i) {
    ca.depends_on = {"kb:article-" + std::to_string(i % 100)};
    (void)l3.Insert(Question(i), ca);
  }
  for (int threads : {1, 4}) {
    auto ns = Measure(threads, lookups / threads, [&](uint32_t r) {
      auto v = l3.Lookup(keys[r % keys.size()]);
      found += v.ok() && v->has_value();
    });
    Print("ResultCache::Lookup (L3, 1 version stamp)", threads, ns);
  }
  const StoreStats st = l3_store->Stats();
  std::printf("L3 store: %llu entries, %.1f MB charged\n", static_cast<unsigned long long>(st.entries),
              static_cast<double>(st.bytes) / (1 << 20));

  testing::RedisServer server;
  if (Status s = server.Start(); !s.ok()) {
    std::printf("redis: skipped (%s)\n", s.message().c_str());
    return found > 0 ? 0 : 1;
  }
  timeval tv{1, 0};
  redisContext* raw = redisConnectWithTimeout("127.0.0.1", server.port(), tv);
  if (raw && raw->err == 0) {
    auto ns = Measure(1, 10000, [&](uint32_t) {
      auto* reply = static_cast<redisReply*>(redisCommand(raw, "PING"));
      if (reply) freeReplyObject(reply);
    });
    Print("baseline hiredis PING round trip", 1, ns);
  }
  if (raw) redisFree(raw);
  RedisStoreConfig rc;
  rc.port = server.port();
  auto redis = RedisStore::Create(rc).value();
  const int redis_entries = std::min(entries, 10000);
  for (int i = 0; i < redis_entries; ++i) (void)redis->Set(Question(i), answer, std::chrono::minutes(5));
  for (int threads : {1, 4}) {
    auto ns = Measure(threads, 10000 / threads, [&](uint32_t r) {
      auto v = redis->Get(keys[r % (redis_entries * 11 / 10)]);
      found += v.ok() && v->has_value();
    });
    Print("RedisStore::Get (GET+PTTL pipelined)", threads, ns);
  }
  const StoreStats rs = redis->Stats();
  std::printf("redis errors=%llu fallbacks=%llu\n", static_cast<unsigned long long>(rs.remote_errors),
              static_cast<unsigned long long>(rs.local_fallbacks));
  return found > 0 ? 0 : 1;
}

}  // namespace
}  // namespace hotline::answer

int main(int argc, char** argv) {
  int entries = 100000, lookups = 1000000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--entries") == 0) entries = std::max(1, std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--lookups") == 0) lookups = std::max(4, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr, "usage: answer_store_bench [--entries N] [--lookups N]\n");
      return 2;
    }
  }
  return hotline::answer::Run(entries, lookups);
}
