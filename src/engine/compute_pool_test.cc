#include "engine/compute_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace hotline::engine {
namespace {

TEST(ComputePool, ParallelForVisitsEveryIndexOnce) {
  for (int threads : {1, 2, 5}) {
    ComputePool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {0, 1, 7, 100, 1001}) {
      for (int64_t grain : {0, 1, 3, 64}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        std::atomic<int> bad_thread{0};
        pool.ParallelFor(n, grain, [&](int64_t b, int64_t e, int thread) {
          if (thread < 0 || thread >= threads) bad_thread++;
          for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)]++;
        });
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1);
        EXPECT_EQ(bad_thread.load(), 0);
      }
    }
  }
}

TEST(ComputePool, RunCallsEveryThreadOnce) {
  ComputePool pool(4);
  for (int iter = 0; iter < 300; ++iter) {
    std::atomic<int> mask{0};
    pool.Run([&](int thread, int n) {
      EXPECT_EQ(n, 4);
      mask.fetch_or(1 << thread);
    });
    ASSERT_EQ(mask.load(), 0xF) << "iteration " << iter;
  }
}

TEST(ComputePool, WakesWorkersAfterTheySleep) {
  ComputePool pool(3, /*spin_us=*/10);
  for (int iter = 0; iter < 20; ++iter) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // workers fall asleep
    std::atomic<int> count{0};
    pool.Run([&](int, int) { count++; });
    ASSERT_EQ(count.load(), 3);
  }
}

TEST(ComputePool, MixedJobsStress) {
  // Alternating ParallelFor (optional participation) and Run (every thread) jobs of random
  // sizes: every index exactly once, every thread exactly once per Run.
  ComputePool pool(3, /*spin_us=*/5);
  uint32_t seed = 12345;
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  for (int iter = 0; iter < 3000; ++iter) {
    if (next() % 3 == 0) {
      std::atomic<int> mask{0};
      pool.Run([&](int thread, int) { mask.fetch_or(1 << thread); });
      ASSERT_EQ(mask.load(), 0x7) << "iteration " << iter;
    } else {
      const int64_t n = 1 + next() % 64;
      std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
      pool.ParallelFor(n, 1 + next() % 4, [&](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) seen[size_t(i)]++;
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(seen[size_t(i)].load(), 1) << "iteration " << iter;
    }
  }
}

TEST(ComputePool, ZeroThreadsMeansCallerOnly) {
  ComputePool pool(0);
  EXPECT_EQ(pool.num_threads(), 1);
  int calls = 0;
  pool.ParallelFor(10, 4, [&](int64_t, int64_t, int thread) {
    EXPECT_EQ(thread, 0);
    calls++;
  });
  EXPECT_EQ(calls, 3);
}

}  // namespace
}  // namespace hotline::engine
