#include "tts/chinese_speech_text.h"

#include <gtest/gtest.h>

#include "tts/sentence_chunker.h"
#include "tts/text_normalizer.h"

namespace hotline::tts {
namespace {

TEST(ChineseSpeechText, Cardinals) {
  EXPECT_EQ(ChineseCardinal(0), "零");
  EXPECT_EQ(ChineseCardinal(7), "七");
  EXPECT_EQ(ChineseCardinal(10), "十");
  EXPECT_EQ(ChineseCardinal(12), "十二");
  EXPECT_EQ(ChineseCardinal(20), "二十");
  EXPECT_EQ(ChineseCardinal(58), "五十八");
  EXPECT_EQ(ChineseCardinal(105), "一百零五");
  EXPECT_EQ(ChineseCardinal(110), "一百一十");
  EXPECT_EQ(ChineseCardinal(1280), "一千二百八十");
  EXPECT_EQ(ChineseCardinal(2003), "二千零三");
  EXPECT_EQ(ChineseCardinal(10500), "一万零五百");
  EXPECT_EQ(ChineseCardinal(100000), "十万");
  EXPECT_EQ(ChineseCardinal(100000005), "一亿零五");
  EXPECT_EQ(ChineseCardinal(350000000), "三亿五千万");
}

TEST(ChineseSpeechText, DigitsAndPhoneNumbers) {
  EXPECT_EQ(ChineseDigits("1379", false), "一三七九");
  EXPECT_EQ(ChineseDigits("1379", true), "幺三七九");
}

std::string Read(std::string_view s) { return ReadChineseNumbers(s, 6); }

TEST(ChineseSpeechText, NumbersInSentencesAreReadTheChineseWay) {
  EXPECT_EQ(Read("您上月话费为¥58.30。"), "您上月话费为五十八点三零元。");
  EXPECT_EQ(Read("您上月话费为58.30元。"), "您上月话费为五十八点三零元。");
  EXPECT_EQ(Read("请拨打10086"), "请拨打幺零零八六");
  EXPECT_EQ(Read("您的手机号是13812345678"), "您的手机号是幺三八幺二三四五六七八");
  EXPECT_EQ(Read("尾号4821的账户"), "尾号四八二一的账户");
  EXPECT_EQ(Read("2026年12月5日"), "二零二六年十二月五日");
  EXPECT_EQ(Read("账单日是2026-12-05"), "账单日是二零二六年十二月五日");
  EXPECT_EQ(Read("营业时间9:00到21:30"), "营业时间九点到二十一点三十分");
  EXPECT_EQ(Read("10:05"), "十点零五分");
  EXPECT_EQ(Read("优惠5%"), "优惠百分之五");
  EXPECT_EQ(Read("流量用了12.5％"), "流量用了百分之十二点五");
  EXPECT_EQ(Read("套餐每月1,280分钟"), "套餐每月一千二百八十分钟");
  EXPECT_EQ(Read("三天内到账"), "三天内到账");
}

TEST(ChineseSpeechText, TextNormalizerReadsChineseAnswersAndKeepsTheirPunctuation) {
  TextNormalizer n;
  EXPECT_EQ(n.Normalize("**您好！**您2026年11月的话费是58.30元。"),
            "您好！您二零二六年十一月的话费是五十八点三零元。");
  // English stays on the English rules.
  EXPECT_EQ(n.Normalize("Your bill was $58.30."), "Your bill was fifty-eight dollars and thirty cents.");
}

TEST(ChineseSpeechText, AnswersAreChunkedAtChinesePunctuation) {
  TextNormalizer n;
  SentenceChunker chunker;
  std::vector<std::string> chunks =
      chunker.Push(n.Normalize("您好，您11月的话费是58.30元。还有什么可以帮您？"));
  for (std::string& c : chunker.Flush()) chunks.push_back(std::move(c));
  // "您好，" is too short a first phrase (two syllables); the first sentence goes out whole.
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0], "您好，您十一月的话费是五十八点三零元。");
  EXPECT_EQ(chunks[1], "还有什么可以帮您？");
}

}  // namespace
}  // namespace hotline::tts
