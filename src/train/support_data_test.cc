#include "train/support_data.h"

#include <gtest/gtest.h>

#include <set>

#include "answer/kb/kb_company.h"
#include "common/build_paths.h"
#include "engine/chat_template.h"
#include "train/bpe_trainer.h"
#include "train/export.h"

namespace hotline::train {
namespace {

const std::string kCsv =
    std::string(HOTLINE_SHARED_DATA_DIR) + "/support/bitext/customer_support.csv";

TEST(SupportData, BitextGivesShortAnswersAndADisjointHeldOutSplit) {
  auto text = ReadTextFile(kCsv);
  ASSERT_TRUE(text.ok()) << text.status();
  auto data = BuildSupportData(*text, {});
  ASSERT_TRUE(data.ok()) << data.status();
  const size_t total = data->train.size() + data->test.size();
  EXPECT_GT(total, 4000u);
  EXPECT_GT(data->test.size(), total / 20);
  EXPECT_LT(data->test.size(), total / 5);
  std::set<std::string> train_q, intents;
  for (const auto& e : data->train) {
    train_q.insert(e.question);
    intents.insert(e.intent);
    EXPECT_LE(e.answer.size(), 260u) << e.answer;
    // The corpus's own placeholders ({{Order Number}}, …) never reach an answer; what is left
    // are company facts ({{website}}, …), filled from the deployment's `answer.company` when the
    // answer is spoken.
    EXPECT_TRUE(answer::FillCompanyPlaceholders(e.answer, answer::CompanyConfig{}).ok())
        << e.answer;
  }
  EXPECT_GE(intents.size(), 20u);
  for (const auto& e : data->test) EXPECT_EQ(train_q.count(e.question), 0u) << e.question;
}

TEST(SupportData, RejectsCorpusWithoutColumns) {
  EXPECT_FALSE(BuildSupportData("a,b\n1,2\n", {}).ok());
  EXPECT_FALSE(BuildSupportData("instruction,intent,response\n\"unterminated", {}).ok());
}

TEST(SupportData, EncodedExampleIsTheCallsPromptFollowedByTheAnswer) {
  const std::vector<SupportExample> ex = {
      {"how do I cancel order 123?", "You can cancel it on our website.", "cancel_order"}};
  answer::PromptConfig pc;
  pc.system_prompt = "Answer briefly.";
  BpeTrainOptions opt;
  opt.vocab_size = 300;
  opt.chat_template = kChatMlTemplate;
  auto vd = TrainBpe(TokenizerCorpus(ex, pc), opt);
  ASSERT_TRUE(vd.ok());
  auto vocab = engine::Vocabulary::Create(*vd);
  ASSERT_TRUE(vocab.ok());
  auto tok = engine::Tokenizer::Create(*vocab);
  ASSERT_TRUE(tok.ok());
  auto enc = EncodeChat(**tok, ex[0], pc);
  ASSERT_TRUE(enc.ok());
  EXPECT_EQ((*tok)->Decode(enc->tokens, {.render_special = true}),
            "<|im_start|>system\nAnswer briefly.<|im_end|>\n<|im_start|>user\nQuestion: how do I "
            "cancel order 123?<|im_end|>\n<|im_start|>assistant\nYou can cancel it on our "
            "website.<|im_end|>");
  // The prompt part is token for token what the answerer's LLM tier sends the engine backend:
  // PromptBuilder's messages through the ChatML template.
  answer::PromptInput input;
  input.question = ex[0].question;
  auto built = answer::PromptBuilder(pc).Build(input);
  ASSERT_TRUE(built.ok());
  std::vector<engine::ChatMessage> msgs;
  for (const auto& m : built->messages) msgs.push_back({m.role, m.content});
  auto segs = engine::ChatTemplate(engine::ChatFormat::kChatMl).Render(msgs, true);
  ASSERT_TRUE(segs.ok());
  const auto prompt = (*tok)->EncodePrompt(*segs);
  ASSERT_EQ(enc->prompt_tokens, int(prompt.size()));
  EXPECT_TRUE(std::equal(prompt.begin(), prompt.end(), enc->tokens.begin()));
  // The default prompt is the answerer's default system prompt.
  auto call = CallPrompt("hi");
  ASSERT_TRUE(call.ok());
  ASSERT_EQ(call->size(), 2u);
  EXPECT_EQ((*call)[0].content, answer::PromptConfig{}.system_prompt);
  EXPECT_EQ((*call)[1].content, "Question: hi");
}

}  // namespace
}  // namespace hotline::train
