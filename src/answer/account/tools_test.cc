#include "answer/account/tools.h"

#include <gtest/gtest.h>

namespace hotline::answer {
namespace {

std::unique_ptr<AccountsDb> DemoDb() {
  auto db = AccountsDb::Open(":memory:", true);
  EXPECT_TRUE(db.ok()) << db.status();
  EXPECT_TRUE((*db)->SeedDemo().ok());
  EXPECT_TRUE((*db)->SeedDemo().ok());  // idempotent
  return std::move(db).value();
}

TEST(Caller, IdentifiedOnlyWithCallerIdAndPin) {
  auto db = DemoDb();
  CallerIdentifier id(*db, CallerConfig{});
  CallerSession alice("+15550100");
  EXPECT_FALSE(alice.identified());
  // Bob's PIN does not open Alice's account.
  EXPECT_EQ(id.SubmitPin(alice, "1379").value(), PinOutcome::kWrongPin);
  // Spoken digits (after normalization) and keypad digits both work.
  EXPECT_EQ(id.SubmitPin(alice, "my pin is 4 8 2 1").value(), PinOutcome::kIdentified);
  EXPECT_TRUE(alice.identified());
  EXPECT_EQ(alice.customer_id(), "C1001");

  // A number without an account hears what a wrong PIN hears (no account enumeration).
  CallerSession stranger("+19999999999");
  EXPECT_EQ(id.SubmitPin(stranger, "4821").value(), PinOutcome::kWrongPin);
  EXPECT_FALSE(stranger.identified());
}

TEST(Caller, LocksAfterTooManyWrongPins) {
  auto db = DemoDb();
  CallerIdentifier id(*db, CallerConfig{3});
  CallerSession s("+15550101");
  EXPECT_EQ(id.SubmitPin(s, "0000").value(), PinOutcome::kWrongPin);
  EXPECT_EQ(id.SubmitPin(s, "").value(), PinOutcome::kWrongPin);
  EXPECT_EQ(id.SubmitPin(s, "1111").value(), PinOutcome::kLocked);
  // Even the right PIN is refused now.
  EXPECT_EQ(id.SubmitPin(s, "1379").value(), PinOutcome::kLocked);
  EXPECT_FALSE(s.identified());
}

TEST(Tools, PersonalToolsNeedAnIdentifiedCaller) {
  auto db = DemoDb();
  auto tools = CreateDemoTools(*db);
  ASSERT_TRUE(tools.ok());
  CallerSession anonymous("+15550100");  // right number, no PIN yet
  for (const auto& name : tools->Names()) {
    auto r = tools->Run(name, {}, anonymous);
    EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied) << name;
  }
  EXPECT_EQ(tools->Run("nope", {}, anonymous).status().code(), StatusCode::kNotFound);
}

TEST(Tools, AnswersComeFromTheCallersOwnAccount) {
  auto db = DemoDb();
  auto tools = CreateDemoTools(*db).value();
  CallerIdentifier id(*db, CallerConfig{});
  CallerSession alice("+15550100"), bob("+15550101");
  ASSERT_EQ(id.SubmitPin(alice, "4821").value(), PinOutcome::kIdentified);
  ASSERT_EQ(id.SubmitPin(bob, "1379").value(), PinOutcome::kIdentified);

  auto bill = tools.Run("last_bill", {}, alice).value();
  EXPECT_EQ(bill.text, "Your bill for November 2026 was $42.17.");
  EXPECT_TRUE(bill.personal);
  EXPECT_EQ(tools.Run("last_bill", {{"month", "2026-10"}}, bob).value().text,
            "Your bill for October 2026 was $88.00.");
  EXPECT_EQ(tools.Run("last_bill", {{"month", "2025-01"}}, bob).value().text,
            "I don't see a bill for January 2025 on your account.");

  EXPECT_EQ(tools.Run("order_status", {{"order_number", "a5531"}}, alice).value().text,
            "Your order A5531 is shipped. It should arrive by 2026-12-04.");
  // Alice's order number asked by Bob: not found, as if it did not exist.
  EXPECT_EQ(tools.Run("order_status", {{"order_number", "A5531"}}, bob).value().text,
            "I can't find an order with that number on your account.");
  EXPECT_EQ(tools.Run("refund_status", {}, alice).value().text,
            "Your refund of $19.99 for order A5502 is approved.");
  EXPECT_EQ(tools.Run("refund_status", {}, bob).value().text,
            "I don't see any refunds on your account.");
}

TEST(Tools, Formatting) {
  EXPECT_EQ(FormatDollars(0), "$0.00");
  EXPECT_EQ(FormatDollars(123456), "$1234.56");
  EXPECT_EQ(FormatDollars(-5), "-$0.05");
  EXPECT_EQ(FormatMonth("2026-03"), "March 2026");
  EXPECT_EQ(FormatMonth("2026-13"), "2026-13");
}

TEST(Tools, SpeakMandarinWithYuanAndChineseDates) {
  auto db = DemoDb();
  auto tools = CreateDemoTools(*db, "zh");
  ASSERT_TRUE(tools.ok()) << tools.status();
  CallerIdentifier id(*db, CallerConfig{});
  CallerSession alice("+15550100");
  // The PIN said in Chinese, as NormalizeText leaves it: digits.
  ASSERT_EQ(id.SubmitPin(alice, "4821").value(), PinOutcome::kIdentified);
  auto bill = tools->Run("last_bill", {}, alice);
  ASSERT_TRUE(bill.ok()) << bill.status();
  EXPECT_EQ(bill->text, "您2026年11月的话费是42.17元。");
  EXPECT_EQ(bill->slots.at("amount"), "42.17元");
  auto order = tools->Run("order_status", {}, alice);
  ASSERT_TRUE(order.ok());
  EXPECT_EQ(order->text, "您的订单A5531已发货。预计2026年12月4日前送达。");
  auto refund = tools->Run("refund_status", {}, alice);
  ASSERT_TRUE(refund.ok());
  EXPECT_EQ(refund->text, "您订单A5502的19.99元退款已批准。");
  EXPECT_EQ(CreateDemoTools(*db, "fr").status().code(), StatusCode::kInvalidArgument);
  // Malformed dates and months are passed through, never half-parsed.
  EXPECT_EQ(FormatDateChinese("2026-12-xx"), "2026-12-xx");
  EXPECT_EQ(FormatMonthChinese("2026-13"), "2026-13");
  EXPECT_EQ(FormatYuan(-5), "-0.05元");
  EXPECT_EQ(FormatDollars(4217), "$42.17");
}

}  // namespace
}  // namespace hotline::answer
