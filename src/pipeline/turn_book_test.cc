// TurnBook: a turn's record from its start to its one report; supersession, holds, late results.
#include "pipeline/turn_book.h"

#include <gtest/gtest.h>

namespace hotline::pipeline {
namespace {

TurnReport Caller(const std::string& transcript) {
  TurnReport r;
  r.kind = TurnKind::kCaller;
  r.transcript = transcript;
  return r;
}

TEST(TurnBook, ANewTurnCancelsAndSupersedesThePendingOne) {
  TurnBook book;
  TurnBook::Begun first = book.Begin(Caller("where is my order"));
  EXPECT_EQ(first.index, 0);
  EXPECT_EQ(first.previous, -1);
  EXPECT_EQ(book.active(), 0);
  TurnBook::Begun second = book.Begin(Caller("cancel it"));
  EXPECT_EQ(second.index, 1);
  EXPECT_EQ(second.previous, 0);
  EXPECT_TRUE(first.token->cancelled());
  EXPECT_FALSE(second.token->cancelled());
  EXPECT_EQ(book.at(0).outcome, TurnOutcome::kSuperseded);
  EXPECT_EQ(book.at(1).index, 1);
  EXPECT_EQ(book.active(), 1);
}

TEST(TurnBook, ASettledTurnIsNotSupersededAndALateResultChangesNothing) {
  TurnBook book;
  book.Begin(Caller("goodbye"));
  EXPECT_TRUE(book.SettleIfPending(0, TurnOutcome::kGoodbye));
  book.Begin(Caller("wait"));
  EXPECT_EQ(book.at(0).outcome, TurnOutcome::kGoodbye);
  // The first answer's result arrives after the second turn superseded it.
  book.Begin(Caller("my bill"));
  EXPECT_EQ(book.at(1).outcome, TurnOutcome::kSuperseded);
  EXPECT_FALSE(book.SettleIfPending(1, TurnOutcome::kTransfer));
  EXPECT_EQ(book.at(1).outcome, TurnOutcome::kSuperseded);
}

TEST(TurnBook, ATurnIsReportedOnceAndAPendingOneWasAnswered) {
  TurnBook book;
  book.Begin(Caller("where is my order"));
  auto report = book.Finish(0, 1234.0);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->outcome, TurnOutcome::kAnswered);
  EXPECT_EQ(report->ledger.turn_done, 1234.0);
  EXPECT_FALSE(book.Finish(0, 2000.0).has_value());
  EXPECT_FALSE(book.Finish(-1, 2000.0).has_value());
}

TEST(TurnBook, AHeldTurnIsReportedOnlyAfterItsRelease) {
  TurnBook book;
  book.Begin(Caller("where is my order"));
  book.Hold(0);
  EXPECT_FALSE(book.Release(1));                    // not the held turn
  EXPECT_FALSE(book.Finish(0, 100.0).has_value());  // its speech ended: deferred
  EXPECT_TRUE(book.Release(0));                     // ... so finish it now
  EXPECT_TRUE(book.Finish(0, 200.0).has_value());
  EXPECT_FALSE(book.Release(0));
  // Released before its speech ended: the finish comes when it does.
  book.Begin(Caller("and my bill"));
  book.Hold(1);
  EXPECT_FALSE(book.Release(1));
  EXPECT_TRUE(book.Finish(1, 300.0).has_value());
}

TEST(TurnBook, ARenewedTokenReplacesTheActiveTurnsCancelledOne) {
  TurnBook book;
  EXPECT_EQ(book.RenewActiveToken(), nullptr);
  TurnBook::Begun b = book.Begin(Caller("where is my order"));
  auto fresh = book.RenewActiveToken();
  ASSERT_NE(fresh, nullptr);
  EXPECT_TRUE(b.token->cancelled());
  EXPECT_FALSE(fresh->cancelled());
  book.CancelActive();
  EXPECT_TRUE(fresh->cancelled());
}

TEST(TurnBook, AFinishedTurnIsNeverActiveNorReported) {
  TurnBook book;
  TurnReport echo = Caller("mm-hm");
  echo.outcome = TurnOutcome::kDiscarded;
  book.AppendFinished(echo);
  EXPECT_EQ(book.active(), -1);
  EXPECT_EQ(book.size(), 1u);
  EXPECT_EQ(book.at(0).index, 0);
  EXPECT_FALSE(book.Finish(0, 10.0).has_value());
  EXPECT_EQ(book.Begin(Caller("where is my order")).previous, -1);
}

}  // namespace
}  // namespace hotline::pipeline
