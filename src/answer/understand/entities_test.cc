#include "answer/understand/entities.h"

#include <gtest/gtest.h>

#include "answer/understand/normalize.h"

namespace hotline::answer {
namespace {

std::vector<Entity> Of(const char* text) { return ExtractEntities(NormalizeText(text)); }

const Entity* Find(const std::vector<Entity>& es, EntityType t) {
  for (const Entity& e : es) {
    if (e.type == t) return &e;
  }
  return nullptr;
}

TEST(Entities, Months) {
  auto es = Of("What was my bill in March?");
  const Entity* m = Find(es, EntityType::kMonth);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->value, "03");
  EXPECT_EQ(Find(Of("my bill for last month"), EntityType::kMonth)->value, "last_month");
  // "may" is a month only where a month fits.
  EXPECT_EQ(Find(Of("may I ask something"), EntityType::kMonth), nullptr);
  EXPECT_EQ(Find(Of("the charge in may"), EntityType::kMonth)->value, "05");
}

TEST(Entities, ChineseMonthsAndDates) {
  EXPECT_EQ(Find(Of("我想查询上月话费账单"), EntityType::kMonth)->value, "last_month");
  EXPECT_EQ(Find(Of("上个月的话费"), EntityType::kMonth)->value, "last_month");
  EXPECT_EQ(Find(Of("这个月的账单"), EntityType::kMonth)->value, "this_month");
  EXPECT_EQ(Find(Of("本月流量"), EntityType::kMonth)->value, "this_month");
  EXPECT_EQ(Find(Of("那十月份呢"), EntityType::kMonth)->value, "10");
  EXPECT_EQ(Find(Of("十一月的话费"), EntityType::kMonth)->value, "11");
  EXPECT_EQ(Find(Of("12月5日扣的费"), EntityType::kDate)->value, "12-05");
  EXPECT_EQ(Find(Of("三月的账单"), EntityType::kMonth)->value, "03");
  EXPECT_EQ(Find(Of("三个月"), EntityType::kMonth), nullptr);  // a duration, not a month
}

TEST(Entities, Dates) {
  EXPECT_EQ(Find(Of("on March 3rd"), EntityType::kDate)->value, "03-03");
  EXPECT_EQ(Find(Of("on the third of march"), EntityType::kDate)->value, "03-03");
  EXPECT_EQ(Find(Of("on 12 march"), EntityType::kDate)->value, "03-12");
  EXPECT_EQ(Find(Of("march twenty first 2024"), EntityType::kDate)->value, "2024-03-21");
  EXPECT_EQ(Find(Of("since 2024-03-12"), EntityType::kDate)->value, "2024-03-12");
  EXPECT_EQ(Find(Of("paid yesterday"), EntityType::kDate)->value, "yesterday");
}

TEST(Entities, Amounts) {
  auto es = Of("I was charged $25 twice");
  const Entity* a = Find(es, EntityType::kAmount);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->value, "25.00");
  EXPECT_EQ(a->unit, "USD");
  EXPECT_EQ(Find(Of("send twenty five euros"), EntityType::kAmount)->value, "25.00");
  EXPECT_EQ(Find(Of("send twenty five euros"), EntityType::kAmount)->unit, "EUR");
  EXPECT_EQ(Find(Of("a fee of 3.5 pounds"), EntityType::kAmount)->value, "3.50");
}

TEST(Entities, OrderAndAccountNumbers) {
  EXPECT_EQ(Find(Of("where is order number A5531"), EntityType::kOrderNumber)->value, "a5531");
  EXPECT_EQ(Find(Of("my order is 778812"), EntityType::kOrderNumber)->value, "778812");
  EXPECT_EQ(Find(Of("account ending in 4421"), EntityType::kAccountNumber)->value, "4421");
  EXPECT_EQ(Find(Of("my account abc123"), EntityType::kAccountNumber), nullptr);
  EXPECT_EQ(Find(Of("order 12"), EntityType::kOrderNumber), nullptr);  // too short
}

TEST(Entities, PlainNumbersAndNames) {
  auto es = Of("I have 2 cards");
  ASSERT_EQ(es.size(), 1u);
  EXPECT_EQ(es[0].type, EntityType::kNumber);
  EXPECT_EQ(es[0].value, "2");
  EXPECT_EQ(EntityTypeName(EntityType::kOrderNumber), "order_number");
  EXPECT_TRUE(Of("").empty());
}

}  // namespace
}  // namespace hotline::answer
