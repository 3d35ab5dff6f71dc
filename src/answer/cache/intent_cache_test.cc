#include "answer/cache/intent_cache.h"

#include <gtest/gtest.h>

#include "answer/understand/normalize.h"
#include "answer/understand/understanding.h"

namespace hotline::answer {
namespace {

IntentPrediction Accepted(const std::string& intent, double confidence = 0.99) {
  IntentPrediction p;
  p.intent = intent;
  p.accepted = true;
  p.confidence = confidence;
  return p;
}

// Bills per caller, as an accounts database would answer; requires an identified caller.
class FakeBillTool : public SlotTool {
 public:
  Result<SlotMap> Call(std::string_view name, const SlotMap& slots) override {
    ++calls;
    if (name != "last_bill") return NotFoundError("no tool " + std::string(name));
    auto caller = slots.find("caller_id");
    if (caller == slots.end()) return PermissionDeniedError("caller not identified");
    SlotMap out;
    out["amount"] = caller->second == "alice" ? "42.10" : "77.00";
    if (!slots.count("month")) out["month"] = "last month";
    return out;
  }
  int calls = 0;
};

IntentCache MakeCache() {
  IntentCache c;
  EXPECT_TRUE(c.AddTemplate({"opening_hours", "We are open nine to five.", "", ""}).ok());
  EXPECT_TRUE(c.AddTemplate({"order_status", "Order {order_number} is on its way.", "",
                             "What is your order number?"})
                  .ok());
  EXPECT_TRUE(c.AddTemplate({"bill", "Your bill for {month} is {amount} dollars.", "last_bill",
                             ""})
                  .ok());
  return c;
}

TEST(IntentCache, AnswersAcceptedIntentsWithoutSlots) {
  IntentCache c = MakeCache();
  L1Result r = c.Answer(Accepted("opening_hours"), {}, {}, nullptr);
  EXPECT_EQ(r.outcome, L1Outcome::kAnswer);
  EXPECT_EQ(r.text, "We are open nine to five.");
  EXPECT_FALSE(r.personal);
}

TEST(IntentCache, RejectedOrUnknownIntentsFallThrough) {
  IntentCache c = MakeCache();
  IntentPrediction p = Accepted("opening_hours");
  p.accepted = false;
  EXPECT_EQ(c.Answer(p, {}, {}, nullptr).outcome, L1Outcome::kMiss);
  EXPECT_EQ(c.Answer(Accepted("weather"), {}, {}, nullptr).outcome, L1Outcome::kMiss);
  IntentCacheConfig strict;
  strict.min_confidence = 0.995;
  IntentCache s(strict);
  ASSERT_TRUE(s.AddTemplate({"opening_hours", "Open.", "", ""}).ok());
  EXPECT_EQ(s.Answer(Accepted("opening_hours", 0.99), {}, {}, nullptr).outcome, L1Outcome::kMiss);
}

TEST(IntentCache, SlotsFromEntitiesOrAClarifyingQuestion) {
  IntentCache c = MakeCache();
  Understanding u = Understand("where is my order number A5531?");
  L1Result r = c.Answer(Accepted("order_status"), u.entities, {}, nullptr);
  EXPECT_EQ(r.outcome, L1Outcome::kAnswer);
  EXPECT_EQ(r.text, "Order a5531 is on its way.");
  r = c.Answer(Accepted("order_status"), Understand("where is my order").entities, {}, nullptr);
  EXPECT_EQ(r.outcome, L1Outcome::kClarify);
  EXPECT_EQ(r.text, "What is your order number?");
  ASSERT_EQ(r.missing_slots.size(), 1u);
  EXPECT_EQ(r.missing_slots[0], "order_number");
  IntentCacheConfig no_questions;
  no_questions.ask_clarifying_question = false;
  IntentCache quiet(no_questions);
  ASSERT_TRUE(quiet.AddTemplate({"order_status", "Order {order_number}.", "", "Which?"}).ok());
  EXPECT_EQ(quiet.Answer(Accepted("order_status"), {}, {}, nullptr).outcome, L1Outcome::kMiss);
}

TEST(IntentCache, ToolAnswersArePersonalAndPerCaller) {
  IntentCache c = MakeCache();
  FakeBillTool tool;
  auto entities = Understand("what was my bill in march").entities;
  L1Result alice = c.Answer(Accepted("bill"), entities, {{"caller_id", "alice"}}, &tool);
  ASSERT_EQ(alice.outcome, L1Outcome::kAnswer) << alice.reason;
  EXPECT_EQ(alice.text, "Your bill for 03 is 42.10 dollars.");
  EXPECT_TRUE(alice.personal);
  // The same question from another caller never gets Alice's amount: L1 keeps no answers.
  L1Result bob = c.Answer(Accepted("bill"), entities, {{"caller_id", "bob"}}, &tool);
  ASSERT_EQ(bob.outcome, L1Outcome::kAnswer);
  EXPECT_EQ(bob.text.find("42.10"), std::string::npos);
  EXPECT_NE(bob.text.find("77.00"), std::string::npos);
  EXPECT_EQ(tool.calls, 2);
  // Unidentified caller: the tool refuses, the tier falls through.
  L1Result anon = c.Answer(Accepted("bill"), entities, {}, &tool);
  EXPECT_EQ(anon.outcome, L1Outcome::kMiss);
  EXPECT_NE(anon.reason.find("not identified"), std::string::npos);
  EXPECT_EQ(c.Answer(Accepted("bill"), entities, {}, nullptr).outcome, L1Outcome::kMiss);
}

TEST(IntentCache, TemplateParsing) {
  auto slots = TemplateSlots("Hi {name}, order {order_number} for {name}. {{literal}}");
  ASSERT_TRUE(slots.ok());
  EXPECT_EQ(*slots, (std::vector<std::string>{"name", "order_number"}));
  EXPECT_FALSE(TemplateSlots("broken {name").ok());
  EXPECT_FALSE(TemplateSlots("stray } brace").ok());
  EXPECT_FALSE(TemplateSlots("bad {na me}").ok());
  EXPECT_FALSE(TemplateSlots("empty {}").ok());
  auto filled = FillTemplate("{{x}} {a}", {{"a", "1"}});
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(*filled, "{x} 1");
  EXPECT_FALSE(FillTemplate("{a}", {}).ok());
  IntentCache c;
  EXPECT_FALSE(c.AddTemplate({"", "x", "", ""}).ok());
  EXPECT_FALSE(c.AddTemplate({"i", "bad {", "", ""}).ok());
}

}  // namespace
}  // namespace hotline::answer
