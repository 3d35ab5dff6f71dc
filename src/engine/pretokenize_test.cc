// Pre-tokenizer splits, compared with the reference regular expressions: the expected pieces
// below were produced by Python's `regex` module running each model's published pattern (see
// pretokenize.h) on the same strings.
#include "engine/pretokenize.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hotline::engine {
namespace {

struct SplitCase {
  std::string text;
  std::vector<std::string> pieces;
};

std::vector<std::string> Split(PreTokenizerKind kind, std::string_view text) {
  std::vector<TextPiece> pieces;
  PreTokenizeScratch scratch;
  PreTokenize(kind, text, &pieces, &scratch);
  std::vector<std::string> out;
  for (const TextPiece& p : pieces) out.emplace_back(text.substr(p.begin, p.end - p.begin));
  return out;
}

const std::vector<SplitCase> kGpt2Cases = {
    {"Hello world", {"Hello", " world"}},
    {"I'm sure they'LL say 'RE", {"I", "'m", " sure", " they", "'", "LL", " say", " '", "RE"}},
    {"  two  spaces\n\n  end  ", {" ", " two", " ", " spaces", "\n\n ", " end", "  "}},
    {"abc12345 x", {"abc", "12345", " x"}},
    {"(Hello) \"quoted\"!!\n\nNext", {"(", "Hello", ")", " \"", "quoted", "\"!!", "\n", "\n", "Next"}},
    {"tab\tthen\r\nCRLF", {"tab", "\t", "then", "\r", "\n", "CRLF"}},
    {"été 2024\u00a0€", {"été", " 2024", "\u00a0", "€"}},
    {"我想在apple工作1314151天", {"我想在apple工作", "1314151", "天"}},
    {"emoji 😀🚀 ok", {"emoji", " 😀🚀", " ok"}},
    {"a  \n  b", {"a", "  \n ", " b"}},
};
const std::vector<SplitCase> kLlama3Cases = {
    {"Hello world", {"Hello", " world"}},
    {"I'm sure they'LL say 'RE", {"I", "'m", " sure", " they", "'LL", " say", " '", "RE"}},
    {"  two  spaces\n\n  end  ", {" ", " two", " ", " spaces", "\n\n", " ", " end", "  "}},
    {"abc12345 x", {"abc", "123", "45", " x"}},
    {"(Hello) \"quoted\"!!\n\nNext", {"(Hello", ")", " \"", "quoted", "\"!!\n\n", "Next"}},
    {"tab\tthen\r\nCRLF", {"tab", "\tthen", "\r\n", "CRLF"}},
    {"été 2024\u00a0€", {"été", " ", "202", "4", "\u00a0", "€"}},
    {"我想在apple工作1314151天", {"我想在apple工作", "131", "415", "1", "天"}},
    {"emoji 😀🚀 ok", {"emoji", " 😀🚀", " ok"}},
    {"a  \n  b", {"a", "  \n", " ", " b"}},
};
const std::vector<SplitCase> kQwen2Cases = {
    {"Hello world", {"Hello", " world"}},
    {"I'm sure they'LL say 'RE", {"I", "'m", " sure", " they", "'LL", " say", " '", "RE"}},
    {"  two  spaces\n\n  end  ", {" ", " two", " ", " spaces", "\n\n", " ", " end", "  "}},
    {"abc12345 x", {"abc", "1", "2", "3", "4", "5", " x"}},
    {"(Hello) \"quoted\"!!\n\nNext", {"(Hello", ")", " \"", "quoted", "\"!!\n\n", "Next"}},
    {"tab\tthen\r\nCRLF", {"tab", "\tthen", "\r\n", "CRLF"}},
    {"été 2024\u00a0€", {"été", " ", "2", "0", "2", "4", "\u00a0", "€"}},
    {"我想在apple工作1314151天", {"我想在apple工作", "1", "3", "1", "4", "1", "5", "1", "天"}},
    {"emoji 😀🚀 ok", {"emoji", " 😀🚀", " ok"}},
    {"a  \n  b", {"a", "  \n", " ", " b"}},
};

void CheckCases(PreTokenizerKind kind, const std::vector<SplitCase>& cases) {
  for (const SplitCase& c : cases) {
    EXPECT_EQ(Split(kind, c.text), c.pieces) << "text: " << c.text;
  }
}

TEST(PreTokenize, Gpt2MatchesReferenceRegex) { CheckCases(PreTokenizerKind::kGpt2, kGpt2Cases); }
TEST(PreTokenize, Llama3MatchesReferenceRegex) {
  CheckCases(PreTokenizerKind::kLlama3, kLlama3Cases);
}
TEST(PreTokenize, Qwen2MatchesReferenceRegex) { CheckCases(PreTokenizerKind::kQwen2, kQwen2Cases); }

TEST(PreTokenize, ContractionsFoldLongS) {
  // (?i) folds U+017F to 's', so "'ſ" is a contraction for llama3 but not for gpt-2.
  EXPECT_EQ(Split(PreTokenizerKind::kLlama3, "x'\u017Fy"),
            (std::vector<std::string>{"x", "'\u017F", "y"}));
  EXPECT_EQ(Split(PreTokenizerKind::kGpt2, "x'\u017Fy"),
            (std::vector<std::string>{"x", "'", "\u017Fy"}));
}

TEST(PreTokenize, PiecesCoverMalformedInputExactly) {
  const std::string text = "ab\xff\xfe cd\xe2\x82 \xc3";
  for (PreTokenizerKind k :
       {PreTokenizerKind::kGpt2, PreTokenizerKind::kLlama3, PreTokenizerKind::kQwen2}) {
    std::string joined;
    for (const auto& p : Split(k, text)) {
      EXPECT_FALSE(p.empty());
      joined += p;
    }
    EXPECT_EQ(joined, text);
  }
}

TEST(PreTokenize, EmptyTextHasNoPieces) {
  EXPECT_TRUE(Split(PreTokenizerKind::kGpt2, "").empty());
  EXPECT_TRUE(Split(PreTokenizerKind::kNone, "").empty());
  EXPECT_EQ(Split(PreTokenizerKind::kNone, "a b"), (std::vector<std::string>{"a b"}));
}

}  // namespace
}  // namespace hotline::engine
