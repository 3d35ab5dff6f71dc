#include "answer/understand/clarify.h"

#include <gtest/gtest.h>

#include "answer/understand/normalize.h"

namespace hotline::answer {
namespace {

IntentPrediction Guess(const char* a, const char* b, double p, double margin, double top_two) {
  IntentPrediction r;
  r.intent = a;
  r.runner_up = b;
  r.probability = p;
  r.margin = margin;
  r.top_two = top_two;
  return r;
}

std::string Topic(const std::string& intent) {
  if (intent == "cancel_order") return "Cancel order";
  if (intent == "track_order") return "Track order";
  if (intent == "check_bill") return "账单查询";
  if (intent == "billing_dispute") return "扣费疑问";
  return "";
}

// "Is this about cancel order, or about track order?"
PendingClarification OrderChoice() {
  return {PendingClarification::Kind::kChoice, {"cancel_order", "track_order"},
          {"Cancel order", "Track order"}, "what about my order"};
}

// "You'd like help with cancel order. Is that right?"
PendingClarification CancelConfirmation() {
  return {PendingClarification::Kind::kConfirm, {"cancel_order"}, {"Cancel order"}, "cancel"};
}

TEST(Clarify, ChoiceConfirmOrNothing) {
  ClarifyConfig c;
  c.enabled = true;
  auto choice = DecideClarification(Guess("cancel_order", "track_order", 0.45, 0.1, 0.8), c, Topic);
  ASSERT_TRUE(choice.has_value());
  EXPECT_EQ(choice->kind, PendingClarification::Kind::kChoice);
  EXPECT_EQ(ClarificationText(*choice, c), "Is this about cancel order, or about track order?");
  auto confirm = DecideClarification(Guess("cancel_order", "track_order", 0.6, 0.5, 0.7), c, Topic);
  ASSERT_TRUE(confirm.has_value());
  EXPECT_EQ(ClarificationText(*confirm, c), "You'd like help with cancel order. Is that right?");
  // Too unsure for either, accepted, off, or a topic without a title: nothing to ask.
  EXPECT_FALSE(DecideClarification(Guess("cancel_order", "track_order", 0.3, 0.4, 0.4), c, Topic));
  IntentPrediction accepted = Guess("cancel_order", "track_order", 0.9, 0.8, 1.0);
  accepted.accepted = true;
  EXPECT_FALSE(DecideClarification(accepted, c, Topic));
  EXPECT_FALSE(DecideClarification(Guess("unknown", "track_order", 0.6, 0.5, 0.7), c, Topic));
  ClarifyConfig off;
  EXPECT_FALSE(DecideClarification(Guess("cancel_order", "track_order", 0.45, 0.1, 0.8), off, Topic));
}

ClarificationReply Read(const PendingClarification& p, const char* reply) {
  return ResolveClarification(p, NormalizeText(reply));
}

TEST(Clarify, RepliesAreRead) {
  using Outcome = ClarificationReply::Outcome;
  const PendingClarification choice = OrderChoice();
  EXPECT_EQ(Read(choice, "The first one, please.").intent, "cancel_order");
  EXPECT_EQ(Read(choice, "the other one").intent, "track_order");
  EXPECT_EQ(Read(choice, "2").intent, "track_order");
  EXPECT_EQ(Read(choice, "I want to cancel it").intent, "cancel_order");
  EXPECT_EQ(Read(choice, "tracking... track it").intent, "track_order");
  EXPECT_EQ(Read(choice, "neither").outcome, Outcome::kDeclined);
  EXPECT_EQ(Read(choice, "yes").outcome, Outcome::kUnclear);  // yes to "A or B?" says nothing
  EXPECT_EQ(Read(choice, "my order").outcome, Outcome::kUnclear);  // both topics' word
  const PendingClarification confirm = CancelConfirmation();
  EXPECT_EQ(Read(confirm, "Yes, that's right").intent, "cancel_order");
  EXPECT_EQ(Read(confirm, "yeah").outcome, Outcome::kChosen);
  EXPECT_EQ(Read(confirm, "No, I meant something else").outcome, Outcome::kDeclined);
  EXPECT_EQ(Read(confirm, "what are your hours").outcome, Outcome::kUnclear);
}

// Every reply the recognizer's language model is taught is read as something: yes or no to a
// confirmation, or one of the two topics or neither for a choice.
TEST(Clarify, EveryTaughtReplyIsUnderstood) {
  using Outcome = ClarificationReply::Outcome;
  const PendingClarification choice = OrderChoice();
  const PendingClarification confirm = CancelConfirmation();
  ASSERT_FALSE(EnglishClarificationReplies().empty());
  for (const std::string& reply : EnglishClarificationReplies()) {
    const bool to_confirm = Read(confirm, reply.c_str()).outcome != Outcome::kUnclear;
    const bool to_choice = Read(choice, reply.c_str()).outcome != Outcome::kUnclear;
    EXPECT_TRUE(to_confirm || to_choice) << reply;
  }
}

TEST(Clarify, ChineseRepliesAreRead) {
  const PendingClarification choice{PendingClarification::Kind::kChoice,
                                    {"check_bill", "billing_dispute"},
                                    {"账单查询", "扣费疑问"},
                                    "话费不对"};
  EXPECT_EQ(Read(choice, "第一个").intent, "check_bill");
  EXPECT_EQ(Read(choice, "后一个").intent, "billing_dispute");
  EXPECT_EQ(Read(choice, "我要查账单").intent, "check_bill");
  const PendingClarification confirm{PendingClarification::Kind::kConfirm, {"check_bill"},
                                     {"账单查询"}, "话费"};
  EXPECT_EQ(Read(confirm, "是的").intent, "check_bill");
  EXPECT_EQ(Read(confirm, "对").intent, "check_bill");
  EXPECT_EQ(Read(confirm, "不是").outcome, ClarificationReply::Outcome::kDeclined);
}

TEST(Clarify, ConfigIsValidated) {
  ClarifyConfig c;
  EXPECT_TRUE(c.Validate().ok());
  c.choice_max_margin = 1.5;
  EXPECT_FALSE(c.Validate().ok());
  c = ClarifyConfig{};
  c.choice_text = "Which one?";
  EXPECT_NE(c.Validate().message().find("{a} and {b}"), std::string::npos);
}

}  // namespace
}  // namespace hotline::answer
