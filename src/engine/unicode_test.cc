#include "engine/unicode.h"

#include <gtest/gtest.h>

#include <string>

namespace hotline::engine {
namespace {

TEST(Unicode, CategoriesOfKnownCodePoints) {
  EXPECT_EQ(CategoryOf('a'), UnicodeCategory::kLetter);
  EXPECT_EQ(CategoryOf(0x00C4), UnicodeCategory::kLetter);   // Ä
  EXPECT_EQ(CategoryOf(0x6211), UnicodeCategory::kLetter);   // 我
  EXPECT_EQ(CategoryOf(0x17D2), UnicodeCategory::kMark);     // Khmer coeng
  EXPECT_EQ(CategoryOf('7'), UnicodeCategory::kNumber);
  EXPECT_EQ(CategoryOf(0x00BD), UnicodeCategory::kNumber);   // ½
  EXPECT_EQ(CategoryOf(0x0663), UnicodeCategory::kNumber);   // Arabic-Indic three
  EXPECT_EQ(CategoryOf('!'), UnicodeCategory::kPunctuation);
  EXPECT_EQ(CategoryOf(0x20AC), UnicodeCategory::kSymbol);   // €
  EXPECT_EQ(CategoryOf(0x1F999), UnicodeCategory::kSymbol);  // 🦙
  EXPECT_EQ(CategoryOf(' '), UnicodeCategory::kSeparator);
  EXPECT_EQ(CategoryOf(0x200D), UnicodeCategory::kOther);    // zero-width joiner (Cf)
  EXPECT_EQ(CategoryOf(0x10FFFF), UnicodeCategory::kOther);
  EXPECT_EQ(CategoryOf(0x110000), UnicodeCategory::kOther);
}

TEST(Unicode, WhitespaceIsTheWhiteSpaceProperty) {
  for (char32_t cp : {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x200A,
                      0x2028, 0x2029, 0x202F, 0x205F, 0x3000}) {
    EXPECT_TRUE(IsWhitespace(cp)) << std::hex << static_cast<uint32_t>(cp);
  }
  for (char32_t cp : {0x08, 0x1C, 0x1F, 0x21, 0x200B, 0x200D, 0xFEFF, 0x180E}) {
    EXPECT_FALSE(IsWhitespace(cp)) << std::hex << static_cast<uint32_t>(cp);
  }
}

TEST(Unicode, DecodesValidUtf8) {
  const std::string s = "a\u00e9\u20ac\U0001F999";
  size_t pos = 0;
  EXPECT_EQ(DecodeUtf8(s, &pos), U'a');
  EXPECT_EQ(DecodeUtf8(s, &pos), U'\u00e9');
  EXPECT_EQ(DecodeUtf8(s, &pos), U'\u20ac');
  EXPECT_EQ(DecodeUtf8(s, &pos), U'\U0001F999');
  EXPECT_EQ(pos, s.size());
}

TEST(Unicode, MalformedBytesDecodeAsReplacementOneByteAtATime) {
  for (const std::string bad : {"\x80", "\xC3", "\xE2\x82", "\xC0\xAF" /* overlong */,
                                "\xED\xA0\x80" /* surrogate */, "\xF4\x90\x80\x80" /* >10FFFF */,
                                "\xFF", "\xC3(" /* bad continuation */}) {
    size_t pos = 0;
    EXPECT_EQ(DecodeUtf8(bad, &pos), kReplacementChar);
    EXPECT_EQ(pos, 1u);
  }
}

TEST(Unicode, CompleteUtf8PrefixHoldsOnlyUnfinishedCharacters) {
  EXPECT_EQ(CompleteUtf8Prefix(""), 0u);
  EXPECT_EQ(CompleteUtf8Prefix("abc"), 3u);
  EXPECT_EQ(CompleteUtf8Prefix("a\xF0\x9F\xA6"), 1u);       // 🦙 missing its last byte
  EXPECT_EQ(CompleteUtf8Prefix("a\xF0"), 1u);
  EXPECT_EQ(CompleteUtf8Prefix("a\xF0\x9F\xA6\x99"), 5u);
  EXPECT_EQ(CompleteUtf8Prefix("a\xFF"), 2u);               // never valid: emit (as U+FFFD)
  EXPECT_EQ(CompleteUtf8Prefix("a\x80\x80\x80\x80"), 5u);   // stray continuations
}

TEST(Unicode, SanitizeReplacesOnlyMalformedBytes) {
  EXPECT_EQ(SanitizeUtf8("plain \u00e9\U0001F999"), "plain \u00e9\U0001F999");
  EXPECT_EQ(SanitizeUtf8("a\xFF" "b"), "a\uFFFDb");
  EXPECT_EQ(SanitizeUtf8("\xE2\x82"), "\uFFFD\uFFFD");
}

TEST(Unicode, AppendUtf8RoundTrips) {
  for (char32_t cp : {0x0u, 0x7Fu, 0x80u, 0x7FFu, 0x800u, 0xFFFFu, 0x10000u, 0x10FFFFu}) {
    std::string s;
    AppendUtf8(cp, &s);
    size_t pos = 0;
    EXPECT_EQ(DecodeUtf8(s, &pos), cp);
    EXPECT_EQ(pos, s.size());
  }
  std::string s;
  AppendUtf8(0xD800, &s);
  EXPECT_EQ(s, "\uFFFD");
}

}  // namespace
}  // namespace hotline::engine
