#include "answer/kb/kb_lint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/build_paths.h"

namespace hotline::answer {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<LintIssue> Lint(const std::string& body, const std::string& tmpl = "") {
  return LintArticleText("a-1", body, tmpl, CompanyConfig{});
}

bool Has(const std::vector<LintIssue>& issues, LintKind kind) {
  for (const auto& i : issues) {
    if (i.kind == kind) return true;
  }
  return false;
}

std::string Describe(const std::vector<LintIssue>& issues) {
  std::string out;
  for (const auto& i : issues) {
    out += std::to_string(i.line) + " " + i.article_id + " " + std::string(LintKindName(i.kind)) +
           ": " + i.message + "\n";
  }
  return out;
}

TEST(KbLint, ActionableAnswerPasses) {
  EXPECT_TRUE(Lint("To cancel an order, log in to {{website}} and open Order History. Then press "
                   "Cancel Order.")
                  .empty());
  EXPECT_TRUE(Lint("Standard delivery takes {{delivery_time}}.").empty());
  EXPECT_TRUE(Lint("You can call us on {{phone}}, {{hours}}.").empty());
  // The template's {order_number} is an entity slot; in the body it is a hole when spoken.
  EXPECT_TRUE(Lint("Your order ships today. Track it on {{website}}.",
                   "Your order {order_number} ships today. Track it on {{website}}.")
                  .empty());
  auto hole = Lint("Your order {order_number} ships today. Track it on {{website}}.");
  EXPECT_TRUE(Has(hole, LintKind::kPlaceholder)) << Describe(hole);
  EXPECT_FALSE(Has(hole, LintKind::kFiller)) << Describe(hole);
}

TEST(KbLint, CatchesFillerWithNoConcreteStep) {
  auto issues = Lint("We are committed to helping you successfully cancel your order.");
  EXPECT_TRUE(Has(issues, LintKind::kFiller)) << Describe(issues);
  issues = Lint("Our team is available to help you through the cancellation process.");
  EXPECT_TRUE(Has(issues, LintKind::kFiller)) << Describe(issues);
  issues = Lint("Updating your shipping address is essential for ensuring a smooth delivery.");
  EXPECT_TRUE(Has(issues, LintKind::kFiller)) << Describe(issues);
}

TEST(KbLint, CatchesUnfilledPlaceholders) {
  EXPECT_TRUE(Has(Lint("Call {{Refund Policy Details}} to log in on the website."),
                  LintKind::kPlaceholder));
  EXPECT_TRUE(Has(Lint("Log in to {{website and open the page."), LintKind::kPlaceholder));
  EXPECT_TRUE(Has(Lint("Log in to {website_name} and open the page."), LintKind::kPlaceholder));
  EXPECT_TRUE(Has(Lint("Log in to [Website Name] and open the page."), LintKind::kPlaceholder));
  // A template slot that no entity fills.
  EXPECT_TRUE(Has(Lint("Log in to the website and open the page.",
                       "Log in to {website_name} and open the page."),
                  LintKind::kPlaceholder));
  // Bitext's own names for company facts are filled.
  EXPECT_FALSE(Has(Lint("Call {{Customer Support Phone Number}} to speak to an agent."),
                   LintKind::kPlaceholder));
}

TEST(KbLint, CatchesAFirstSentenceTooLongForOneBreath) {
  auto issues = Lint(
      "To change the delivery address of an order that has not shipped yet you can log in to "
      "the website, open your orders, pick the order and choose a new address from the list.");
  EXPECT_TRUE(Has(issues, LintKind::kLongSentence)) << Describe(issues);
  EXPECT_FALSE(Has(Lint("Log in to the website and open Order History."), LintKind::kLongSentence));
}

TEST(KbLint, CatchesMarkup) {
  EXPECT_TRUE(Has(Lint("Log in to the **website** and open the page."), LintKind::kMarkup));
  EXPECT_TRUE(Has(Lint("Open [the page](https://x.example) on the website."), LintKind::kMarkup));
  EXPECT_TRUE(Has(Lint("Log in to the website.\nOpen the page."), LintKind::kMarkup));
  EXPECT_TRUE(Has(Lint("Steps follow. 1. Log in to the website."), LintKind::kMarkup));
  EXPECT_TRUE(Has(Lint("Open the <b>Orders</b> page on the website."), LintKind::kMarkup));
}

TEST(KbLint, CatchesUnspeakableTokens) {
  EXPECT_TRUE(Has(Lint("Log in at https://shop.example/orders and open the page."),
                  LintKind::kUnspeakable));
  EXPECT_TRUE(
      Has(Lint("Write to help@example.com or call the phone line."), LintKind::kUnspeakable));
  EXPECT_TRUE(Has(Lint("Open Orders | Cancel on the website."), LintKind::kUnspeakable));
  EXPECT_TRUE(Has(Lint("Open the page on the website, e.g. Orders."), LintKind::kUnspeakable));
  EXPECT_TRUE(Has(Lint("Open the page on the website \xf0\x9f\x98\x8a."), LintKind::kUnspeakable));
  EXPECT_FALSE(Has(Lint("Open the \xe2\x80\x9cOrders\xe2\x80\x9d page on the website."),
                   LintKind::kUnspeakable));
}

TEST(KbLint, CsvIssuesNameTheLine) {
  const std::string csv =
      "id,title,body\n"
      "good-1,Good,\"Log in to {{website}} and open Order History.\"\n"
      "bad-1,Bad,\"Our team is here to assist you\n"
      "with anything.\"\n"
      "bad-2,Bad,\"Call {{Unknown Thing}} on the phone line.\"\n";
  auto issues = LintKnowledgeBaseCsv(csv);
  ASSERT_TRUE(issues.ok()) << issues.status();
  ASSERT_GE(issues->size(), 3u) << Describe(*issues);
  EXPECT_EQ((*issues)[0].line, 3);
  EXPECT_EQ((*issues)[0].article_id, "bad-1");
  EXPECT_EQ(issues->back().line, 5);
  EXPECT_EQ(issues->back().article_id, "bad-2");
  EXPECT_FALSE(LintKnowledgeBaseCsv("title\nx\n").ok());
}

// Every knowledge base Hotline ships is fit to be spoken.
TEST(KbLint, EveryShippedKnowledgeBasePasses) {
  int files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(HOTLINE_SOURCE_DIR) + "/assets/kb")) {
    if (entry.path().extension() != ".csv") continue;
    ++files;
    auto issues = LintKnowledgeBaseCsv(ReadFile(entry.path().string()));
    ASSERT_TRUE(issues.ok()) << entry.path() << ": " << issues.status();
    EXPECT_TRUE(issues->empty()) << entry.path() << ":\n" << Describe(*issues);
  }
  EXPECT_GE(files, 1);
}

}  // namespace
}  // namespace hotline::answer
