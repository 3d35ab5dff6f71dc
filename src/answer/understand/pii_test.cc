#include "answer/understand/pii.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "answer/understand/normalize.h"

namespace hotline::answer {
namespace {

TEST(Pii, LuhnCheck) {
  EXPECT_TRUE(LuhnValid("4111111111111111"));
  EXPECT_TRUE(LuhnValid("4111 1111 1111 1111"));
  EXPECT_FALSE(LuhnValid("4111111111111112"));
  EXPECT_FALSE(LuhnValid("7"));
}

TEST(Pii, CardNumbers) {
  PiiCounts c;
  EXPECT_EQ(RedactPii("my card 4111 1111 1111 1111 was lost", &c), "my card <card> was lost");
  EXPECT_EQ(c.cards, 1);
  EXPECT_EQ(RedactPii("card 4111-1111-1111-1111."), "card <card>.");
  EXPECT_EQ(RedactPii("5500005555555559"), "<card>");
  // Fails Luhn: still a long digit string.
  EXPECT_EQ(RedactPii("ref 4111111111111112", &c), "ref <number>");
  EXPECT_EQ(c.numbers, 1);
}

TEST(Pii, PhoneNumbers) {
  EXPECT_EQ(RedactPii("call me on +44 20 7946 0958 please"), "call me on <phone> please");
  EXPECT_EQ(RedactPii("(555) 123-4567"), "<phone>");
  EXPECT_EQ(RedactPii("at 555.123.4567"), "at <phone>");
  EXPECT_EQ(RedactPii("or 555-1234"), "or <phone>");
}

TEST(Pii, EmailAddresses) {
  PiiCounts c;
  EXPECT_EQ(RedactPii("write to jane.doe+bank@mail.example.co.uk now", &c), "write to <email> now");
  EXPECT_EQ(c.emails, 1);
  EXPECT_EQ(RedactPii("a@b is not an address"), "a@b is not an address");
}

TEST(Pii, PinsAndLongDigits) {
  EXPECT_EQ(RedactPii("my PIN is 1234"), "my PIN is <pin>");
  EXPECT_EQ(RedactPii("pin: 98765"), "pin: <pin>");
  EXPECT_EQ(RedactPii("security code 123"), "security code <pin>");
  EXPECT_EQ(RedactPii("account 12345678"), "account <number>");
  EXPECT_EQ(RedactPii("order a1234567"), "order a<number>");
}

TEST(Pii, SpokenPinDigits) {
  PiiCounts c;
  EXPECT_EQ(RedactPii("my pin is one two three four", &c), "my pin is <pin>");
  EXPECT_EQ(c.pins, 1);
  EXPECT_EQ(RedactPii("Four eight two one."), "<pin>.");
  EXPECT_EQ(RedactPii("four, eight, two, one. Again: 4 8 2 1"), "<pin>. Again: <pin>");
  EXPECT_EQ(RedactPii("it's nine oh double five"), "it's <pin>");
  EXPECT_EQ(RedactPii("PIN: one two three"), "PIN: <pin>");
  EXPECT_EQ(RedactPii("account one two three four five six seven eight nine", &c), "account <number>");
  EXPECT_EQ(c.numbers, 1);
  // Ordinary number words stay.
  EXPECT_EQ(RedactPii("I have one card and two accounts"), "I have one card and two accounts");
  EXPECT_EQ(RedactPii("one two three"), "one two three");
  EXPECT_EQ(RedactPii("oh no, one more thing"), "oh no, one more thing");
  EXPECT_EQ(RedactPii("someone two threes"), "someone two threes");
  EXPECT_EQ(RedactPii("on march 3 4 2024"), "on march 3 4 2024");
}

TEST(Pii, LoggedTurnsCarryNoSpokenPin) {
  const Redactor redact = MakePiiLogRedactor();
  const std::string line = redact("turn heard: \"yes my pin is four eight two one\"");
  EXPECT_EQ(line.find("four eight"), std::string::npos) << line;
  EXPECT_NE(line.find("<pin>"), std::string::npos);
}

TEST(Pii, OrdinaryNumbersKept) {
  EXPECT_EQ(RedactPii("I paid 250.75 dollars on march 12 2024"),
            "I paid 250.75 dollars on march 12 2024");
  EXPECT_EQ(RedactPii("2 cards and 3 accounts"), "2 cards and 3 accounts");
  EXPECT_EQ(RedactPii("call at 10 or 11"), "call at 10 or 11");
}

TEST(Pii, SpokenDigitsCaughtAfterNormalization) {
  std::string n = NormalizeText("my pin is one two three four");
  EXPECT_EQ(RedactPii(n), "my pin is <pin>");
  n = NormalizeText("card four one one one one one one one one one one one one one one one");
  EXPECT_EQ(RedactPii(n), "card <card>");
}

TEST(Pii, ChineseDigitsAndPinKeywordsAreRedacted) {
  EXPECT_EQ(RedactPii("我的密码是四八二一"), "我的密码是<pin>");
  EXPECT_EQ(RedactPii("密码是4821"), "密码是<pin>");
  EXPECT_EQ(RedactPii("验证码：123"), "验证码：<pin>");
  EXPECT_EQ(RedactPii("我的手机号是幺三八幺二三四五六七八"), "我的手机号是<number>");
  EXPECT_EQ(RedactPii("密码幺二三"), "密码<pin>");
  // Quantities with units, and lone numerals, stay.
  EXPECT_EQ(RedactPii("十一月的话费是五十八元"), "十一月的话费是五十八元");
  EXPECT_EQ(RedactPii("三个月前办的"), "三个月前办的");
}

TEST(Pii, IdempotentAndBounded) {
  std::string once = RedactPii("pin 1234 card 4111111111111111 mail a.b@c.org");
  EXPECT_EQ(RedactPii(once), once);
  std::string big(200000, '7');
  EXPECT_LE(RedactPii(big).size(), 70000u);
}

TEST(Pii, LogRedactorHidesCardNumbers) {
  std::vector<std::string> lines;
  SetLogSinkForTest([&](std::string_view l) { lines.emplace_back(l); });
  SetLogRedactor(MakePiiLogRedactor());
  HLOG_WARN("caller gave card {} and pin {}", "4111 1111 1111 1111", "pin 4321");
  SetLogRedactor(nullptr);
  SetLogSinkForTest(nullptr);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().find("4111"), std::string::npos) << lines.back();
  EXPECT_EQ(lines.back().find("4321"), std::string::npos) << lines.back();
  EXPECT_NE(lines.back().find("<card>"), std::string::npos) << lines.back();
}

}  // namespace
}  // namespace hotline::answer
