// CircuitBreaker's states on an explicit clock: closed, open after failures in a row, one trial
// when the open time is over, closed again by the trial's success or reopened by its failure.
#include "llm/openai/circuit_breaker.h"

#include <gtest/gtest.h>

namespace hotline::llm {
namespace {

using Admission = CircuitBreaker::Admission;
using std::chrono::milliseconds;

TEST(CircuitBreaker, OpensAfterFailuresInARowAndASuccessBreaksTheRow) {
  CircuitBreaker b(3, milliseconds(1000));
  const auto t = CircuitBreaker::Clock::now();
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(b.Admit(t), Admission::kPass);
    b.Failed(Admission::kPass, t);
  }
  ASSERT_EQ(b.Admit(t), Admission::kPass);
  b.Succeeded(Admission::kPass);  // the row is broken
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(b.Admit(t), Admission::kPass);
    b.Failed(Admission::kPass, t);
  }
  EXPECT_FALSE(b.open());
  ASSERT_EQ(b.Admit(t), Admission::kPass);
  b.Failed(Admission::kPass, t);
  EXPECT_TRUE(b.open());
  EXPECT_EQ(b.times_opened(), 1u);
  EXPECT_EQ(b.Admit(t + milliseconds(999)), Admission::kReject);
  EXPECT_EQ(b.RetryInMs(t + milliseconds(400)), 600);
}

TEST(CircuitBreaker, OneTrialAtATimeItsSuccessCloses) {
  CircuitBreaker b(1, milliseconds(100));
  const auto t = CircuitBreaker::Clock::now();
  b.Failed(b.Admit(t), t);
  ASSERT_TRUE(b.open());
  const auto later = t + milliseconds(100);
  ASSERT_EQ(b.Admit(later), Admission::kTrial);
  EXPECT_EQ(b.Admit(later), Admission::kReject) << "a second trial while the first is out";
  b.Succeeded(Admission::kTrial);
  EXPECT_FALSE(b.open());
  EXPECT_EQ(b.Admit(later), Admission::kPass);
}

TEST(CircuitBreaker, AFailedTrialReopensAndAnAbandonedOneLetsTheNextTry) {
  CircuitBreaker b(1, milliseconds(100));
  const auto t = CircuitBreaker::Clock::now();
  b.Failed(b.Admit(t), t);
  const auto t1 = t + milliseconds(150);
  ASSERT_EQ(b.Admit(t1), Admission::kTrial);
  b.Failed(Admission::kTrial, t1);
  EXPECT_TRUE(b.open());
  EXPECT_EQ(b.times_opened(), 2u);
  EXPECT_EQ(b.Admit(t1 + milliseconds(99)), Admission::kReject);
  const auto t2 = t1 + milliseconds(100);
  ASSERT_EQ(b.Admit(t2), Admission::kTrial);
  b.Abandoned(Admission::kTrial);  // cancelled: says nothing about the server
  EXPECT_TRUE(b.open());
  EXPECT_EQ(b.Admit(t2), Admission::kTrial);
}

TEST(CircuitBreaker, ARequestAdmittedBeforeTheCircuitOpenedCountsOnce) {
  CircuitBreaker b(2, milliseconds(100));
  const auto t = CircuitBreaker::Clock::now();
  const Admission a = b.Admit(t), c = b.Admit(t), d = b.Admit(t);
  b.Failed(a, t);
  b.Failed(c, t);  // opens
  b.Failed(d, t);  // late: the circuit is already open
  EXPECT_EQ(b.times_opened(), 1u);
  EXPECT_EQ(b.RetryInMs(t), 100);
  b.Succeeded(b.Admit(t));  // a rejection reports nothing
  EXPECT_TRUE(b.open());
}

}  // namespace
}  // namespace hotline::llm
