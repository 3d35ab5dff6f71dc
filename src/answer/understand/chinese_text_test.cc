#include "answer/understand/chinese_text.h"

#include <gtest/gtest.h>

#include "answer/understand/normalize.h"

namespace hotline::answer {
namespace {

TEST(ChineseText, CardinalsAreRead) {
  EXPECT_EQ(ParseChineseCardinal(U"五十八"), 58);
  EXPECT_EQ(ParseChineseCardinal(U"十二"), 12);
  EXPECT_EQ(ParseChineseCardinal(U"十"), 10);
  EXPECT_EQ(ParseChineseCardinal(U"一百零五"), 105);
  EXPECT_EQ(ParseChineseCardinal(U"两千零三"), 2003);
  EXPECT_EQ(ParseChineseCardinal(U"一万零五百"), 10500);
  EXPECT_EQ(ParseChineseCardinal(U"三百五"), 350);
  EXPECT_EQ(ParseChineseCardinal(U"一万五"), 15000);
  EXPECT_EQ(ParseChineseCardinal(U"三亿五千万"), 350000000);
  EXPECT_EQ(ParseChineseCardinal(U"十二万三千四百五十六"), 123456);
}

TEST(ChineseText, MalformedCardinalsAreRefused) {
  EXPECT_FALSE(ParseChineseCardinal(U"").has_value());
  EXPECT_FALSE(ParseChineseCardinal(U"十百").has_value());    // units out of order
  EXPECT_FALSE(ParseChineseCardinal(U"五八十").has_value());  // two digits, one unit
  EXPECT_FALSE(ParseChineseCardinal(U"万一").has_value());    // a unit without its digit
  EXPECT_FALSE(ParseChineseCardinal(U"一万二万").has_value());
}

TEST(ChineseText, DigitRunsBecomeDigitStrings) {
  EXPECT_EQ(FoldChineseText("我的密码是一二三四"), "我 的 密 码 是 1234");
  EXPECT_EQ(FoldChineseText("幺三七九"), "1379");
  EXPECT_EQ(FoldChineseText("尾号零零八"), "尾 号 008");
}

TEST(ChineseText, CardinalsBecomeNumbersAndLoneNumeralsStayWords) {
  EXPECT_EQ(FoldChineseText("十一月的账单"), "11 月 的 账 单");
  EXPECT_EQ(FoldChineseText("充值五十元"), "充 值 50 元");
  EXPECT_EQ(FoldChineseText("三个月"), "三 个 月");
  EXPECT_EQ(FoldChineseText("万一停机"), "万 一 停 机");
}

TEST(ChineseText, FullWidthFormsAndPunctuationFold) {
  EXPECT_EQ(FoldChineseText("ＰＩＮ码：１２３４。"), "PIN 码 :1234");
  EXPECT_EQ(FoldChineseText("你好，我想查话费？"), "你 好 , 我 想 查 话 费 ?");
  EXPECT_EQ(FoldChineseText("“流量”包…"), "流 量 包");
}

TEST(ChineseText, EnglishPassesThroughByteForByte) {
  for (const char* s : {"How can I cancel my order?", "it\xe2\x80\x99s \xe2\x80\x9c" "fine\xe2\x80\x9d",
                        "caf\xc3\xa9 \xe2\x82\xac" "5", "bad \xff byte"}) {
    EXPECT_EQ(FoldChineseText(s), s) << s;
  }
}

TEST(ChineseText, NormalizeTextSplitsChineseIntoWords) {
  EXPECT_EQ(NormalizeText("我想查询上月话费账单"), "我 想 查 询 上 月 话 费 账 单");
  // A spoken PIN in Chinese reaches the digits PIN verification reads.
  EXPECT_EQ(NormalizeText("密码是幺三七九"), "密 码 是 1379");
  EXPECT_EQ(NormalizeText("我的PIN是１３７９！"), "我 的 pin 是 1379");
}

}  // namespace
}  // namespace hotline::answer
