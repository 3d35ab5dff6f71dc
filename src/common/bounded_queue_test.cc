#include "common/bounded_queue.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace hotline {
namespace {

TEST(BoundedQueue, FullQueueRejectsWithoutBlocking) {
  BoundedQueue<int> q(2);
  EXPECT_TRUE(q.TryPush(1).ok());
  EXPECT_TRUE(q.TryPush(2).ok());
  Status s = q.TryPush(3);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(*q.TryPop(), 1);
  EXPECT_TRUE(q.TryPush(3).ok());
  EXPECT_EQ(*q.Pop(), 2);
  EXPECT_EQ(*q.Pop(), 3);
  EXPECT_FALSE(q.TryPop().has_value());
}

TEST(BoundedQueue, PushTimesOutWhenFull) {
  BoundedQueue<int> q(1);
  ASSERT_TRUE(q.TryPush(1).ok());
  EXPECT_EQ(q.Push(2, std::chrono::milliseconds(1)).code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(*q.Pop(std::chrono::milliseconds(1)), 1);
  EXPECT_FALSE(q.Pop(std::chrono::milliseconds(1)).has_value());  // empty: times out
}

TEST(BoundedQueue, CloseDrainsThenEnds) {
  BoundedQueue<std::string> q(4);
  ASSERT_TRUE(q.TryPush("a").ok());
  q.Close();
  EXPECT_EQ(q.TryPush("b").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(*q.Pop(), "a");
  EXPECT_FALSE(q.Pop().has_value());
}

TEST(BoundedQueue, ManyProducersOneConsumerLoseNothing) {
  BoundedQueue<int> q(8);
  constexpr int kProducers = 4, kEach = 2000;
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int i = 0; i < kEach; ++i) ASSERT_TRUE(q.Push(p * kEach + i).ok());
    });
  }
  std::vector<int> seen(kProducers * kEach, 0);
  std::vector<int> last(kProducers, -1);
  for (int n = 0; n < kProducers * kEach; ++n) {
    int v = *q.Pop();
    ++seen[v];
    int p = v / kEach;
    EXPECT_GT(v, last[p]);  // per-producer order is kept
    last[p] = v;
  }
  for (auto& t : producers) t.join();
  for (int c : seen) EXPECT_EQ(c, 1);
}

}  // namespace
}  // namespace hotline
