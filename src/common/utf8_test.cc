#include "common/utf8.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace hotline
