#include "answer/kb/knowledge_base.h"

#include <gtest/gtest.h>

#include "answer/kb/kb_csv.h"

namespace hotline::answer {
namespace {

std::unique_ptr<KnowledgeBase> OpenMemory() {
  auto kb = KnowledgeBase::Open(":memory:", true);
  EXPECT_TRUE(kb.ok()) << kb.status();
  return std::move(kb).value();
}

constexpr const char* kGood =
    "id,title,intent,body,questions\n"
    "refund-policy,Refund policy,check_refund_policy,\"Refunds are accepted within 30 days, "
    "with the receipt.\",can I get my money back|what is your refund policy\n"
    "track-order,Track an order,track_order,You can track your order under Orders in your "
    "account.,where is my order|track my package\n"
    "delivery-time,Delivery period,delivery_period,\"Standard delivery takes 3 to 5 business "
    "days.\",how long does shipping take\n";

TEST(CsvReader, QuotedFieldsWithCommasNewlinesAndQuotes) {
  CsvReader r("a,b\r\n\"x, \"\"y\"\"\nz\",2\n");
  CsvRecord rec;
  ASSERT_TRUE(r.Next(rec).value());
  EXPECT_EQ(rec.fields, (std::vector<std::string>{"a", "b"}));
  ASSERT_TRUE(r.Next(rec).value());
  EXPECT_EQ(rec.line, 2);
  EXPECT_EQ(rec.fields, (std::vector<std::string>{"x, \"y\"\nz", "2"}));
  EXPECT_FALSE(r.Next(rec).value());
}

TEST(CsvReader, ErrorsNameTheLine) {
  CsvRecord rec;
  CsvReader unterminated("a,b\n1,\"open\n2,3\n");
  ASSERT_TRUE(unterminated.Next(rec).ok());
  auto e = unterminated.Next(rec);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("line 2"), std::string::npos) << e.status();
  EXPECT_NE(e.status().message().find("never closed"), std::string::npos);

  CsvReader stray("a,b\n1,x\"y\n");
  ASSERT_TRUE(stray.Next(rec).ok());
  e = stray.Next(rec);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("line 2"), std::string::npos);

  CsvReader trailing("\"a\"b\n");
  EXPECT_FALSE(trailing.Next(rec).ok());
}

TEST(CsvReader, RefusesTextThatIsNotUtf8NamingItsLine) {
  CsvRecord rec;
  // Latin-1 "café" on the 2nd line of a quoted multi-line field that starts on line 2.
  CsvReader latin1("a,b\nok,\"first line\ncaf\xe9\"\n");
  ASSERT_TRUE(latin1.Next(rec).ok());
  auto e = latin1.Next(rec);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("line 3"), std::string::npos) << e.status();
  EXPECT_NE(e.status().message().find("field 2"), std::string::npos) << e.status();
  EXPECT_NE(e.status().message().find("UTF-8"), std::string::npos) << e.status();
}

TEST(KnowledgeBase, ImportRefusesInvalidUtf8AndKeepsTheOldArticles) {
  auto kb = OpenMemory();
  ASSERT_TRUE(kb->ImportCsv(kGood, "kb.csv").ok());
  const size_t before = kb->All().value().size();
  std::string bad(kGood);
  bad.insert(bad.find('\n', bad.find('\n') + 1), "\xff");  // end of the 2nd line
  auto r = kb->ImportCsv(bad, "bad.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("line 2"), std::string::npos) << r.status();
  EXPECT_EQ(kb->All().value().size(), before);
}

TEST(KnowledgeBase, ImportsAndRanksWithBm25) {
  auto kb = OpenMemory();
  auto report = kb->ImportCsv(kGood, "kb.csv");
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(report->added, 3);
  EXPECT_EQ(report->generation, 1);
  EXPECT_EQ(kb->Count().value(), 3);

  auto hits = kb->Search("How long does delivery take?", 3);
  ASSERT_TRUE(hits.ok()) << hits.status();
  ASSERT_FALSE(hits->empty());
  EXPECT_EQ((*hits)[0].article.id, "delivery-time");
  EXPECT_GT((*hits)[0].score, 0);
  for (size_t i = 1; i < hits->size(); ++i) EXPECT_GE((*hits)[i - 1].score, (*hits)[i].score);

  hits = kb->Search("I want my money back", 1);
  ASSERT_EQ(hits->size(), 1u);
  EXPECT_EQ((*hits)[0].article.id, "refund-policy");
  EXPECT_EQ((*hits)[0].article.intent, "check_refund_policy");
  EXPECT_EQ(kb->ByIntent("track_order").value().size(), 1u);
}

TEST(KnowledgeBase, QueryTextCannotInjectFtsSyntax) {
  auto kb = OpenMemory();
  ASSERT_TRUE(kb->ImportCsv(kGood, "kb.csv").ok());
  for (const char* q : {"\"unbalanced", "order AND OR NOT", "track*", "NEAR(a b)", "title:refund",
                        "-", "", "'); DROP TABLE articles; --"}) {
    auto hits = kb->Search(q, 3);
    EXPECT_TRUE(hits.ok()) << q << ": " << hits.status();
  }
  EXPECT_EQ(kb->Count().value(), 3);
}

TEST(KnowledgeBase, MalformedCsvReportsLineAndImportsNothing) {
  auto kb = OpenMemory();
  ASSERT_TRUE(kb->ImportCsv(kGood, "kb.csv").ok());
  struct Case {
    std::string csv;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"id,title,body\nnew-1,New,Fine.\nnew-2,Broken,\"never closed\n", "kb.csv: line 3"},
      {"id,title,body\nnew-1,New,Fine.\nnew-2,Too,many,fields\n", "kb.csv:3: has 4 fields"},
      {"id,title,body\nnew-1,New,Fine.\nnew-1,Again,Dup.\n", "kb.csv:3: id 'new-1' already used on line 2"},
      {"id,title,body\nnew-1,New,Fine.\nbad id,T,B\n", "kb.csv:3: id 'bad id'"},
      {"id,title,body\nnew-1,New,Fine.\nnew-2,,B\n", "kb.csv:3: title is empty"},
      {"id,title,colour\n", "kb.csv:1: unknown column 'colour'"},
      {"id,body\n", "kb.csv:1: header lacks the required column 'title'"},
      {"", "empty file"},
      // A change to an existing article before the bad line must be rolled back too.
      {"id,title,body\nrefund-policy,Refund policy,Changed text.\nnew-2,x\"y,B\n", "kb.csv: line 3"},
  };
  for (const auto& c : cases) {
    auto r = kb->ImportCsv(c.csv, "kb.csv");
    ASSERT_FALSE(r.ok()) << c.csv;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.expect), std::string::npos)
        << "got: " << r.status().message() << "\nwanted: " << c.expect;
    EXPECT_EQ(kb->Count().value(), 3);
    EXPECT_EQ(kb->Generation().value(), 1);
    EXPECT_FALSE(kb->Get("new-1").value().has_value());
  }
  EXPECT_EQ(kb->Get("refund-policy").value()->body,
            "Refunds are accepted within 30 days, with the receipt.");
}

TEST(KnowledgeBase, ReimportBumpsVersionsOfChangedArticlesOnly) {
  auto kb = OpenMemory();
  ASSERT_TRUE(kb->ImportCsv(kGood, "kb.csv").ok());
  auto again = kb->ImportCsv(kGood, "kb.csv");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->unchanged, 3);
  EXPECT_EQ(again->generation, 1);  // nothing changed: same generation

  auto changed = kb->ImportCsv(
      "id,title,body,intent\ndelivery-time,Delivery period,Standard delivery takes 2 days.,"
      "delivery_period\nnew-article,New,Brand new.,\n",
      "update.csv");
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(changed->updated, 1);
  EXPECT_EQ(changed->added, 1);
  EXPECT_EQ(changed->generation, 2);
  auto since = kb->ChangedSince(1).value();
  ASSERT_EQ(since.size(), 2u);
  EXPECT_EQ(since[0].id, "delivery-time");
  EXPECT_EQ(since[0].version, 2);
  EXPECT_EQ(since[1].id, "new-article");
  // The index follows the update: the old text is gone, the new text is found.
  auto hits = kb->Search("2 days", 1).value();
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].article.body, "Standard delivery takes 2 days.");
}

TEST(KnowledgeBase, JsonLinesAndCjkTrigramSearch) {
  auto kb = OpenMemory();
  auto r = kb->ImportJsonl(
      "{\"id\":\"zh-refund\",\"title\":\"退款政策\",\"body\":\"您可以在三十天内申请退款。\"}\n"
      "\n"
      "{\"id\":\"en\",\"title\":\"English\",\"body\":\"Plain text.\"}\n",
      "kb.jsonl");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->added, 2);
  auto hits = kb->Search("怎么申请退款", 3).value();
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].article.id, "zh-refund");
  // The normalized form of a turn (one word per character) finds the same article, same score.
  auto spaced = kb->Search("怎 么 申 请 退 款", 3).value();
  ASSERT_FALSE(spaced.empty());
  EXPECT_EQ(spaced[0].article.id, "zh-refund");
  EXPECT_DOUBLE_EQ(spaced[0].score, hits[0].score);

  auto bad = kb->ImportJsonl("{\"id\":\"x\",\"title\":\"t\",\"body\":\"b\"}\n{\"id\":1}\n", "kb.jsonl");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("kb.jsonl:2: 'id' is not a string"), std::string::npos)
      << bad.status();
  EXPECT_EQ(kb->Count().value(), 2);
}

TEST(SplitQuestions, SplitsOnBarsAndDropsEmptyOnes) {
  EXPECT_EQ(SplitQuestions("where is my order|track my order"),
            (std::vector<std::string>{"where is my order", "track my order"}));
  EXPECT_EQ(SplitQuestions("|one||two|"), (std::vector<std::string>{"one", "two"}));
  EXPECT_TRUE(SplitQuestions("").empty());
}

}  // namespace
}  // namespace hotline::answer
