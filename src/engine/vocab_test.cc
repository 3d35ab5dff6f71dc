#include "engine/vocab.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/gguf.h"
#include "engine/tokenizer_test_util.h"
#include "engine/unicode.h"

namespace hotline::engine {
namespace {

using testing::BpeData;
using testing::SpmData;

Status CreateStatus(VocabData d) { return Vocabulary::Create(std::move(d)).status(); }

TEST(Vocabulary, RejectsInconsistentData) {
  VocabData d = SpmData({{"a"}});
  d.model = "bert";
  EXPECT_EQ(CreateStatus(d).code(), StatusCode::kUnimplemented);

  d = SpmData({{"a"}});
  d.scores.pop_back();
  EXPECT_EQ(CreateStatus(d).code(), StatusCode::kInvalidArgument);

  d = SpmData({{"a"}});
  d.token_types.back() = 9;
  EXPECT_EQ(CreateStatus(d).code(), StatusCode::kInvalidArgument);

  d = SpmData({{"a"}});
  d.bos_id = 100000;
  EXPECT_EQ(CreateStatus(d).code(), StatusCode::kInvalidArgument);

  d = SpmData({{"a"}});
  d.bos_id = kNoToken;  // SPM adds BOS by default, so it must exist
  EXPECT_EQ(CreateStatus(d).code(), StatusCode::kInvalidArgument);

  EXPECT_EQ(CreateStatus(BpeData({}, {})).code(), StatusCode::kInvalidArgument);  // no merges
  EXPECT_EQ(CreateStatus(BpeData({}, {"ab"})).code(), StatusCode::kInvalidArgument);
  d = BpeData({}, {"a b"});
  d.pre = "falcon";
  EXPECT_EQ(CreateStatus(d).code(), StatusCode::kInvalidArgument);

  d = VocabData{};
  EXPECT_EQ(CreateStatus(d).code(), StatusCode::kInvalidArgument);  // no tokens
}

TEST(Vocabulary, DefaultsPerModel) {
  auto spm = Vocabulary::Create(SpmData({{"a"}}));
  ASSERT_TRUE(spm.ok());
  EXPECT_TRUE((*spm)->add_bos());
  EXPECT_TRUE((*spm)->add_space_prefix());
  EXPECT_EQ((*spm)->ByteToken(0x41), 3 + 0x41);
  EXPECT_EQ((*spm)->ByteValue(3 + 0x41), 0x41);

  VocabData d = BpeData({}, {"a b"});
  auto bpe = Vocabulary::Create(d);
  ASSERT_TRUE(bpe.ok());
  EXPECT_FALSE((*bpe)->add_bos());
  EXPECT_FALSE((*bpe)->add_space_prefix());
  EXPECT_EQ((*bpe)->pre_tokenizer(), PreTokenizerKind::kGpt2);
  EXPECT_EQ((*bpe)->MergeRank('a', 'b'), 0);
  EXPECT_EQ((*bpe)->MergeRank('b', 'a'), -1);

  d.pre = "llama-bpe";
  d.tokens.push_back("<|begin_of_text|>");
  d.token_types.push_back(3);
  d.bos_id = static_cast<TokenId>(d.tokens.size() - 1);
  auto llama3 = Vocabulary::Create(d);
  ASSERT_TRUE(llama3.ok()) << llama3.status();
  EXPECT_EQ((*llama3)->pre_tokenizer(), PreTokenizerKind::kLlama3);
  EXPECT_TRUE((*llama3)->add_bos());
  EXPECT_TRUE((*llama3)->ignore_merges());
}

TEST(Vocabulary, ByteLevelMappingIsABijection) {
  std::vector<bool> seen(256, false);
  for (int b = 0; b < 256; ++b) {
    std::string_view c = ByteToBpeChar(static_cast<uint8_t>(b));
    size_t pos = 0;
    const char32_t cp = DecodeUtf8(c, &pos);
    EXPECT_EQ(pos, c.size());
    const int back = BpeCharToByte(cp);
    ASSERT_EQ(back, b);
    seen[back] = true;
  }
  EXPECT_EQ(ByteToBpeChar(' '), "\u0120");  // Ġ
  EXPECT_EQ(ByteToBpeChar('\n'), "\u010A");  // Ċ
  EXPECT_EQ(BpeCharToByte(0x144), -1);
}

TEST(Vocabulary, ReadsSharedFiles) {
  auto file = GgufFile::Open(testing::SharedVocabPath("phi-3"));
  ASSERT_TRUE(file.ok()) << file.status();
  auto v = Vocabulary::FromGguf(**file);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ((*v)->size(), 32064u);
  EXPECT_EQ((*v)->bos_id(), 1);
  EXPECT_EQ((*v)->eos_id(), 32000);
  EXPECT_EQ((*v)->pad_id(), 32000);
  EXPECT_EQ((*v)->eot_id(), 32007);  // <|end|>, found by name
  EXPECT_TRUE((*v)->IsEndOfGeneration(32000));
  EXPECT_TRUE((*v)->IsEndOfGeneration(32007));
  EXPECT_FALSE((*v)->IsEndOfGeneration(1));
  EXPECT_NE((*v)->chat_template().find("<|user|>"), std::string::npos);
  EXPECT_EQ((*v)->Type(2), TokenType::kUserDefined);
}

TEST(Vocabulary, FromGgufRejectsWrongMetadata) {
  auto build = [](auto&& fill) {
    GgufWriter w;
    fill(w);
    auto bytes = w.WriteBuffer();
    EXPECT_TRUE(bytes.ok());
    auto file = GgufFile::FromBuffer(*bytes);
    EXPECT_TRUE(file.ok()) << file.status();
    return Vocabulary::FromGguf(**file).status();
  };
  const std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "a"};
  // No tokenizer at all.
  EXPECT_EQ(build([](GgufWriter&) {}).code(), StatusCode::kInvalidArgument);
  // Token types of the wrong array type.
  EXPECT_FALSE(build([&](GgufWriter& w) {
                 w.SetString("tokenizer.ggml.model", "llama");
                 w.SetStringArray("tokenizer.ggml.tokens", tokens);
                 w.SetF32Array("tokenizer.ggml.token_type", std::vector<float>{1, 1, 1, 1});
                 w.SetU32("tokenizer.ggml.bos_token_id", 1);
               }).ok());
  // BOS id past the end.
  EXPECT_FALSE(build([&](GgufWriter& w) {
                 w.SetString("tokenizer.ggml.model", "llama");
                 w.SetStringArray("tokenizer.ggml.tokens", tokens);
                 w.SetU32("tokenizer.ggml.bos_token_id", 7);
               }).ok());
  // A minimal valid one.
  EXPECT_TRUE(build([&](GgufWriter& w) {
                w.SetString("tokenizer.ggml.model", "llama");
                w.SetStringArray("tokenizer.ggml.tokens", tokens);
                w.SetU32("tokenizer.ggml.bos_token_id", 1);
                w.SetBool("tokenizer.ggml.add_bos_token", true);
              }).ok());
}

}  // namespace
}  // namespace hotline::engine
