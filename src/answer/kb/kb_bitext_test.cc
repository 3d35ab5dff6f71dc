#include "answer/kb/kb_bitext.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "answer/eval/eval_data.h"
#include "answer/generate/postprocess.h"
#include "answer/kb/kb_lint.h"
#include "common/build_paths.h"

namespace hotline::answer {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(KbBitext, PlaceholdersBecomeSlotsAndSpokenDefaults) {
  EXPECT_EQ(PlaceholderSlot("Order Number Anonymized"), "order_number");
  EXPECT_EQ(PlaceholderSlot("Customer Support Phone Number"), "customer_support_phone_number");
  EXPECT_EQ(PlaceholderSpoken("Customer Support Phone Number"), "{{phone}}");
  EXPECT_EQ(PlaceholderSpoken("Website Name"), "{{website}}");
  EXPECT_EQ(PlaceholderSpoken("Order Number Anonymized"), "your order number");
  EXPECT_EQ(PlaceholderSpoken("Order History"), "Order History");
}

TEST(KbBitext, DerivesVoiceLengthArticlesFromASmallCorpus) {
  const std::string csv =
      "instruction,intent,entity_value,response\n"
      "where is my order,track_order,,\"I understand your concern! Here is how:\n\n"
      "1. Log in.\n2. Open {{Order History}}.\n\n"
      "To track your order, log in to {{Website Name}} and open {{Order History}}. "
      "Thank you for your patience!\"\n"
      "track order 123,track_order,123,\"To track your order, open the {{Order Tracking}} page "
      "on {{Website Name}}. If you need help, call {{Customer Support Phone Number}}.\"\n";
  auto articles = DeriveBitextArticles(csv);
  ASSERT_TRUE(articles.ok()) << articles.status();
  ASSERT_EQ(articles->size(), 2u);
  const Article& a = (*articles)[0];
  EXPECT_EQ(a.intent, "track_order");
  EXPECT_EQ(a.title, "Track order");
  // The instruction, its company fact as {{website}} (filled at load), no preamble or thanks.
  EXPECT_EQ(a.body, "To track your order, open the Order Tracking page on {{website}}.") << a.body;
  EXPECT_TRUE(LintArticleText(a.id, a.body, a.answer_template, CompanyConfig{}).empty());
  EXPECT_NE(a.questions.find("where is my order"), std::string::npos);  // no entity value
  const Article& b = (*articles)[1];
  EXPECT_EQ(b.body, "To track your order, log in to {{website}} and open Order History.") << b.body;
  EXPECT_FALSE(DeriveBitextArticles("intent,response\nx,y\n").ok());
}

// The shipped demo knowledge base is exactly what `hotline kb bitext` derives from the corpus.
TEST(KbBitext, ShippedDemoKnowledgeBaseIsReproducible) {
#ifdef HOTLINE_SANITIZE
  // ~1 s optimized but ~15 s unoptimized under ASan; the small-corpus test above runs the same
  // code under the sanitizers, and the normal build checks the full corpus.
  GTEST_SKIP() << "full-corpus derivation is checked in the optimized build";
#endif
  const std::string corpus =
      ReadFile(std::string(HOTLINE_SHARED_DATA_DIR) + "/support/bitext/customer_support.csv");
  if (corpus.empty()) GTEST_SKIP() << "Bitext corpus not found under HOTLINE_SHARED_DATA_DIR";
  const std::string clinc =
      std::string(HOTLINE_SHARED_DATA_DIR) + "/intent/clinc150/data_full.json";
  if (ReadFile(clinc).empty()) GTEST_SKIP() << "CLINC150 not found under HOTLINE_SHARED_DATA_DIR";
  auto train = LoadLabelledTexts(clinc, "train");
  ASSERT_TRUE(train.ok()) << train.status();
  BitextDeriveOptions options;
  for (const LabelledText& q : *train) AddClincQuestion(q.label, q.text, options);
  auto articles = DeriveBitextArticles(corpus, options);
  ASSERT_TRUE(articles.ok()) << articles.status();
  std::set<std::string> intents;
  for (const auto& a : *articles) {
    intents.insert(a.intent);
    EXPECT_LE(a.body.size(), 240u) << a.id;
    EXPECT_LE(SplitSentences(a.body).size(), 2u) << a.id;
    EXPECT_TRUE(LintArticleText(a.id, a.body, a.answer_template, CompanyConfig{}).empty()) << a.id;
    EXPECT_FALSE(a.questions.empty()) << a.id;
  }
  EXPECT_EQ(intents.size(), 27u);
  EXPECT_EQ(ArticlesToCsv(*articles),
            ReadFile(std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/bitext_kb.csv"))
      << "regenerate with: hotline kb bitext --in " << HOTLINE_SHARED_DATA_DIR
      << "/support/bitext/customer_support.csv --clinc " << clinc
      << " --out assets/kb/bitext_kb.csv";
}

// CLINC150 questions join the Bitext intent they ask about, each article its own slice, none
// twice; a separator inside one cannot split it; other CLINC150 intents are not taken.
TEST(KbBitext, ExtraQuestionsJoinTheirIntentsArticles) {
  const std::string csv =
      "instruction,intent,entity_value,response\n"
      "track order 123,track_order,123,\"To track your order, open the {{Order Tracking}} page "
      "on {{Website Name}}.\"\n"
      "where do i see the status,track_order,,\"To track your order, log in to {{Website Name}} "
      "and open {{Order History}}.\"\n";
  BitextDeriveOptions options;
  for (const char* q : {"where's my package", "did my order ship", "has it | arrived",
                        "where do i see the status", "did my order ship"}) {
    EXPECT_TRUE(AddClincQuestion("order_status", q, options));
  }
  EXPECT_FALSE(AddClincQuestion("weather", "is it raining", options));
  options.extra_questions["no_such_intent"] = {"ignored"};
  auto articles = DeriveBitextArticles(csv, options);
  ASSERT_TRUE(articles.ok()) << articles.status();
  ASSERT_EQ(articles->size(), 2u);
  std::multiset<std::string> extra;
  for (const Article& a : *articles) {
    std::stringstream in(a.questions);
    for (std::string q; std::getline(in, q, '|');) {
      if (q != "track order" && q != "where do i see the status") extra.insert(q);
    }
  }
  // Three new ones (the fourth is the corpus's own, the fifth a repeat), each once; "has it |
  // arrived" whole.
  EXPECT_EQ(extra, (std::multiset<std::string>{"where's my package", "did my order ship",
                                               "has it   arrived"}));
}

}  // namespace
}  // namespace hotline::answer
