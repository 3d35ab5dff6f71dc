#include "answer/understand/normalize.h"

#include <gtest/gtest.h>

namespace hotline::answer {
namespace {

TEST(Normalize, CasePunctuationAndSpaces) {
  EXPECT_EQ(NormalizeText("  Where is MY card?!  "), "where is my card");
  EXPECT_EQ(NormalizeText("top-up failed; why?"), "top up failed why");
  EXPECT_EQ(NormalizeText(""), "");
  EXPECT_EQ(NormalizeText("?!..."), "");
}

TEST(Normalize, ContractionsWithAndWithoutApostrophe) {
  EXPECT_EQ(NormalizeText("I can't log in"), "i can not log in");
  EXPECT_EQ(NormalizeText("i cant log in"), "i can not log in");
  EXPECT_EQ(NormalizeText("It doesn't work, I've tried"), "it does not work i have tried");
  EXPECT_EQ(NormalizeText("what's my balance"), "what is my balance");
  EXPECT_EQ(NormalizeText("I won\xE2\x80\x99t pay"), "i will not pay");  // typographic apostrophe
  EXPECT_EQ(NormalizeText("my card's limit"), "my card limit");
  EXPECT_EQ(NormalizeText("they're late"), "they are late");
}

TEST(Normalize, FillerWordsDropped) {
  EXPECT_EQ(NormalizeText("um I uh want to er check hmm my balance"), "i want to check my balance");
}

TEST(Normalize, SpokenNumbersBecomeDigits) {
  EXPECT_EQ(NormalizeText("twenty five dollars"), "25 dollars");
  EXPECT_EQ(NormalizeText("one hundred and ten euros"), "110 euros");
  EXPECT_EQ(NormalizeText("two thousand three hundred"), "2300");
  EXPECT_EQ(NormalizeText("five thousand"), "5000");
  EXPECT_EQ(NormalizeText("i have two cards"), "i have 2 cards");
  EXPECT_EQ(NormalizeText("5 hundred"), "500");
}

TEST(Normalize, SpokenDigitRunsJoin) {
  EXPECT_EQ(NormalizeText("my pin is one two three four"), "my pin is 1234");
  EXPECT_EQ(NormalizeText("call one oh five"), "call 105");
}

TEST(Normalize, NumbersCurrencyAndEmail) {
  EXPECT_EQ(NormalizeText("I paid $1,250.50 yesterday"), "i paid 1250.50 dollars yesterday");
  EXPECT_EQ(NormalizeText("\xC2\xA3" "20 fee"), "20 pounds fee");
  EXPECT_EQ(NormalizeText("\xE2\x82\xAC" "5"), "5 euros");
  EXPECT_EQ(NormalizeText("rate 3%"), "rate 3 percent");
  EXPECT_EQ(NormalizeText("Mail John.Doe@Example.com."), "mail john.doe@example.com");
}

TEST(Normalize, Utf8KeptAndIdempotent) {
  std::string s = NormalizeText("Caf\xC3\xA9 card");
  EXPECT_EQ(s, "caf\xC3\xA9 card");
  for (const char* t : {"I can't find my card!!", "twenty five dollars", "um hello there"}) {
    std::string once = NormalizeText(t);
    EXPECT_EQ(NormalizeText(once), once) << t;
  }
}

TEST(Normalize, LongInputIsBounded) {
  std::string big(kMaxNormalizeInputBytes * 4, 'a');
  EXPECT_LE(NormalizeText(big).size(), kMaxNormalizeInputBytes);
}

TEST(Normalize, SplitWords) {
  auto w = SplitWords("a bb ccc");
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[2], "ccc");
  EXPECT_TRUE(SplitWords("").empty());
}

}  // namespace
}  // namespace hotline::answer
