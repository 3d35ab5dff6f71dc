// Two Hotline processes (two Answerers) sharing L3 through a real redis-server: shareable answers
// computed by one are served by the other; a caller's bill amount is never served to anyone else.
#include <string>
#include <unistd.h>
#include <gtest/gtest.h>

#include <cctype>

#include "answer/answerer.h"
#include "answer/cache/redis_store.h"
#include "common/build_paths.h"
#include "redis_server.h"

namespace hotline::answer {
namespace {

Result<Question> Understand(std::string_view turn) {
  Question q;
  for (char c : turn) {
    if (std::isdigit(static_cast<unsigned char>(c))) q.digits.push_back(c);
    if (std::isalnum(static_cast<unsigned char>(c)) || c == ' ') {
      q.text.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  if (q.text.find("bill") != std::string::npos) q.intent = "get_invoice";
  return q;
}

class Node {
 public:
  Node(int redis_port, const std::string& kb_path, AccountsDb& accounts) {
    RedisStoreConfig rc;
    rc.port = redis_port;
    rc.key_prefix = "it:";
    store_ = RedisStore::Create(rc).value();
    l3_ = std::make_unique<ResultCache>(*store_, ResultCacheConfig{});
    kb_ = KnowledgeBase::Open(kb_path, false).value();
    tools_ = CreateDemoTools(accounts).value();
    identifier_ = std::make_unique<CallerIdentifier>(accounts, CallerConfig{});
    AnswererParts parts;
    parts.understand = Understand;
    parts.l3 = l3_.get();
    parts.kb = kb_.get();
    parts.tools = &tools_;
    parts.identifier = identifier_.get();
    AnswererConfig config;
    config.kb_direct_min_score = 0.5;
    answerer_ = Answerer::Create(config, parts).value();
  }
  AnswerResult Ask(std::string_view turn, CallerSession& caller) {
    auto r = answerer_->Answer(turn, caller);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : AnswerResult{};
  }
  Answerer& answerer() { return *answerer_; }
  ResultCache& l3() { return *l3_; }

 private:
  std::unique_ptr<RedisStore> store_;
  std::unique_ptr<ResultCache> l3_;
  std::unique_ptr<KnowledgeBase> kb_;
  ToolRegistry tools_;
  std::unique_ptr<CallerIdentifier> identifier_;
  std::unique_ptr<Answerer> answerer_;
};

TEST(AnswererWithRedis, NodesShareAnswersButNeverACallersBill) {
  testing::RedisServer server;
  ASSERT_TRUE(server.Start().ok());
  const std::string kb_path = std::string(HOTLINE_BINARY_DIR) + "/answerer_redis_test_kb_" + std::to_string(::getpid()) + ".sqlite";
  std::remove(kb_path.c_str());
  {
    auto kb = KnowledgeBase::Open(kb_path, true).value();
    ASSERT_TRUE(kb->ImportFile(std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/bitext_kb.csv").ok());
  }
  auto accounts = AccountsDb::Open(":memory:", true).value();
  ASSERT_TRUE(accounts->SeedDemo().ok());
  Node a(server.port(), kb_path, *accounts), b(server.port(), kb_path, *accounts);

  CallerSession anyone("+15550199");
  AnswerResult first = a.Ask("How can I track my refund?", anyone);
  ASSERT_EQ(first.tier, AnswerTierId::kKnowledgeBase);
  AnswerResult shared = b.Ask("How can I track my refund?", anyone);
  EXPECT_EQ(shared.tier, AnswerTierId::kL3);  // computed on node a, served by node b
  EXPECT_EQ(shared.text, first.text);

  CallerSession alice("+15550100");
  ASSERT_EQ(a.Ask("What was my bill?", alice).tier, AnswerTierId::kIdentify);
  AnswerResult bill = a.Ask("4821", alice);
  ASSERT_EQ(bill.text, "Your bill for November 2026 was $42.17.");
  for (Node* node : {&a, &b}) {
    CallerSession other("+15550100");  // same caller ID, no PIN
    AnswerResult r = node->Ask("What was my bill?", other);
    EXPECT_EQ(r.text.find("42.17"), std::string::npos);
    CallerSession bob("+15550101");
    ASSERT_TRUE(node->answerer().SubmitPin(bob, "1379").ok());
    r = node->Ask("What was my bill?", bob);
    EXPECT_EQ(r.text, "Your bill for November 2026 was $93.12.");
    auto cached = node->l3().Lookup("what was my bill");
    ASSERT_TRUE(cached.ok());
    EXPECT_FALSE(cached->has_value());
  }
  std::remove(kb_path.c_str());
}

}  // namespace
}  // namespace hotline::answer
