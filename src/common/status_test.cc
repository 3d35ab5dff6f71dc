#include "common/status.h"

#include <gtest/gtest.h>

namespace hotline {
namespace {

Result<int> Half(int x) {
  if (x % 2) return InvalidArgumentError("odd: " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  ASSIGN_OR_RETURN(int h, Half(x));
  ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(Status, OkAndErrors) {
  EXPECT_TRUE(Status::Ok().ok());
  Status s = NotFoundError("no such file x.wav");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.ToString(), "NOT_FOUND: no such file x.wav");
  EXPECT_EQ(s.WithContext("loading").message(), "loading: no such file x.wav");
}

TEST(Status, ReasonTravelsWithTheError) {
  Status s = OutOfRangeError("too long").WithReason(StatusReason::kContextLengthExceeded);
  EXPECT_EQ(s.reason(), StatusReason::kContextLengthExceeded);
  EXPECT_EQ(s.WithContext("engine").reason(), StatusReason::kContextLengthExceeded);
  EXPECT_EQ(OutOfRangeError("too long").reason(), StatusReason::kNone);
  EXPECT_FALSE(s == OutOfRangeError("too long"));  // same code and text, different reason
  // An OK status has no reason.
  EXPECT_EQ(Status::Ok().WithReason(StatusReason::kContextLengthExceeded).reason(),
            StatusReason::kNone);
  Result<int> r = s;
  EXPECT_EQ(r.status().reason(), StatusReason::kContextLengthExceeded);
}

TEST(Result, PropagatesErrors) {
  EXPECT_EQ(*Quarter(8), 2);
  auto r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "odd: 3");
}

TEST(Result, OkStatusWithoutValueBecomesInternal) {
  Result<int> r{Status::Ok()};
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace hotline
