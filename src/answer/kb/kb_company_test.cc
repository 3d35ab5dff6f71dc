#include "answer/kb/kb_company.h"

#include <gtest/gtest.h>

#include "answer/generate/postprocess.h"
#include "answer/kb/knowledge_base.h"

namespace hotline::answer {
namespace {

TEST(KbCompany, KeysAndTheCorpusNamesForThem) {
  EXPECT_EQ(CompanyKeyOf("phone"), "phone");
  EXPECT_EQ(CompanyKeyOf("Customer Support Phone Number"), "phone");
  EXPECT_EQ(CompanyKeyOf("Website Name"), "website");
  EXPECT_EQ(CompanyKeyOf("Customer Support Availability"), "hours");
  EXPECT_EQ(CompanyKeyOf("refund_window"), "refund_window");
  EXPECT_EQ(CompanyKeyOf("Order History"), "");
  const auto keys = CompanyKeys();
  ASSERT_FALSE(keys.empty());
  EXPECT_EQ(keys.front(), "name");
}

TEST(KbCompany, FillsKnownPlaceholdersAndRefusesUnknownOnes) {
  CompanyConfig c;
  c.phone = "0 800 123 456";
  c.refund_window = "14 days";
  auto s = FillCompanyPlaceholders("Call {{phone}} within {{Refund Window}}.", c);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, "Call 0 800 123 456 within 14 days.");
  auto bad = FillCompanyPlaceholders("See {{Refund Policy Details}}.", c);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("Refund Policy Details"), std::string::npos);
  EXPECT_NE(bad.status().message().find("phone"), std::string::npos);  // lists the known keys
  EXPECT_FALSE(FillCompanyPlaceholders("Call {{phone now.", c).ok());
  EXPECT_FALSE(FillCompanyPlaceholders("Call phone}} now.", c).ok());
}

TEST(KbCompany, RunTimeDropsTheSentenceWithAHole) {
  CompanyConfig c;
  EXPECT_EQ(
      DropUnfilledPlaceholders("Open Orders. See {{Refund Policy Details}}. Call {{phone}}.", c),
      "Open Orders. Call " + c.phone + ".");
  EXPECT_EQ(DropUnfilledPlaceholders("See {{Nothing}}.", c), "");
  EXPECT_EQ(DropUnfilledPlaceholders("No placeholder {here}.", c), "No placeholder {here}.");
}

TEST(KbCompany, ModelOutputIsFilledWithCompanyFacts) {
  CompanyConfig c;
  c.website = "shop dot example";
  const std::string spoken = PostprocessForSpeech(
      "Visit {{Website Name}} to order. Then see {{Refund Policy Details}}.", CompanySlots(c));
  EXPECT_EQ(spoken, "Visit shop dot example to order.");
}

TEST(KbCompany, ValidateNamesTheEmptyKey) {
  CompanyConfig c;
  EXPECT_TRUE(c.Validate().ok());
  c.hours = "";
  ASSERT_FALSE(c.Validate().ok());
  EXPECT_NE(c.Validate().message().find("hours"), std::string::npos);
  c = CompanyConfig{};
  c.phone = "{{phone}}";
  EXPECT_FALSE(c.Validate().ok());
}

TEST(KbCompany, KnowledgeBaseImportFillsFactsAndRefusesUnknownPlaceholders) {
  auto kb = KnowledgeBase::Open(":memory:", true);
  ASSERT_TRUE(kb.ok()) << kb.status();
  CompanyConfig c;
  c.phone = "0 800 42";
  (*kb)->SetCompany(c);
  auto ok = (*kb)->ImportCsv(
      "id,title,body,template\n"
      "a,Call,\"Call {{phone}} or {{Customer Support Phone Number}}.\",\"Call {{phone}} about "
      "{order_number}.\"\n",
      "kb.csv");
  ASSERT_TRUE(ok.ok()) << ok.status();
  auto a = (*kb)->Get("a");
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->body, "Call 0 800 42 or 0 800 42.");
  EXPECT_EQ((*a)->answer_template, "Call 0 800 42 about {order_number}.");
  auto bad = (*kb)->ImportCsv("id,title,body\nb,B,\"Open Orders.\"\nc,C,\"See {{Policy Text}}.\"\n",
                              "kb.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("kb.csv:3"), std::string::npos) << bad.status();
  EXPECT_NE(bad.status().message().find("Policy Text"), std::string::npos);
  auto none = (*kb)->Get("b");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());  // all or nothing
}

}  // namespace
}  // namespace hotline::answer
