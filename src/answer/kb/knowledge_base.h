// KnowledgeBase: articles in SQLite with FTS5 full-text search (BM25 ranking).
//
// An article has an id, title, body (the voice-length answer), intent, an optional answer
// template with {slot} placeholders, optional example questions (indexed for retrieval, never
// spoken) and a version that increases whenever its content changes. Two FTS5 indexes cover
// title + body + questions: one with the porter/unicode61 tokenizer for alphabetic languages and
// one with the trigram tokenizer, used for queries in scripts without spaces between words (CJK).
//
// Company facts written {{key}} in an article's title, body or template ("Call us on {{phone}}.")
// are filled at import from the knowledge base's CompanyConfig (demo defaults until SetCompany);
// an unknown {{name}} fails the import with its line (kb_company.h).
//
// Imports (CSV or JSON lines) are all-or-nothing: one transaction, rolled back on the first
// malformed record, whose line and problem the error names. An import upserts by id; every
// import that changes something increments the knowledge base's generation, and the changed
// articles record it, so a running process can find what changed since it last looked
// (ChangedSince) and invalidate the cached answers built from those articles.
//
// Thread-safety: all methods are thread-safe; calls are serialized on one SQLite connection.
// Blocking: disk I/O (the page cache keeps a small knowledge base in memory); call from worker
// threads, not I/O threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "answer/kb/kb_company.h"
#include "common/status.h"

struct sqlite3;

namespace hotline::answer {

struct KnowledgeBaseConfig {
  // SQLite file of the knowledge base (created by `hotline kb import`).
  std::string path = "kb.sqlite";
  // Passages retrieved per question. More grounds the LLM better but lengthens the prompt.
  int top_k = 3;
  // Lowest BM25 score (higher = better match) for a passage to count as retrieved. Higher
  // keeps irrelevant passages out of the prompt but sends more questions to the LLM unaided.
  double min_score = 0.0;

  template <class V>
  void Visit(V& v) {
    v.Field("path", path, "SQLite file of the knowledge base");
    v.Field("top_k", top_k, "Passages retrieved per question");
    v.Field("min_score", min_score, "Lowest BM25 score of a retrieved passage");
  }
  Status Validate() const;
};

struct Article {
  std::string id;
  std::string title;
  std::string body;
  std::string intent;
  std::string answer_template;  // "Your {order_number} ..." (may be empty)
  std::string questions;        // example questions, "|"-separated
  int64_t version = 0;
};

// The example questions of an Article::questions field, without empty ones.
std::vector<std::string> SplitQuestions(std::string_view questions);

struct Passage {
  Article article;
  double score = 0;  // BM25, higher is better
};

struct ImportReport {
  int records = 0;
  int added = 0;
  int updated = 0;
  int unchanged = 0;
  int64_t generation = 0;  // generation after the import
};

struct ArticleVersion {
  std::string id;
  int64_t version = 0;
};

// Limits on imported fields; bigger records are rejected with their line.
inline constexpr size_t kMaxArticleIdBytes = 128;
inline constexpr size_t kMaxArticleTitleBytes = 512;
inline constexpr size_t kMaxArticleBodyBytes = 16 * 1024;
inline constexpr size_t kMaxImportFileBytes = 256u << 20;

class KnowledgeBase {
 public:
  // Opens (creating when absent and `create` is set) the database at `path`.
  static Result<std::unique_ptr<KnowledgeBase>> Open(const std::string& path, bool create);
  ~KnowledgeBase();
  KnowledgeBase(const KnowledgeBase&) = delete;
  KnowledgeBase& operator=(const KnowledgeBase&) = delete;

  // The company facts that fill {{key}} placeholders of later imports. Call before importing;
  // not synchronized with concurrent imports.
  void SetCompany(const CompanyConfig& company) { company_ = company; }
  const CompanyConfig& company() const { return company_; }

  // Imports CSV text with a header row naming columns id,title,body and optionally
  // intent,template,questions (any order). `source` names the input in errors.
  Result<ImportReport> ImportCsv(std::string_view text, const std::string& source);
  // Imports JSON lines: one object per line with the same keys.
  Result<ImportReport> ImportJsonl(std::string_view text, const std::string& source);
  // Reads a file and imports it as CSV or JSONL by extension (.csv, .jsonl/.json).
  Result<ImportReport> ImportFile(const std::string& path);

  // The top `k` passages for `query` (free text; FTS syntax is neutralized), best first.
  Result<std::vector<Passage>> Search(std::string_view query, int k);
  Result<std::optional<Article>> Get(std::string_view id);
  Result<std::vector<Article>> ByIntent(std::string_view intent);
  // Every article, by id (start-up use: training the intent classifier, L1 templates).
  Result<std::vector<Article>> All();
  Result<int64_t> Count();

  // Generation: how many content-changing imports the database has seen.
  Result<int64_t> Generation();
  // Articles changed by imports after `generation`.
  Result<std::vector<ArticleVersion>> ChangedSince(int64_t generation);

  // Stamp name for cache invalidation of answers built from article `id`.
  static std::string StampFor(std::string_view id) { return "kb:" + std::string(id); }

 private:
  explicit KnowledgeBase(sqlite3* db) : db_(db) {}
  Result<ImportReport> ImportRecords(const std::vector<Article>& articles);

  // {{key}} placeholders of title, body and template filled from company_.
  Status FillCompanyFacts(Article& a) const;

  std::mutex mu_;
  sqlite3* db_;
  CompanyConfig company_;
};

}  // namespace hotline::answer
