// The tokenizer test vectors of ../shared/data/llm/vocab (from the llama.cpp repository): each
// .inp string must tokenize (no BOS, specials not parsed) to exactly the ids of its .out line,
// and decode back to itself.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/gguf.h"
#include "common/build_paths.h"
#include "engine/tokenizer.h"

namespace hotline::engine {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<std::string> Split(const std::string& s, const std::string& sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t p = s.find(sep, start);
    if (p == std::string::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, p - start));
    start = p + sep.size();
  }
}

std::vector<TokenId> ParseIds(const std::string& line) {
  std::vector<TokenId> ids;
  std::istringstream in(line);
  TokenId id;
  while (in >> id) ids.push_back(id);
  return ids;
}

struct VectorCase {
  std::string name;
};

class TokenizerVectors : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerVectors, MatchExactly) {
  const std::string base = std::string(HOTLINE_SHARED_DATA_DIR) + "/llm/vocab/ggml-vocab-" +
                           GetParam() + ".gguf";
  auto file = GgufFile::Open(base);
  ASSERT_TRUE(file.ok()) << file.status();
  auto vocab = Vocabulary::FromGguf(**file);
  ASSERT_TRUE(vocab.ok()) << vocab.status();
  auto tok = Tokenizer::Create(*vocab);
  ASSERT_TRUE(tok.ok()) << tok.status();

  std::vector<std::string> inputs = Split(ReadAll(base + ".inp"), "\n__ggml_vocab_test__\n");
  std::vector<std::string> outputs = Split(ReadAll(base + ".out"), "\n");
  // Both files end with a separator / newline: drop the empty tail.
  ASSERT_FALSE(inputs.empty());
  ASSERT_EQ(inputs.back(), "");
  inputs.pop_back();
  ASSERT_EQ(outputs.back(), "");
  outputs.pop_back();
  ASSERT_EQ(inputs.size(), outputs.size());
  ASSERT_GT(inputs.size(), 40u);

  int failures = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    EncodeOptions opts;
    opts.add_special = false;
    const std::vector<TokenId> got = (*tok)->Encode(inputs[i], opts);
    const std::vector<TokenId> want = ParseIds(outputs[i]);
    if (got != want) {
      ++failures;
      std::ostringstream g;
      for (TokenId t : got) g << ' ' << t;
      ADD_FAILURE() << GetParam() << " case " << i << " '" << inputs[i] << "'\n want:" << outputs[i]
                    << "\n  got:" << g.str();
    }
    EXPECT_EQ((*tok)->Decode(got), inputs[i]) << GetParam() << " case " << i;
  }
  EXPECT_EQ(failures, 0);
}

INSTANTIATE_TEST_SUITE_P(SharedData, TokenizerVectors,
                         ::testing::Values("llama-spm", "phi-3", "gpt-2"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace hotline::engine
