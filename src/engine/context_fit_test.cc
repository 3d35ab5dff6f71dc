#include "engine/context_fit.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/tokenizer_test_util.h"

namespace hotline::engine {
namespace {

using Msgs = std::vector<ChatMessage>;

class ContextFitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tok_ = testing::LoadShared("llama-spm");
    ASSERT_TRUE(tok_);
  }
  // Tokens of exactly these messages, rendered as FitChatToContext renders them.
  size_t Count(const Msgs& m) const {
    auto seg = tmpl_.Render(m, true);
    EXPECT_TRUE(seg.ok()) << seg.status();
    return seg.ok() ? tok_->EncodePrompt(*seg, true).size() : 0;
  }
  std::vector<int32_t> Encode(const Msgs& m) const {
    return tok_->EncodePrompt(*tmpl_.Render(m, true), true);
  }
  // llama2 insists on system? (user assistant)* user: dropping anything but whole turns fails.
  ChatTemplate tmpl_{ChatFormat::kLlama2};
  std::shared_ptr<const Tokenizer> tok_;
};

Msgs Conversation(int turns) {
  Msgs m = {{"system", "You are the support line of a small bank. Answer briefly."}};
  for (int i = 0; i < turns; ++i) {
    m.push_back({"user", "Question number " + std::to_string(i) + " about my card and account?"});
    m.push_back({"assistant", "Answer number " + std::to_string(i) + ": it is all in order."});
  }
  m.push_back({"user", "And what is my balance today?"});
  return m;
}

TEST_F(ContextFitTest, EverythingFitsNothingDropped) {
  const Msgs m = Conversation(3);
  const int len = static_cast<int>(Count(m));
  auto fit = FitChatToContext(tmpl_, *tok_, m, true, {len + 20, 20, 4});
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_EQ(fit->dropped_messages, 0);
  EXPECT_EQ(fit->tokens, Encode(m));
  EXPECT_EQ(fit->reply_room, 20);
}

TEST_F(ContextFitTest, DropsTheOldestTurnsWholeAndNoMore) {
  const Msgs m = Conversation(6);
  for (int keep = 0; keep <= 5; ++keep) {
    // Room for the system prompt, the last `keep` older turns and the question, plus 16 tokens.
    Msgs want = {m[0]};
    want.insert(want.end(), m.end() - (2 * keep + 1), m.end());
    const int len = static_cast<int>(Count(want));
    auto fit = FitChatToContext(tmpl_, *tok_, m, true, {len + 16, 16, 4});
    ASSERT_TRUE(fit.ok()) << fit.status();
    EXPECT_EQ(fit->dropped_messages, 2 * (6 - keep)) << keep;
    EXPECT_EQ(fit->tokens, Encode(want)) << keep;
    EXPECT_GE(fit->reply_room, 16);
  }
}

TEST_F(ContextFitTest, StartsWithTheLeastReplyRoomWhenTheWholeAnswerCannotFit) {
  const Msgs m = Conversation(4);
  const Msgs minimal = {m[0], m.back()};
  const int len = static_cast<int>(Count(minimal));
  // 100 answer tokens asked, only 10 fit; 8 is the least worth starting for.
  auto fit = FitChatToContext(tmpl_, *tok_, m, true, {len + 10, 100, 8});
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_EQ(fit->dropped_messages, 8);
  EXPECT_EQ(fit->tokens, Encode(minimal));
  EXPECT_EQ(fit->reply_room, 10);
}

TEST_F(ContextFitTest, ClearErrorWhenSystemPromptAndQuestionCannotFit) {
  const Msgs m = Conversation(2);
  const int len = static_cast<int>(Count({m[0], m.back()}));
  auto fit = FitChatToContext(tmpl_, *tok_, m, true, {len + 7, 100, 8});
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.status().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(IsContextLengthExceeded(fit.status()));
  const std::string msg(fit.status().message());
  EXPECT_NE(msg.find(std::to_string(len) + " tokens"), std::string::npos) << msg;
  EXPECT_NE(msg.find("max_seq_len is " + std::to_string(len + 7)), std::string::npos) << msg;
  EXPECT_NE(msg.find("shorten the system prompt"), std::string::npos) << msg;
  // A template error is not a context error.
  auto bad = FitChatToContext(tmpl_, *tok_, Msgs{{"user", "a"}, {"user", "b"}}, true,
                              {4096, 16, 4});
  ASSERT_FALSE(bad.ok());
  EXPECT_FALSE(IsContextLengthExceeded(bad.status()));
}

TEST_F(ContextFitTest, LeadingAssistantGreetingIsATurnOfItsOwn) {
  const ChatTemplate chatml(ChatFormat::kChatMl);
  const Msgs m = {{"system", "Be brief."},
                  {"assistant", "Hello, how can I help you today with your account?"},
                  {"user", "My card is blocked, what can I do about it now?"},
                  {"assistant", "I can unblock it for you once you confirm who you are."},
                  {"user", "OK"}};
  auto count = [&](const Msgs& x) {
    return static_cast<int>(tok_->EncodePrompt(*chatml.Render(x, true), true).size());
  };
  const Msgs without_greeting = {m[0], m[2], m[3], m[4]};
  auto fit = FitChatToContext(chatml, *tok_, m, true, {count(without_greeting) + 5, 5, 1});
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_EQ(fit->dropped_messages, 1);
}

TEST(ContextFit, RawPromptCheck) {
  EXPECT_TRUE(CheckPromptFits(90, {100, 10, 4}).ok());
  EXPECT_TRUE(CheckPromptFits(96, {100, 10, 4}).ok());   // 4 answer tokens fit
  Status s = CheckPromptFits(97, {100, 10, 4});
  EXPECT_TRUE(IsContextLengthExceeded(s)) << s;
  EXPECT_NE(std::string(s.message()).find("97 tokens"), std::string::npos) << s;
  EXPECT_EQ(CheckPromptFits(10, {100, 0, 4}).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(IsContextLengthExceeded(OutOfRangeError("read past the end")));
  // The reason, not the text: a context added on the way keeps it, and look-alike text is not it.
  EXPECT_TRUE(IsContextLengthExceeded(s.WithContext("engine")));
  EXPECT_FALSE(IsContextLengthExceeded(OutOfRangeError(s.message())));
}

}  // namespace
}  // namespace hotline::engine
