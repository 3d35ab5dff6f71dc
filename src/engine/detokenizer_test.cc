#include "engine/detokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/tokenizer_test_util.h"
#include "engine/unicode.h"

namespace hotline::engine {
namespace {

using testing::LoadShared;
using Ids = std::vector<TokenId>;

bool IsValidUtf8(std::string_view s) { return SanitizeUtf8(s) == s; }

std::vector<std::string> VectorInputs(const std::string& name) {
  std::ifstream f(testing::SharedVocabPath(name) + ".inp", std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string all = ss.str();
  const std::string sep = "\n__ggml_vocab_test__\n";
  std::vector<std::string> out;
  for (size_t start = 0;;) {
    const size_t p = all.find(sep, start);
    if (p == std::string::npos) break;
    out.push_back(all.substr(start, p - start));
    start = p + sep.size();
  }
  return out;
}

TEST(StreamingDetokenizer, HoldsAnEmojiSplitOverByteTokens) {
  auto t = LoadShared("llama-spm");
  ASSERT_NE(t, nullptr);
  // "🦙" = ▁ then <0xF0> <0x9F> <0xA6> <0x99> in this vocabulary.
  const Ids ids = t->Encode("\U0001F999", {.add_special = false});
  ASSERT_EQ(ids, (Ids{29871, 243, 162, 169, 156}));
  StreamingDetokenizer d(*t);
  EXPECT_EQ(d.Push(ids[0]), "");  // the dummy-prefix space is dropped at the start
  EXPECT_EQ(d.Push(ids[1]), "");
  EXPECT_EQ(d.Push(ids[2]), "");
  EXPECT_EQ(d.Push(ids[3]), "");
  EXPECT_EQ(d.pending_bytes(), 3u);
  EXPECT_EQ(d.Push(ids[4]), "\U0001F999");
  EXPECT_EQ(d.pending_bytes(), 0u);
}

TEST(StreamingDetokenizer, ByteLevelPiecesOfOneCharacter) {
  auto t = LoadShared("gpt-2");
  ASSERT_NE(t, nullptr);
  const Ids ids = t->Encode(" \U0001F999", {.add_special = false});
  ASSERT_GE(ids.size(), 2u);
  StreamingDetokenizer d(*t);
  std::string out;
  for (size_t i = 0; i + 1 < ids.size(); ++i) {
    const std::string chunk = d.Push(ids[i]);
    EXPECT_TRUE(IsValidUtf8(chunk));
    out += chunk;
  }
  EXPECT_EQ(out, " ");
  EXPECT_EQ(out + d.Push(ids.back()), " \U0001F999");
}

TEST(StreamingDetokenizer, MatchesWholeDecodeOnEveryTestVector) {
  for (const char* name : {"llama-spm", "phi-3", "gpt-2"}) {
    auto t = LoadShared(name);
    ASSERT_NE(t, nullptr);
    for (const std::string& text : VectorInputs(name)) {
      const Ids ids = t->Encode(text);
      StreamingDetokenizer d(*t);
      std::string streamed;
      for (TokenId id : ids) {
        const std::string chunk = d.Push(id);
        EXPECT_TRUE(IsValidUtf8(chunk)) << name;
        streamed += chunk;
      }
      streamed += d.Finish();
      EXPECT_EQ(streamed, t->Decode(ids)) << name;
      EXPECT_EQ(streamed, text) << name;
    }
  }
}

TEST(StreamingDetokenizer, InvalidBytesBecomeReplacementCharacters) {
  auto t = LoadShared("llama-spm");
  ASSERT_NE(t, nullptr);
  const TokenId byte_ff = 3 + 0xFF;
  const TokenId byte_e2 = 3 + 0xE2;
  const TokenId a = t->vocab().Find("a");
  ASSERT_NE(a, kNoToken);
  StreamingDetokenizer d(*t);
  EXPECT_EQ(d.Push(byte_ff), "\uFFFD");  // can never start a character: out at once
  EXPECT_EQ(d.Push(byte_e2), "");        // may start one: held
  EXPECT_EQ(d.Push(a), "\uFFFDa");       // ... until a non-continuation byte proves it cut
  EXPECT_EQ(d.Push(byte_e2), "");
  EXPECT_EQ(d.Finish(), "\uFFFD");  // end of stream flushes what is held
}

TEST(StreamingDetokenizer, KeepsTheSpaceWhenContinuingAPrompt) {
  auto t = LoadShared("llama-spm");
  ASSERT_NE(t, nullptr);
  const TokenId hello = 15043;  // "▁Hello"
  StreamingDetokenizer from_start(*t);
  EXPECT_EQ(from_start.Push(1), "");  // BOS renders as nothing
  EXPECT_EQ(from_start.Push(hello), "Hello");
  EXPECT_EQ(from_start.Push(hello), " Hello");
  StreamingDetokenizer continuing(*t, {.strip_leading_space = false});
  EXPECT_EQ(continuing.Push(hello), " Hello");
  StreamingDetokenizer special(*t, {.render_special = true});
  EXPECT_EQ(special.Push(1), "<s>");
}

}  // namespace
}  // namespace hotline::engine
