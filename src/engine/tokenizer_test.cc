#include "engine/tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "engine/tokenizer_test_util.h"

namespace hotline::engine {
namespace {

using testing::Build;
using testing::BpeData;
using testing::LoadShared;
using testing::SpmData;
using Ids = std::vector<TokenId>;

constexpr TokenId kFirstPiece = 259;  // after <unk>, <s>, </s> and 256 byte tokens
EncodeOptions NoBos() { return {.add_special = false, .parse_special = false}; }

TEST(SpmTokenizer, MergesByScoreWithDummyPrefix) {
  // "▁ab" is not a token; "▁a"+"b" vs "▁"+"ab" is decided by which pair scores higher.
  auto t1 = Build(SpmData({{"\u2581"}, {"a"}, {"b"}, {"\u2581a", -1}, {"ab", -2}}));
  ASSERT_NE(t1, nullptr);
  EXPECT_EQ(t1->Encode("ab", NoBos()), (Ids{kFirstPiece + 3, kFirstPiece + 2}));
  auto t2 = Build(SpmData({{"\u2581"}, {"a"}, {"b"}, {"\u2581a", -2}, {"ab", -1}}));
  ASSERT_NE(t2, nullptr);
  EXPECT_EQ(t2->Encode("ab", NoBos()), (Ids{kFirstPiece, kFirstPiece + 4}));
  // Spaces inside the text become ▁ too.
  EXPECT_EQ(t1->Encode("a a", NoBos()), (Ids{kFirstPiece + 3, kFirstPiece + 3}));
}

TEST(SpmTokenizer, ByteFallbackForUnknownCharacters) {
  auto t = Build(SpmData({{"\u2581"}, {"a"}, {"\u2581a", -1}}));
  ASSERT_NE(t, nullptr);
  // é = C3 A9 has no piece: two byte tokens (3 + byte value).
  EXPECT_EQ(t->Encode("a\u00e9", NoBos()), (Ids{kFirstPiece + 2, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(t->Decode(t->Encode("a\u00e9", NoBos())), "a\u00e9");
}

TEST(SpmTokenizer, UnknownTokenWithoutByteFallback) {
  auto t = Build(SpmData({{"\u2581"}, {"a"}, {"\u2581a", -1}}, /*byte_tokens=*/false));
  ASSERT_NE(t, nullptr);
  // Without byte tokens the ids start right after </s>.
  EXPECT_EQ(t->Encode("a\u00e9a", NoBos()), (Ids{5, 0, 4}));
}

TEST(SpmTokenizer, BosEosAndConfigOverride) {
  auto t = LoadShared("llama-spm");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->Encode("Hello world"), (Ids{1, 15043, 3186}));
  EXPECT_EQ(t->Encode("Hello world", NoBos()), (Ids{15043, 3186}));
  EXPECT_EQ(t->Encode(""), (Ids{1}));
  auto no_bos = LoadShared("llama-spm", TokenizerConfig{.add_bos = "false"});
  ASSERT_NE(no_bos, nullptr);
  EXPECT_EQ(no_bos->Encode("Hello world"), (Ids{15043, 3186}));
  EXPECT_FALSE(TokenizerConfig{.add_bos = "maybe"}.Validate().ok());
}

TEST(SpmTokenizer, ControlTokensOnlyWhenParsingSpecials) {
  auto t = LoadShared("llama-spm");
  ASSERT_NE(t, nullptr);
  const Ids parsed = t->Encode("Hello</s>world", {.add_special = false, .parse_special = true});
  EXPECT_EQ(parsed, (Ids{15043, 2, 3186}));  // text after a special gets the ▁ prefix
  const Ids plain = t->Encode("Hello</s>world", NoBos());
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 2), 0);
  EXPECT_EQ(t->Decode(plain), "Hello</s>world");
}

TEST(SpmTokenizer, UserDefinedTokensAlwaysMatch) {
  auto t = Build(SpmData({{"\u2581"}, {"a"}, {"<tag>", 0, TokenType::kUserDefined}}));
  ASSERT_NE(t, nullptr);
  const TokenId tag = kFirstPiece + 2;
  EXPECT_EQ(t->Encode("<tag>", NoBos()), (Ids{tag}));
  EXPECT_EQ(t->Decode(Ids{tag}), "<tag>");
}

TEST(BpeTokenizer, MergesByRank) {
  // tokens: 256 byte chars, then "ab" (256), "bc" (257)
  auto t1 = Build(BpeData({"ab", "bc"}, {"a b", "b c"}));
  ASSERT_NE(t1, nullptr);
  EXPECT_EQ(t1->Encode("abc", NoBos()), (Ids{256, 'c'}));
  auto t2 = Build(BpeData({"ab", "bc"}, {"b c", "a b"}));
  ASSERT_NE(t2, nullptr);
  EXPECT_EQ(t2->Encode("abc", NoBos()), (Ids{'a', 257}));
  // Merges never cross pre-tokenizer pieces: " ab" is one piece, "Ġ" (the space byte, id 32)
  // then "ab".
  EXPECT_EQ(t1->Encode("ab ab", NoBos()), (Ids{256, 32, 256}));
  EXPECT_EQ(t1->Decode(t1->Encode("ab ab", NoBos())), "ab ab");
}

TEST(BpeTokenizer, ControlTokensAndPromptSegments) {
  auto t = LoadShared("gpt-2");
  ASSERT_NE(t, nullptr);
  const TokenId eot = 50256;
  const Ids parsed = t->Encode("a<|endoftext|>b", {.add_special = true, .parse_special = true});
  EXPECT_EQ(parsed, (Ids{64, eot, 65}));  // gpt-2 adds no BOS
  const Ids plain = t->Encode("a<|endoftext|>b", NoBos());
  EXPECT_EQ(std::count(plain.begin(), plain.end(), eot), 0);

  // A prompt: the template's control token is parsed, the same text in content is not.
  const std::vector<PromptSegment> prompt = {{"<|endoftext|>", true}, {"x<|endoftext|>", false}};
  const Ids ids = t->EncodePrompt(prompt);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), eot), 1);
  EXPECT_EQ(ids.front(), eot);
  EXPECT_EQ(t->Decode(ids), "x<|endoftext|>");
  EXPECT_EQ(t->Decode(ids, {.render_special = true}), "<|endoftext|>x<|endoftext|>");
  // A control token straddling a trusted/untrusted boundary is not parsed.
  const std::vector<PromptSegment> split = {{"<|endof", true}, {"text|>", false}};
  const Ids s = t->EncodePrompt(split);
  EXPECT_EQ(std::count(s.begin(), s.end(), eot), 0);
}

TEST(Tokenizer, DecodeOfEncodeIsIdentityOnRandomText) {
  const std::vector<std::string> alphabet = {
      "a", "b", "Z", "e", " ", " ", "  ", "\n", "\t", "0", "7", "'", ".", ",", "!", "?", "-",
      "\u00e9", "\u00df", "\u00c4", "\u20ac", "\u6211", "\u60f3", "\u0436", "\u17d2",
      "\U0001F999", "\U0001F600", "\u200d", "'s", "'LL", "Hello", " world", "\u00a0"};
  std::mt19937 rng(7);
  for (const char* name : {"llama-spm", "phi-3", "gpt-2"}) {
    auto t = LoadShared(name);
    ASSERT_NE(t, nullptr);
    for (int iter = 0; iter < 300; ++iter) {
      std::string text;
      const int n = std::uniform_int_distribution<int>(0, 24)(rng);
      for (int i = 0; i < n; ++i) {
        text += alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
      }
      const Ids ids = t->Encode(text);
      EXPECT_EQ(t->Decode(ids), text) << name;
    }
  }
}

TEST(Tokenizer, InvalidIdsDecodeToNothing) {
  auto t = LoadShared("gpt-2");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->Decode(Ids{-5, 1 << 30, 64}), "a");
  EXPECT_EQ(t->Piece(-1), "");
}

TEST(Tokenizer, MalformedInputIsTokenizedWithoutLoss) {
  const std::string bad = "ok\xff\xfe \xe2\x82 end\xc3";
  for (const char* name : {"llama-spm", "gpt-2"}) {
    auto t = LoadShared(name);
    ASSERT_NE(t, nullptr);
    const Ids ids = t->Encode(bad);
    std::string bytes;
    for (TokenId id : ids) bytes += t->Piece(id);
    if (t->vocab().add_space_prefix()) bytes.erase(0, 1);
    EXPECT_EQ(bytes, bad) << name;
  }
}

}  // namespace
}  // namespace hotline::engine
