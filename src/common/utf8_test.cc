#include "common/utf8.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hotline {
namespace {

TEST(Utf8, FirstInvalidByteIsFound) {
  // Valid multi-byte text passes; overlong, surrogate, out-of-range and cut-short forms do not.
  EXPECT_EQ(FirstInvalidUtf8(""), std::string::npos);
  EXPECT_EQ(FirstInvalidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::string::npos);
  EXPECT_EQ(FirstInvalidUtf8("x\xc0\xaf"), 1u);          // overlong '/'
  EXPECT_EQ(FirstInvalidUtf8("\xed\xa0\x80"), 0u);       // a UTF-16 surrogate
  EXPECT_EQ(FirstInvalidUtf8("ab\xe2\x82"), 2u);         // cut short
  EXPECT_EQ(FirstInvalidUtf8("\xf4\x90\x80\x80"), 0u);   // past U+10FFFF
  EXPECT_EQ(FirstInvalidUtf8("ok\xff"), 2u);             // never a UTF-8 byte
  EXPECT_EQ(FirstInvalidUtf8("\xe2\x28\xa1"), 0u);       // bad continuation byte
}

TEST(Utf8, SequenceLengthAtAnOffset) {
  const std::string s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xff";
  EXPECT_EQ(Utf8SequenceLength(s, 0), 1u);
  EXPECT_EQ(Utf8SequenceLength(s, 1), 2u);
  EXPECT_EQ(Utf8SequenceLength(s, 3), 3u);
  EXPECT_EQ(Utf8SequenceLength(s, 6), 4u);
  EXPECT_EQ(Utf8SequenceLength(s, 10), 0u);  // 0xff
  EXPECT_EQ(Utf8SequenceLength(s, 2), 0u);   // a continuation byte starts nothing
  EXPECT_EQ(Utf8SequenceLength("\xe2\x82", 0), 0u);  // cut short
}

TEST(Utf8, DecodeAndAppendRoundTrip) {
  const std::string s = "a\xc3\xa9\xe8\xaf\x9d\xf0\x9f\x98\x80";  // a é 话 😀
  std::string back;
  std::vector<char32_t> cps;
  for (size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    const size_t n = DecodeUtf8(s, i, &cp);
    ASSERT_GT(n, 0u);
    cps.push_back(cp);
    AppendUtf8(back, cp);
    i += n;
  }
  EXPECT_EQ(cps, (std::vector<char32_t>{U'a', 0xe9, 0x8bdd, 0x1f600}));
  EXPECT_EQ(back, s);
  char32_t cp = 0;
  EXPECT_EQ(DecodeUtf8("\xc0\xaf", 0, &cp), 0u);  // overlong
}

TEST(Utf8, HanCharacters) {
  EXPECT_TRUE(IsHan(0x8bdd));    // 话
  EXPECT_TRUE(IsHan(0x4e00));    // 一
  EXPECT_TRUE(IsHan(0x20000));   // extension B
  EXPECT_FALSE(IsHan(0x3002));   // 。 (punctuation)
  EXPECT_FALSE(IsHan(0xff11));   // fullwidth 1
  EXPECT_FALSE(IsHan(U'a'));
  EXPECT_EQ(CountHan("\xe6\x88\x91\xe6\x83\xb3 PIN 1234\xe3\x80\x82"), 2u);  // 我想 PIN 1234。
  EXPECT_TRUE(ContainsHan("PIN \xe7\xa0\x81 \xff"));                         // 码, a stray byte
  EXPECT_FALSE(ContainsHan("caf\xc3\xa9 \xe3\x80\x82 \xef\xbc\x91"));       // é 。 １
  EXPECT_EQ(CountHan(""), 0u);
}

}  // namespace
}  // namespace hotline
