#include "common/clock.h"

#include <gtest/gtest.h>

namespace hotline {
namespace {

TEST(FakeClock, MovesOnlyWhenAdvanced) {
  FakeClock c;
  MonoTime t0 = c.Now();
  EXPECT_EQ(c.Now(), t0);
  c.Advance(std::chrono::milliseconds(250));
  EXPECT_DOUBLE_EQ(MillisBetween(t0, c.Now()), 250.0);
}

TEST(SystemClock, IsMonotonic) {
  MonoTime a = SystemClock::Get().Now();
  MonoTime b = SystemClock::Get().Now();
  EXPECT_LE(a, b);
}

}  // namespace
}  // namespace hotline
