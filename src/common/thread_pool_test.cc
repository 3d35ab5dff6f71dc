#include "common/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <latch>
#include <memory>
#include <thread>
#include <vector>

namespace hotline {
namespace {

TEST(ThreadPool, RunsEveryTaskBeforeShutdownReturns) {
  std::atomic<int> done{0};
  {
    ThreadPool pool(2, 64);
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(pool.Submit([&] { done.fetch_add(1); }).ok());
  }
  EXPECT_EQ(done.load(), 50);
}

// Holds one worker of `pool` in a task until Release() (or destruction): tasks queued meanwhile
// wait. The latch is shared with the task, which may still be waking when this is destroyed.
class HeldWorker {
 public:
  explicit HeldWorker(ThreadPool& pool) {
    std::latch started(1);
    EXPECT_TRUE(pool.Submit([&started, release = release_] {
                      started.count_down();
                      release->wait();
                    })
                    .ok());
    started.wait();
  }
  ~HeldWorker() { Release(); }
  void Release() {
    if (!released_) release_->count_down();
    released_ = true;
  }

 private:
  std::shared_ptr<std::latch> release_ = std::make_shared<std::latch>(1);
  bool released_ = false;
};

TEST(ThreadPool, SaturatedPoolRefusesInsteadOfQueueingForever) {
  ThreadPool pool(1, 1);
  HeldWorker held(pool);
  Status fill = pool.TrySubmit([] {});  // fills the single queue slot
  Status over = pool.TrySubmit([] {});
  held.Release();
  EXPECT_TRUE(fill.ok()) << fill;
  EXPECT_EQ(over.code(), StatusCode::kResourceExhausted);
}

TEST(ThreadPool, ThrowingTaskIsCountedAndWorkerSurvives) {
  ThreadPool pool(1, 8);
  std::atomic<bool> ran{false};
  ASSERT_TRUE(pool.Submit([] { throw std::runtime_error("boom"); }).ok());
  ASSERT_TRUE(pool.Submit([&] { ran = true; }).ok());
  pool.Shutdown();
  EXPECT_TRUE(ran.load());
  EXPECT_EQ(pool.tasks_failed(), 1u);
}

TEST(Strand, KeepsOrderPerStrandAndNeverOverlaps) {
  ThreadPool pool(2, 256);
  constexpr int kStrands = 4, kTasks = 300;
  std::vector<std::unique_ptr<Strand>> strands;
  std::vector<std::vector<int>> order(kStrands);
  std::vector<std::atomic<int>> inside(kStrands);
  std::atomic<bool> overlapped{false};
  for (int s = 0; s < kStrands; ++s) strands.push_back(std::make_unique<Strand>(pool));
  for (int i = 0; i < kTasks; ++i) {
    for (int s = 0; s < kStrands; ++s) {
      Status st = strands[s]->Post([&, s, i] {
        if (inside[s].fetch_add(1) != 0) overlapped = true;
        order[s].push_back(i);
        inside[s].fetch_sub(1);
      });
      ASSERT_TRUE(st.ok()) << st;
    }
  }
  pool.Shutdown();
  EXPECT_FALSE(overlapped.load());
  for (int s = 0; s < kStrands; ++s) {
    ASSERT_EQ(order[s].size(), static_cast<size_t>(kTasks));
    for (int i = 0; i < kTasks; ++i) EXPECT_EQ(order[s][i], i);
  }
}

TEST(Strand, BoundsPendingTasks) {
  ThreadPool pool(1, 8);
  std::latch release(1);
  std::latch started(1);
  Strand strand(pool);
  ASSERT_TRUE(strand.Post([&] {
    started.count_down();
    release.wait();
  }, 2).ok());
  started.wait();  // the first task is running, so it no longer counts as pending
  Status second = strand.Post([] {}, 2);
  Status third = strand.Post([] {}, 2);
  Status fourth = strand.Post([] {}, 2);
  release.count_down();
  EXPECT_TRUE(second.ok()) << second;
  EXPECT_TRUE(third.ok()) << third;
  EXPECT_EQ(fourth.code(), StatusCode::kResourceExhausted);
}

TEST(Strand, PostOrRunHereRunsTheStrandOnTheCallerWhenThePoolIsSaturated) {
  ThreadPool pool(1, 1);
  HeldWorker held(pool);
  ASSERT_TRUE(pool.TrySubmit([] {}).ok());  // the queue's one slot: the pool is saturated
  Strand strand(pool);
  ASSERT_EQ(strand.Post([] {}).code(), StatusCode::kResourceExhausted);
  std::vector<int> order;
  std::thread::id ran_on;
  strand.PostOrRunHere([&] { order.push_back(1); });
  strand.PostOrRunHere([&] {
    order.push_back(2);
    ran_on = std::this_thread::get_id();
  });
  EXPECT_EQ(order, (std::vector<int>{1, 2}));  // both ran before PostOrRunHere returned
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(strand.pending(), 0u);
  held.Release();
  pool.Shutdown();
}

TEST(Strand, PostOrRunHereQueuesBehindEarlierTasksAndIgnoresThePendingLimit) {
  ThreadPool pool(1, 8);
  std::latch release(1);
  std::latch started(1);
  Strand strand(pool);
  std::vector<int> order;
  ASSERT_TRUE(strand
                  .Post(
                      [&] {
                        started.count_down();
                        release.wait();
                        order.push_back(0);
                      },
                      1)
                  .ok());
  started.wait();
  ASSERT_TRUE(strand.Post([&] { order.push_back(1); }, 1).ok());
  ASSERT_EQ(strand.Post([] {}, 1).code(), StatusCode::kResourceExhausted);
  for (int i = 2; i < 6; ++i) strand.PostOrRunHere([&order, i] { order.push_back(i); });
  EXPECT_EQ(strand.pending(), 6u);  // none ran on this thread: a worker holds the strand
  release.count_down();
  pool.Shutdown();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(Strand, PendingCountsTheRunningTaskUntilItHasFinished) {
  ThreadPool pool(1, 8);
  std::latch release(1);
  std::latch started(1);
  Strand strand(pool);
  EXPECT_EQ(strand.pending(), 0u);
  ASSERT_TRUE(strand
                  .Post([&] {
                    started.count_down();
                    release.wait();
                  })
                  .ok());
  started.wait();
  EXPECT_EQ(strand.pending(), 1u);  // dequeued, still running
  ASSERT_TRUE(strand.Post([] {}).ok());
  EXPECT_EQ(strand.pending(), 2u);
  release.count_down();
  for (int i = 0; i < 2000 && strand.pending() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(strand.pending(), 0u);
  pool.Shutdown();
}

}  // namespace
}  // namespace hotline
