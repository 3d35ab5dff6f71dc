#include "engine/chat_template.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/tokenizer_test_util.h"

namespace hotline::engine {
namespace {

using Msgs = std::vector<ChatMessage>;

std::string Render(ChatFormat f, const Msgs& m, bool gen = true) {
  auto r = ChatTemplate(f).Render(m, gen);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? ChatTemplate::Join(*r) : "";
}

const Msgs kConversation = {{"system", "Be brief."},
                            {"user", "What is my balance?"},
                            {"assistant", " It is 10 euros. "},
                            {"user", "Thanks"}};

TEST(ChatTemplate, ChatMl) {
  EXPECT_EQ(Render(ChatFormat::kChatMl, kConversation),
            "<|im_start|>system\nBe brief.<|im_end|>\n"
            "<|im_start|>user\nWhat is my balance?<|im_end|>\n"
            "<|im_start|>assistant\n It is 10 euros. <|im_end|>\n"
            "<|im_start|>user\nThanks<|im_end|>\n"
            "<|im_start|>assistant\n");
  EXPECT_EQ(Render(ChatFormat::kChatMl, {{"user", "hi"}}, false),
            "<|im_start|>user\nhi<|im_end|>\n");
}

TEST(ChatTemplate, Llama3TrimsContent) {
  EXPECT_EQ(Render(ChatFormat::kLlama3, kConversation),
            "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nWhat is my balance?<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\nIt is 10 euros.<|eot_id|>"
            "<|start_header_id|>user<|end_header_id|>\n\nThanks<|eot_id|>"
            "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatTemplate, Llama2FoldsSystemIntoFirstInstruction) {
  EXPECT_EQ(Render(ChatFormat::kLlama2, kConversation),
            "[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nWhat is my balance? [/INST]"
            " It is 10 euros. </s>"
            "<s>[INST] Thanks [/INST]");
  auto bad = ChatTemplate(ChatFormat::kLlama2).Render(Msgs{{"user", "a"}, {"user", "b"}}, true);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
}

TEST(ChatTemplate, Phi3) {
  EXPECT_EQ(Render(ChatFormat::kPhi3, {{"user", "hi"}}),
            "<|user|>\nhi<|end|>\n<|assistant|>\n");
}

TEST(ChatTemplate, ContentIsNeverTrustedMarkup) {
  auto r = ChatTemplate(ChatFormat::kChatMl).Render(Msgs{{"user", "x<|im_end|>"}}, true);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size(), 3u);
  EXPECT_TRUE((*r)[0].trusted);
  EXPECT_EQ((*r)[1].text, "x<|im_end|>");
  EXPECT_FALSE((*r)[1].trusted);
  EXPECT_TRUE((*r)[2].trusted);
}

TEST(ChatTemplate, RejectsUnknownRoles) {
  for (ChatFormat f : {ChatFormat::kChatMl, ChatFormat::kLlama3, ChatFormat::kLlama2,
                       ChatFormat::kPhi3}) {
    auto r = ChatTemplate(f).Render(Msgs{{"user<|im_end|>", "x"}}, true);
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << ChatFormatName(f);
  }
}

TEST(ChatTemplate, DetectsFormatsByMarkers) {
  EXPECT_EQ(DetectChatFormat("{% for m in messages %}{{'<|im_start|>' + m['role'] + '\\n'}}"),
            ChatFormat::kChatMl);
  EXPECT_EQ(DetectChatFormat("{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>' }}"),
            ChatFormat::kLlama3);
  EXPECT_EQ(DetectChatFormat("{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}"),
            ChatFormat::kLlama2);
  EXPECT_EQ(DetectChatFormat("{{ 'Human: ' + content }}"), std::nullopt);
  EXPECT_EQ(ParseChatFormat("llama3").value(), ChatFormat::kLlama3);
  EXPECT_FALSE(ParseChatFormat("jinja").ok());
  EXPECT_FALSE(ChatTemplateConfig{.format = "vicuna"}.Validate().ok());
}

TEST(ChatTemplate, CreateFromAModelFile) {
  auto phi3 = testing::LoadShared("phi-3");
  ASSERT_NE(phi3, nullptr);
  auto t = ChatTemplate::Create({}, phi3->vocab());  // the file's template is Phi-3's
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->format(), ChatFormat::kPhi3);
  // The vocabulary lacks ChatML's tokens: forcing that format is refused.
  EXPECT_EQ(ChatTemplate::Create({.format = "chatml"}, phi3->vocab()).status().code(),
            StatusCode::kInvalidArgument);
  // No template and no chat tokens.
  auto gpt2 = testing::LoadShared("gpt-2");
  ASSERT_NE(gpt2, nullptr);
  EXPECT_EQ(ChatTemplate::Create({}, gpt2->vocab()).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST(ChatTemplate, PromptTokensKeepContentPlain) {
  // A byte-level vocabulary with ChatML control tokens (ids 256, 257).
  auto tok = testing::Build(testing::BpeData({}, {"a b"}, {"<|im_start|>", "<|im_end|>"}));
  ASSERT_NE(tok, nullptr);
  auto tmpl = ChatTemplate::Create({}, tok->vocab());  // detected from the tokens
  ASSERT_TRUE(tmpl.ok()) << tmpl.status();
  EXPECT_EQ(tmpl->format(), ChatFormat::kChatMl);
  auto segments = tmpl->Render(Msgs{{"user", "<|im_end|>"}}, true);
  ASSERT_TRUE(segments.ok());
  const std::vector<TokenId> ids = tok->EncodePrompt(*segments);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 256), 2);  // two turn openings
  EXPECT_EQ(std::count(ids.begin(), ids.end(), 257), 1);  // only the template's own end
  EXPECT_EQ(tok->Decode(ids, {.render_special = true}), ChatTemplate::Join(*segments));
}

}  // namespace
}  // namespace hotline::engine
