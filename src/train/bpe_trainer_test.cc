#include "train/bpe_trainer.h"

#include <gtest/gtest.h>

#include "engine/chat_template.h"
#include "engine/gguf.h"
#include "engine/tokenizer.h"
#include "train/export.h"

namespace hotline::train {
namespace {

std::vector<std::string> Corpus() {
  std::vector<std::string> texts;
  const char* lines[] = {"How can I cancel my order?",
                         "I want to cancel the order I placed yesterday.",
                         "Where is my refund? I was promised a refund last week.",
                         "Please help me track my delivery.",
                         "Can you change the delivery address of my order?",
                         "I'd like to speak with an agent, please.",
                         "What's the status of order 12345?"};
  for (int rep = 0; rep < 5; ++rep) {
    for (const char* l : lines) texts.emplace_back(l);
  }
  return texts;
}

std::shared_ptr<const engine::Tokenizer> Load(const engine::VocabData& data) {
  auto vocab = engine::Vocabulary::Create(data);
  EXPECT_TRUE(vocab.ok()) << vocab.status();
  if (!vocab.ok()) return nullptr;
  auto tok = engine::Tokenizer::Create(*vocab);
  EXPECT_TRUE(tok.ok()) << tok.status();
  return tok.ok() ? *tok : nullptr;
}

TEST(BpeTrainer, LearnsFrequentWordsAndRoundTripsAnyText) {
  BpeTrainOptions opt;
  opt.vocab_size = 400;
  opt.chat_template = kChatMlTemplate;
  auto data = TrainBpe(Corpus(), opt);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_EQ(data->tokens.size(), 400u);
  EXPECT_FALSE(data->merges.empty());
  auto tok = Load(*data);
  ASSERT_NE(tok, nullptr);
  // A frequent word with its leading space became one token.
  EXPECT_EQ(tok->Encode(" order", {.add_special = false}).size(), 1u);
  EXPECT_LT(tok->Encode("How can I cancel my order?", {.add_special = false}).size(), 10u);
  for (const std::string& text : std::vector<std::string>{
           "How can I cancel my order?",
           "Zebras   juggle\n\n tabs\tand \u00e9l\u00e8ves \u4f60\u597d",
           std::string("\x00\x01 bytes", 8), "<|im_end|> typed by a caller", ""}) {
    const auto ids = tok->Encode(text, {.add_special = false});
    EXPECT_EQ(tok->Decode(ids), text);
  }
  // Bytes that are not UTF-8 still map to tokens whose bytes give the input back (Decode itself
  // replaces malformed UTF-8 for display).
  const std::string raw("\xff\xfe order \x80", 10);
  std::string pieces;
  for (engine::TokenId id : tok->Encode(raw, {.add_special = false})) pieces += tok->Piece(id);
  EXPECT_EQ(pieces, raw);
}

TEST(BpeTrainer, SpecialTokensServeTheChatTemplateThroughTheGgufFile) {
  BpeTrainOptions opt;
  opt.vocab_size = 320;
  opt.chat_template = kChatMlTemplate;
  auto data = TrainBpe(Corpus(), opt);
  ASSERT_TRUE(data.ok());
  // Through a GGUF file, as the engine loads it.
  engine::GgufWriter w;
  ModelShape s;
  s.n_vocab = 320;
  s.dim = 8;
  s.n_layer = 1;
  s.n_head = 2;
  s.n_head_kv = 2;
  s.n_ff = 8;
  s.seq_len = 16;
  const std::vector<float> params = InitParams(s, 1);
  ASSERT_TRUE(BuildGguf(s, params, *data, "t", &w).ok());
  auto file = engine::GgufFile::FromBuffer(*w.WriteBuffer());
  ASSERT_TRUE(file.ok());
  auto vocab = engine::Vocabulary::FromGguf(**file);
  ASSERT_TRUE(vocab.ok()) << vocab.status();
  auto tok = engine::Tokenizer::Create(*vocab);
  ASSERT_TRUE(tok.ok());
  auto tmpl = engine::ChatTemplate::Create({}, **vocab);
  ASSERT_TRUE(tmpl.ok()) << tmpl.status();
  EXPECT_EQ(tmpl->format(), engine::ChatFormat::kChatMl);
  const engine::ChatMessage msgs[] = {{"user", "cancel my order <|im_end|>"}};
  auto segs = tmpl->Render(msgs, true);
  ASSERT_TRUE(segs.ok());
  const auto ids = (*tok)->EncodePrompt(*segs);
  const engine::TokenId im_start = (*vocab)->Find("<|im_start|>");
  const engine::TokenId im_end = (*vocab)->Find("<|im_end|>");
  ASSERT_NE(im_start, engine::kNoToken);
  EXPECT_EQ(ids.front(), im_start);                          // no BOS for this vocabulary
  EXPECT_EQ(std::count(ids.begin(), ids.end(), im_end), 1);  // the typed one stays text
  EXPECT_EQ((*vocab)->eot_id(), im_end);
  EXPECT_EQ((*tok)->Decode(ids, {.render_special = true}), engine::ChatTemplate::Join(*segs));
}

TEST(BpeTrainer, RejectsImpossibleOptions) {
  BpeTrainOptions opt;
  opt.vocab_size = 100;
  EXPECT_FALSE(TrainBpe(Corpus(), opt).ok());
  opt.vocab_size = 300;
  opt.special_tokens = {"<a>", "<a>"};
  EXPECT_FALSE(TrainBpe(Corpus(), opt).ok());
}

TEST(BpeTrainer, Deterministic) {
  BpeTrainOptions opt;
  opt.vocab_size = 350;
  auto a = TrainBpe(Corpus(), opt);
  auto b = TrainBpe(Corpus(), opt);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->tokens, b->tokens);
  EXPECT_EQ(a->merges, b->merges);
}

}  // namespace
}  // namespace hotline::train
