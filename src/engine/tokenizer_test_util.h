// Helpers for the tokenizer tests: small hand-built vocabularies and the shared test files.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/gguf.h"
#include "common/build_paths.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"

namespace hotline::engine::testing {

inline std::string SharedVocabPath(const std::string& name) {
  return std::string(HOTLINE_SHARED_DATA_DIR) + "/llm/vocab/ggml-vocab-" + name + ".gguf";
}

inline std::shared_ptr<const Tokenizer> LoadShared(const std::string& name,
                                                   const TokenizerConfig& config = {}) {
  auto file = GgufFile::Open(SharedVocabPath(name));
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return nullptr;
  auto vocab = Vocabulary::FromGguf(**file);
  EXPECT_TRUE(vocab.ok()) << vocab.status();
  if (!vocab.ok()) return nullptr;
  auto tok = Tokenizer::Create(*vocab, config);
  EXPECT_TRUE(tok.ok()) << tok.status();
  return tok.ok() ? *tok : nullptr;
}

// SentencePiece vocabulary: <unk>, <s>, </s>, 256 byte tokens (ids 3..258), then `pieces` with
// their scores and types (normal unless given).
struct SpmPiece {
  std::string text;
  float score = 0;
  TokenType type = TokenType::kNormal;
};
inline VocabData SpmData(const std::vector<SpmPiece>& pieces, bool byte_tokens = true) {
  VocabData d;
  d.model = "llama";
  auto add = [&](const std::string& t, float s, TokenType type) {
    d.tokens.push_back(t);
    d.scores.push_back(s);
    d.token_types.push_back(static_cast<int32_t>(type));
  };
  add("<unk>", 0, TokenType::kUnknown);
  add("<s>", 0, TokenType::kControl);
  add("</s>", 0, TokenType::kControl);
  if (byte_tokens) {
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      add(name, 0, TokenType::kByte);
    }
  }
  for (const auto& p : pieces) add(p.text, p.score, p.type);
  d.bos_id = 1;
  d.eos_id = 2;
  d.unk_id = 0;
  return d;
}

// Byte-level BPE vocabulary: the 256 byte characters (ids 0..255, in byte order), then `extra`
// tokens (normal unless listed in `control`), with `merges` in priority order.
inline VocabData BpeData(const std::vector<std::string>& extra,
                         const std::vector<std::string>& merges,
                         const std::vector<std::string>& control = {}) {
  VocabData d;
  d.model = "gpt2";
  d.pre = "gpt-2";
  for (int b = 0; b < 256; ++b) {
    d.tokens.emplace_back(ByteToBpeChar(static_cast<uint8_t>(b)));
    d.token_types.push_back(1);
  }
  for (const auto& t : extra) {
    d.tokens.push_back(t);
    d.token_types.push_back(1);
  }
  for (const auto& c : control) {
    d.tokens.push_back(c);
    d.token_types.push_back(static_cast<int32_t>(TokenType::kControl));
  }
  d.merges = merges;
  return d;
}

inline std::shared_ptr<const Tokenizer> Build(VocabData data, const TokenizerConfig& config = {}) {
  auto vocab = Vocabulary::Create(std::move(data));
  EXPECT_TRUE(vocab.ok()) << vocab.status();
  if (!vocab.ok()) return nullptr;
  auto tok = Tokenizer::Create(*vocab, config);
  EXPECT_TRUE(tok.ok()) << tok.status();
  return tok.ok() ? *tok : nullptr;
}

}  // namespace hotline::engine::testing
