#include "tts/text_normalizer.h"

#include <gtest/gtest.h>

#include "tts/number_words.h"

namespace hotline::tts {
namespace {

std::string N(std::string_view text, TextNormalizerConfig cfg = {}) {
  return TextNormalizer(cfg).Normalize(text);
}

TEST(NumberWords, CardinalsOrdinalsYears) {
  EXPECT_EQ(CardinalWords(0), "zero");
  EXPECT_EQ(CardinalWords(15), "fifteen");
  EXPECT_EQ(CardinalWords(40), "forty");
  EXPECT_EQ(CardinalWords(1234), "one thousand two hundred thirty-four");
  EXPECT_EQ(CardinalWords(1000001), "one million one");
  EXPECT_EQ(CardinalWords(18446744073709551615ull).substr(0, 19), "eighteen quintillio");
  EXPECT_EQ(OrdinalWords(1), "first");
  EXPECT_EQ(OrdinalWords(12), "twelfth");
  EXPECT_EQ(OrdinalWords(22), "twenty-second");
  EXPECT_EQ(OrdinalWords(30), "thirtieth");
  EXPECT_EQ(OrdinalWords(100), "one hundredth");
  EXPECT_EQ(YearWords(1999), "nineteen ninety-nine");
  EXPECT_EQ(YearWords(2005), "two thousand five");
  EXPECT_EQ(YearWords(2024), "twenty twenty-four");
  EXPECT_EQ(YearWords(1900), "nineteen hundred");
  EXPECT_EQ(YearWords(1905), "nineteen oh five");
  EXPECT_EQ(DecimalWords("3.05"), "three point zero five");
  EXPECT_EQ(DecimalWords("1,2345"), "");
  EXPECT_FALSE(ParseGroupedInteger("99999999999999999999").has_value());
  EXPECT_EQ(MoneyWords("0", "99", "dollar", "dollars", "cent", "cents"), "ninety-nine cents");
  EXPECT_EQ(MoneyWords("1", "", "dollar", "dollars", "cent", "cents"), "one dollar");
  EXPECT_EQ(MoneyWords("2", "5", "dollar", "dollars", "cent", "cents"), "two dollars and fifty cents");
}

TEST(TextNormalizer, Currency) {
  EXPECT_EQ(N("That costs $12.50."), "That costs twelve dollars and fifty cents.");
  EXPECT_EQ(N("Only $1!"), "Only one dollar!");
  EXPECT_EQ(N("A fee of $0.99 applies"), "A fee of ninety-nine cents applies");
  EXPECT_EQ(N("Refund: $1,250.00"), "Refund: one thousand two hundred fifty dollars");
  EXPECT_EQ(N("It was €5 or £3.20"), "It was five euros or three pounds and twenty pence");
  EXPECT_EQ(N("We raised $2.5 million."), "We raised two point five million dollars.");
  EXPECT_EQ(N("a balance of -$40"), "a balance of minus forty dollars");
  EXPECT_EQ(N("pay 30 USD now"), "pay thirty dollars now");
}

TEST(TextNormalizer, NumbersPercentagesOrdinals) {
  EXPECT_EQ(N("About 3.5 days"), "About three point five days");
  EXPECT_EQ(N("We have 1,234 stores"), "We have one thousand two hundred thirty-four stores");
  EXPECT_EQ(N("Save 15% today"), "Save fifteen percent today");
  EXPECT_EQ(N("up 2.5%"), "up two point five percent");
  EXPECT_EQ(N("the 21st and the 3rd"), "the twenty-first and the third");
  EXPECT_EQ(N("It is -5 outside"), "It is minus five outside");
  EXPECT_EQ(N("Allow 5-10 days"), "Allow five to ten days");
  EXPECT_EQ(N("Open 24/7"), "Open twenty-four seven");
  EXPECT_EQ(N("1/2 price"), "one half price");
  EXPECT_EQ(N("a 5GB plan, 2x faster"), "a five gigabytes plan, two times faster");
}

TEST(TextNormalizer, DatesAndTimes) {
  EXPECT_EQ(N("Due 03/05/2024."), "Due March fifth, twenty twenty-four.");
  EXPECT_EQ(N("on 2024-12-01"), "on December first, twenty twenty-four");
  EXPECT_EQ(N("on March 5th, 2024"), "on March fifth, twenty twenty-four");
  EXPECT_EQ(N("by Jan. 3"), "by January third");
  EXPECT_EQ(N("since 1999"), "since nineteen ninety-nine");
  EXPECT_EQ(N("We open at 9:30 am"), "We open at nine thirty a m");
  EXPECT_EQ(N("until 5:05PM."), "until five oh five p m.");
  EXPECT_EQ(N("at 10:00"), "at ten o'clock");
  EXPECT_EQ(N("from 9am to 5 p.m."), "from nine a m to five p m.");
  EXPECT_EQ(N("at 17:45"), "at seventeen forty-five");
  EXPECT_EQ(N("invalid 13/45/2024 stays"),
            "invalid thirteen slash forty-five slash two thousand twenty-four stays")
      << "not a date: read as numbers rather than guessed";
}

TEST(TextNormalizer, IdentifiersDigitByDigit) {
  EXPECT_EQ(N("Your order #A12345 shipped."), "Your order number A one two three four five shipped.");
  EXPECT_EQ(N("order 123456"), "order one two three four five six");
  EXPECT_EQ(N("account 4821 is active"), "account four eight two one is active");
  EXPECT_EQ(N("ticket #7781"), "ticket number seven seven eight one");
  EXPECT_EQ(N("tracking 1Z999AA10123456784"),
            "tracking one Z nine nine nine A A one zero one two three four five six seven eight four");
  EXPECT_EQ(N("code 0042"), "code zero zero four two");
  EXPECT_EQ(N("ref AB-1234"), "ref A B one two three four");
  EXPECT_EQ(N("Call 555-123-4567"), "Call five five five, one two three, four five six seven");
  EXPECT_EQ(N("Call (800) 555-0199."), "Call eight zero zero, five five five, zero one nine nine.");
  EXPECT_EQ(N("We have 25 agents"), "We have twenty-five agents");
  EXPECT_EQ(N("Item No. 42"), "Item number four two");
}

TEST(TextNormalizer, Abbreviations) {
  EXPECT_EQ(N("Dr. Smith will call."), "Doctor Smith will call.");
  EXPECT_EQ(N("St. Louis office"), "Saint Louis office");
  EXPECT_EQ(N("We are on Main St. downtown"), "We are on Main Street downtown");
  EXPECT_EQ(N("at 5th St."), "at fifth Street.");
  EXPECT_EQ(N("Mr. Jones said approx. 5 days"), "Mister Jones said approximately five days");
  EXPECT_EQ(N("Bring ID, bills, etc. Then wait."), "Bring ID, bills, et cetera. Then wait.");
  EXPECT_EQ(N("fruit, e.g. apples"), "fruit, for example apples");
  EXPECT_EQ(N("Tom & Jerry"), "Tom and Jerry");
}

TEST(TextNormalizer, MarkdownUrlsEmojiPlaceholders) {
  EXPECT_EQ(N("Your order {{Order Number}} has shipped."), "Your order has shipped.");
  TextNormalizerConfig cfg;
  cfg.placeholder_text = "the number on your receipt";
  EXPECT_EQ(N("Quote {{Order Number}}.", cfg), "Quote the number on your receipt.");
  EXPECT_EQ(N("This is **very** _important_ and `code`."), "This is very important and code.");
  EXPECT_EQ(N("## Steps\n1. Open the app\n2. Tap **Orders**\n- Done"),
            "Steps. Open the app. Tap Orders. Done.");
  EXPECT_EQ(N("See [our policy](https://example.com/policy) now."), "See our policy now.");
  EXPECT_EQ(N("Visit https://example.com/help?x=1 or www.example.com."), "Visit or.");
  EXPECT_EQ(N("Mail anna.b@example.com today"), "Mail anna dot b at example dot com today");
  cfg.speak_emails = false;
  EXPECT_EQ(N("Mail anna@example.com today", cfg), "Mail today");
  EXPECT_EQ(N("Thanks! \xF0\x9F\x98\x8A\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD Bye \xE2\x9C\x85"), "Thanks! Bye");
  EXPECT_EQ(N("\xE2\x80\x9CQuoted\xE2\x80\x9D \xE2\x80\x94 done\xE2\x80\xA6"), "\"Quoted\", done...");
  EXPECT_EQ(N("| Plan | Price |\n|---|---|\n| Basic | $5 |"), "Plan, Price. Basic, five dollars.");
  EXPECT_EQ(N("> quoted line\n---\nnext"), "quoted line. next");
  EXPECT_EQ(N("snake_case stays"), "snake case stays");
}

TEST(TextNormalizer, HostileInputNeverCrashes) {
  EXPECT_EQ(N(""), "");
  EXPECT_EQ(N("   \n\n  "), "");
  EXPECT_EQ(N("\xff\xfe\xc3"), "");
  EXPECT_EQ(N("{{unterminated placeholder"), "{{unterminated placeholder");
  std::string big(20000, '9');
  EXPECT_FALSE(N(big).empty());
  std::string junk;
  for (int i = 0; i < 5000; ++i) junk += static_cast<char>((i * 7919) % 256);
  (void)N(junk);  // any output, no crash (sanitizer build checks memory)
  EXPECT_EQ(N("$"), "$");
  EXPECT_EQ(N("#"), "#");
  EXPECT_EQ(N("99:99 1/0 0/0 $1.2.3"), "99:99 one over zero zero over zero $1.2.3");
  EXPECT_EQ(N("18446744073709551616"), DigitWords("18446744073709551616"));
}

TEST(TextNormalizerConfig, Validate) {
  TextNormalizerConfig cfg;
  EXPECT_TRUE(cfg.Validate().ok());
  cfg.digit_by_digit_min_digits = 1;
  EXPECT_FALSE(cfg.Validate().ok());
}

}  // namespace
}  // namespace hotline::tts
