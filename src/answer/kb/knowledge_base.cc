#include "answer/kb/knowledge_base.h"

#include <sqlite3.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "answer/kb/kb_csv.h"
#include "answer/kb/kb_sqlite.h"
#include "common/utf8.h"

namespace hotline::answer {

namespace {

using sqlite_util::Exec;
using sqlite_util::Stmt;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS articles(
  rid INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  body TEXT NOT NULL,
  intent TEXT NOT NULL DEFAULT '',
  template TEXT NOT NULL DEFAULT '',
  questions TEXT NOT NULL DEFAULT '',
  version INTEGER NOT NULL DEFAULT 1,
  generation INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS articles_intent ON articles(intent);
CREATE INDEX IF NOT EXISTS articles_generation ON articles(generation);
CREATE VIRTUAL TABLE IF NOT EXISTS articles_fts USING fts5(
  title, body, questions, tokenize = 'porter unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS articles_tri USING fts5(
  title, body, questions, tokenize = 'trigram');
CREATE TABLE IF NOT EXISTS kb_meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT OR IGNORE INTO kb_meta(key, value) VALUES ('generation', 0);
)sql";

constexpr const char* kArticleColumns =
    "id, title, body, intent, template, questions, version";

Article ReadArticle(const Stmt& s, int first_col) {
  Article a;
  a.id = s.Text(first_col);
  a.title = s.Text(first_col + 1);
  a.body = s.Text(first_col + 2);
  a.intent = s.Text(first_col + 3);
  a.answer_template = s.Text(first_col + 4);
  a.questions = s.Text(first_col + 5);
  a.version = s.Int(first_col + 6);
  return a;
}

bool IsCjkOrNoSpaceScript(uint32_t cp) {
  return (cp >= 0x3040 && cp <= 0x30ff) ||  // kana
         (cp >= 0x3400 && cp <= 0x9fff) ||  // CJK ideographs
         (cp >= 0xac00 && cp <= 0xd7af) ||  // hangul
         (cp >= 0x0e00 && cp <= 0x0e7f);    // thai
}

bool EndsWithCjk(std::string_view term) {
  size_t lead = term.size();
  while (lead > 0 && (static_cast<unsigned char>(term[lead - 1]) & 0xc0) == 0x80) --lead;
  if (lead == 0) return false;
  char32_t cp = 0;
  return DecodeUtf8(term, lead - 1, &cp) > 1 && IsCjkOrNoSpaceScript(cp);
}

// The character at `i` (after any spaces) is a CJK-like one.
bool NextIsCjk(std::string_view query, size_t i) {
  while (i < query.size() && query[i] == ' ') ++i;
  if (i >= query.size()) return false;
  char32_t cp = 0;
  return DecodeUtf8(query, i, &cp) > 1 && IsCjkOrNoSpaceScript(cp);
}

// Splits `query` into search terms: runs of letters/digits (any UTF-8 multi-byte character counts
// as a letter). Sets `no_space_script` when a term contains CJK-like characters.
std::vector<std::string> QueryTerms(std::string_view query, bool& no_space_script) {
  std::vector<std::string> terms;
  std::string cur;
  no_space_script = false;
  for (size_t i = 0; i < query.size();) {
    const unsigned char c = static_cast<unsigned char>(query[i]);
    size_t len = 1;
    uint32_t cp = c;
    if (c >= 0xf0) len = 4, cp = c & 0x07;
    else if (c >= 0xe0) len = 3, cp = c & 0x0f;
    else if (c >= 0xc0) len = 2, cp = c & 0x1f;
    if (i + len > query.size()) break;
    for (size_t j = 1; j < len; ++j) cp = (cp << 6) | (static_cast<unsigned char>(query[i + j]) & 0x3f);
    const bool word_char = len > 1 || std::isalnum(c);
    // Normalized Chinese has a space between characters (NormalizeText makes each a word): a
    // space between two CJK characters does not end the term, so the trigram windows see the
    // phrase as it was said.
    if (c == ' ' && EndsWithCjk(cur) && NextIsCjk(query, i + 1)) {
      i += 1;
      continue;
    }
    if (word_char) {
      if (len > 1 && IsCjkOrNoSpaceScript(cp)) no_space_script = true;
      cur.append(query.substr(i, len));
    } else if (!cur.empty()) {
      terms.push_back(std::move(cur));
      cur.clear();
    }
    i += len;
  }
  if (!cur.empty()) terms.push_back(std::move(cur));
  // Function words match nearly every article and only add noise to BM25's ranking; they are
  // kept when the query has nothing else.
  static const std::set<std::string> kStop = {
      "a", "an", "the", "i", "me", "my", "you", "your", "we", "our", "it", "is", "are", "was",
      "be", "to", "of", "in", "on", "for", "and", "or", "do", "does", "did", "can", "could",
      "would", "will", "what", "when", "how", "where", "which", "who", "this", "that", "with",
      "at", "by", "from", "please", "hi", "hello", "um", "uh", "so", "if", "any", "have", "has"};
  std::vector<std::string> content;
  for (const auto& t : terms) {
    std::string low = t;
    for (char& ch : low) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (!kStop.count(low)) content.push_back(t);
  }
  if (!content.empty()) terms = std::move(content);
  if (terms.size() > 64) terms.resize(64);
  return terms;
}

Status CheckArticle(const Article& a) {
  auto bad = [](const std::string& what) { return InvalidArgumentError(what); };
  if (a.id.empty()) return bad("id is empty");
  if (a.id.size() > kMaxArticleIdBytes) return bad("id is longer than 128 bytes");
  for (char c : a.id) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
          c == ':')) {
      return bad("id '" + a.id + "' has a character other than letters, digits, - _ . :");
    }
  }
  if (a.title.empty()) return bad("title is empty");
  if (a.title.size() > kMaxArticleTitleBytes) return bad("title is longer than 512 bytes");
  if (a.body.empty()) return bad("body is empty");
  if (a.body.size() > kMaxArticleBodyBytes) return bad("body is longer than 16384 bytes");
  if (a.answer_template.size() > kMaxArticleBodyBytes) return bad("template is longer than 16384 bytes");
  if (a.questions.size() > kMaxArticleBodyBytes) return bad("questions is longer than 16384 bytes");
  return Status::Ok();
}

}  // namespace

std::vector<std::string> SplitQuestions(std::string_view questions) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= questions.size()) {
    size_t bar = questions.find('|', start);
    if (bar == std::string_view::npos) bar = questions.size();
    if (bar > start) out.emplace_back(questions.substr(start, bar - start));
    start = bar + 1;
  }
  return out;
}

Status KnowledgeBaseConfig::Validate() const {
  if (path.empty()) return InvalidArgumentError("path is empty; run `hotline kb import` to create one");
  if (top_k < 1 || top_k > 50) {
    return InvalidArgumentError("top_k must be in [1, 50], got " + std::to_string(top_k));
  }
  return Status::Ok();
}

Result<std::unique_ptr<KnowledgeBase>> KnowledgeBase::Open(const std::string& path, bool create) {
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return NotFoundError("cannot open knowledge base " + path + ": " + msg +
                         (create ? "" : " (create it with `hotline kb import FILE --db " + path + "`)"));
  }
  std::unique_ptr<KnowledgeBase> kb(new KnowledgeBase(db));
  sqlite3_busy_timeout(db, 2000);
  Status s = Exec(db, kSchema);
  if (!s.ok()) return s.WithContext("knowledge base " + path + " (is it a Hotline knowledge base?)");
  return kb;
}

KnowledgeBase::~KnowledgeBase() { sqlite3_close(db_); }

Result<ImportReport> KnowledgeBase::ImportCsv(std::string_view text, const std::string& source) {
  if (text.size() > kMaxImportFileBytes) {
    return InvalidArgumentError(source + ": larger than 256 MB; split it");
  }
  CsvReader reader(text, CsvReader::Limits{kMaxArticleBodyBytes, 32});
  CsvRecord rec;
  auto where = [&](int line) { return source + ":" + std::to_string(line) + ": "; };
  auto first = reader.Next(rec);
  if (!first.ok()) return InvalidArgumentError(source + ": " + first.status().message());
  if (!*first) return InvalidArgumentError(source + ": empty file; expected a header row");
  std::map<std::string, int> col;
  for (size_t i = 0; i < rec.fields.size(); ++i) {
    static const std::set<std::string> known{"id", "title", "body", "intent", "template", "questions"};
    const std::string& name = rec.fields[i];
    if (!known.count(name)) {
      return InvalidArgumentError(where(rec.line) + "unknown column '" + name +
                                  "' (expected id,title,body and optionally intent,template,questions)");
    }
    if (!col.emplace(name, static_cast<int>(i)).second) {
      return InvalidArgumentError(where(rec.line) + "column '" + name + "' appears twice");
    }
  }
  for (const char* required : {"id", "title", "body"}) {
    if (!col.count(required)) {
      return InvalidArgumentError(where(rec.line) + "header lacks the required column '" +
                                  required + "'");
    }
  }
  const size_t ncols = rec.fields.size();
  std::vector<Article> articles;
  std::map<std::string, int> seen;
  for (;;) {
    auto more = reader.Next(rec);
    if (!more.ok()) return InvalidArgumentError(source + ": " + more.status().message());
    if (!*more) break;
    if (rec.fields.size() == 1 && rec.fields[0].empty()) continue;  // blank line
    if (rec.fields.size() != ncols) {
      return InvalidArgumentError(where(rec.line) + "has " + std::to_string(rec.fields.size()) +
                                  " fields, the header has " + std::to_string(ncols));
    }
    auto field = [&](const char* name) {
      auto it = col.find(name);
      return it == col.end() ? std::string() : rec.fields[it->second];
    };
    Article a{field("id"), field("title"), field("body"), field("intent"), field("template"),
              field("questions"), 0};
    Status ok = CheckArticle(a);
    if (ok.ok()) ok = FillCompanyFacts(a);
    if (!ok.ok()) return InvalidArgumentError(where(rec.line) + ok.message());
    if (auto [it, fresh] = seen.emplace(a.id, rec.line); !fresh) {
      return InvalidArgumentError(where(rec.line) + "id '" + a.id + "' already used on line " +
                                  std::to_string(it->second));
    }
    articles.push_back(std::move(a));
  }
  return ImportRecords(articles);
}

Result<ImportReport> KnowledgeBase::ImportJsonl(std::string_view text, const std::string& source) {
  if (text.size() > kMaxImportFileBytes) {
    return InvalidArgumentError(source + ": larger than 256 MB; split it");
  }
  std::vector<Article> articles;
  std::map<std::string, int> seen;
  int line = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(pos, end - pos);
    pos = end + 1;
    ++line;
    const std::string where = source + ":" + std::to_string(line) + ": ";
    if (l.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    nlohmann::json j = nlohmann::json::parse(l, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
      return InvalidArgumentError(where + "not a JSON object");
    }
    Article a;
    for (auto& [key, value] : j.items()) {
      std::string* dst = key == "id"          ? &a.id
                         : key == "title"     ? &a.title
                         : key == "body"      ? &a.body
                         : key == "intent"    ? &a.intent
                         : key == "template"  ? &a.answer_template
                         : key == "questions" ? &a.questions
                                              : nullptr;
      if (!dst) return InvalidArgumentError(where + "unknown key '" + key + "'");
      if (!value.is_string()) return InvalidArgumentError(where + "'" + key + "' is not a string");
      *dst = value.get<std::string>();
    }
    Status ok = CheckArticle(a);
    if (ok.ok()) ok = FillCompanyFacts(a);
    if (!ok.ok()) return InvalidArgumentError(where + ok.message());
    if (auto [it, fresh] = seen.emplace(a.id, line); !fresh) {
      return InvalidArgumentError(where + "id '" + a.id + "' already used on line " +
                                  std::to_string(it->second));
    }
    articles.push_back(std::move(a));
  }
  return ImportRecords(articles);
}

Status KnowledgeBase::FillCompanyFacts(Article& a) const {
  for (auto [field, name] : {std::pair<std::string*, const char*>{&a.title, "title"},
                             {&a.body, "body"},
                             {&a.answer_template, "template"}}) {
    if (field->find("{{") == std::string::npos && field->find("}}") == std::string::npos) continue;
    auto filled = FillCompanyPlaceholders(*field, company_);
    if (!filled.ok())
      return filled.status().WithContext(std::string("article '") + a.id + "' " + name);
    *field = std::move(*filled);
  }
  return Status::Ok();
}

Result<ImportReport> KnowledgeBase::ImportFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot read " + path);
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0 || static_cast<uint64_t>(size) > kMaxImportFileBytes) {
    return InvalidArgumentError(path + ": larger than 256 MB (or unreadable); split it");
  }
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), size);
  if (!in) return DataLossError("could not read all of " + path);
  auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".csv")) return ImportCsv(text, path);
  if (ends_with(".jsonl") || ends_with(".json")) return ImportJsonl(text, path);
  return InvalidArgumentError(path + ": unknown format; use a .csv or .jsonl file");
}

Result<ImportReport> KnowledgeBase::ImportRecords(const std::vector<Article>& articles) {
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(Exec(db_, "BEGIN IMMEDIATE"));
  auto run = [&]() -> Result<ImportReport> {
    ImportReport report;
    report.records = static_cast<int>(articles.size());
    Stmt gen(db_, "SELECT value FROM kb_meta WHERE key = 'generation'");
    RETURN_IF_ERROR(gen.status());
    ASSIGN_OR_RETURN(bool has_gen, gen.Step());
    const int64_t next_gen = (has_gen ? gen.Int(0) : 0) + 1;
    Stmt find(db_, "SELECT rid, title, body, intent, template, questions, version FROM articles WHERE id = ?");
    Stmt insert(db_,
                "INSERT INTO articles(id, title, body, intent, template, questions, version, generation) "
                "VALUES (?, ?, ?, ?, ?, ?, 1, ?)");
    Stmt update(db_,
                "UPDATE articles SET title = ?, body = ?, intent = ?, template = ?, questions = ?, "
                "version = version + 1, generation = ? WHERE rid = ?");
    Stmt fts_del(db_, "DELETE FROM articles_fts WHERE rowid = ?");
    Stmt tri_del(db_, "DELETE FROM articles_tri WHERE rowid = ?");
    Stmt fts_ins(db_, "INSERT INTO articles_fts(rowid, title, body, questions) VALUES (?, ?, ?, ?)");
    Stmt tri_ins(db_, "INSERT INTO articles_tri(rowid, title, body, questions) VALUES (?, ?, ?, ?)");
    for (Stmt* s : {&find, &insert, &update, &fts_del, &tri_del, &fts_ins, &tri_ins}) {
      RETURN_IF_ERROR(s->status());
    }
    for (const Article& a : articles) {
      find.Reset();
      find.Bind(1, a.id);
      ASSIGN_OR_RETURN(bool exists, find.Step());
      int64_t rid = 0;
      if (exists) {
        rid = find.Int(0);
        if (find.Text(1) == a.title && find.Text(2) == a.body && find.Text(3) == a.intent &&
            find.Text(4) == a.answer_template && find.Text(5) == a.questions) {
          ++report.unchanged;
          continue;
        }
        update.Reset();
        update.Bind(1, a.title);
        update.Bind(2, a.body);
        update.Bind(3, a.intent);
        update.Bind(4, a.answer_template);
        update.Bind(5, a.questions);
        update.Bind(6, next_gen);
        update.Bind(7, rid);
        ASSIGN_OR_RETURN(bool row, update.Step());
        (void)row;
        for (Stmt* del : {&fts_del, &tri_del}) {
          del->Reset();
          del->Bind(1, rid);
          ASSIGN_OR_RETURN(bool r, del->Step());
          (void)r;
        }
        ++report.updated;
      } else {
        insert.Reset();
        insert.Bind(1, a.id);
        insert.Bind(2, a.title);
        insert.Bind(3, a.body);
        insert.Bind(4, a.intent);
        insert.Bind(5, a.answer_template);
        insert.Bind(6, a.questions);
        insert.Bind(7, next_gen);
        ASSIGN_OR_RETURN(bool row, insert.Step());
        (void)row;
        rid = sqlite3_last_insert_rowid(db_);
        ++report.added;
      }
      for (Stmt* ins : {&fts_ins, &tri_ins}) {
        ins->Reset();
        ins->Bind(1, rid);
        ins->Bind(2, a.title);
        ins->Bind(3, a.body);
        ins->Bind(4, a.questions);
        ASSIGN_OR_RETURN(bool r, ins->Step());
        (void)r;
      }
    }
    report.generation = next_gen - 1;
    if (report.added + report.updated > 0) {
      Stmt bump(db_, "UPDATE kb_meta SET value = ? WHERE key = 'generation'");
      RETURN_IF_ERROR(bump.status());
      bump.Bind(1, next_gen);
      ASSIGN_OR_RETURN(bool r, bump.Step());
      (void)r;
      report.generation = next_gen;
    }
    return report;
  };
  Result<ImportReport> report = run();
  if (!report.ok()) {
    (void)Exec(db_, "ROLLBACK");
    return report.status().WithContext("import rolled back, nothing changed");
  }
  RETURN_IF_ERROR(Exec(db_, "COMMIT"));
  return report;
}

Result<std::vector<Passage>> KnowledgeBase::Search(std::string_view query, int k) {
  if (k < 1) return std::vector<Passage>();
  k = std::min(k, 50);
  bool no_space = false;
  std::vector<std::string> terms = QueryTerms(query.substr(0, 4096), no_space);
  std::string match;
  auto add = [&](std::string_view t) {
    if (!match.empty()) match += " OR ";
    match += "\"" + std::string(t) + "\"";  // terms hold no quotes: only letters and digits
  };
  for (const auto& t : terms) {
    if (!no_space) {
      add(t);
      continue;
    }
    // Without spaces between words, match every 3-character window (the trigram index's unit).
    std::vector<size_t> starts;  // byte offsets of the term's characters
    for (size_t i = 0; i < t.size(); ++i) {
      if ((static_cast<unsigned char>(t[i]) & 0xc0) != 0x80) starts.push_back(i);
    }
    starts.push_back(t.size());
    for (size_t i = 0; i + 3 < starts.size(); ++i) add(std::string_view(t).substr(starts[i], starts[i + 3] - starts[i]));
  }
  std::vector<Passage> out;
  if (match.empty()) return out;
  const std::string table = no_space ? "articles_tri" : "articles_fts";
  // Title matches weigh most, then example questions, then the body.
  const std::string sql = "SELECT -bm25(" + table + ", 4.0, 1.0, 2.0) AS score, "
                          "a.id, a.title, a.body, a.intent, a.template, a.questions, a.version"
                          " FROM " + table + " JOIN articles a ON a.rid = " + table +
                          ".rowid WHERE " + table + " MATCH ? ORDER BY score DESC LIMIT ?";
  std::lock_guard lock(mu_);
  Stmt s(db_, sql.c_str());
  RETURN_IF_ERROR(s.status());
  s.Bind(1, match);
  s.Bind(2, static_cast<int64_t>(k));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(Passage{ReadArticle(s, 1), s.Double(0)});
  }
  return out;
}

Result<std::optional<Article>> KnowledgeBase::Get(std::string_view id) {
  std::lock_guard lock(mu_);
  Stmt s(db_, (std::string("SELECT ") + kArticleColumns + " FROM articles WHERE id = ?").c_str());
  RETURN_IF_ERROR(s.status());
  s.Bind(1, id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<Article>();
  return std::optional<Article>(ReadArticle(s, 0));
}

Result<std::vector<Article>> KnowledgeBase::ByIntent(std::string_view intent) {
  std::lock_guard lock(mu_);
  Stmt s(db_, (std::string("SELECT ") + kArticleColumns + " FROM articles WHERE intent = ? ORDER BY id").c_str());
  RETURN_IF_ERROR(s.status());
  s.Bind(1, intent);
  std::vector<Article> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(ReadArticle(s, 0));
  }
  return out;
}

Result<std::vector<Article>> KnowledgeBase::All() {
  std::lock_guard lock(mu_);
  Stmt s(db_, (std::string("SELECT ") + kArticleColumns + " FROM articles ORDER BY id").c_str());
  RETURN_IF_ERROR(s.status());
  std::vector<Article> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(ReadArticle(s, 0));
  }
  return out;
}

Result<int64_t> KnowledgeBase::Count() {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT COUNT(*) FROM articles");
  RETURN_IF_ERROR(s.status());
  ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

Result<int64_t> KnowledgeBase::Generation() {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT value FROM kb_meta WHERE key = 'generation'");
  RETURN_IF_ERROR(s.status());
  ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : 0;
}

Result<std::vector<ArticleVersion>> KnowledgeBase::ChangedSince(int64_t generation) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT id, version FROM articles WHERE generation > ? ORDER BY id");
  RETURN_IF_ERROR(s.status());
  s.Bind(1, generation);
  std::vector<ArticleVersion> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(ArticleVersion{s.Text(0), s.Int(1)});
  }
  return out;
}

}  // namespace hotline::answer
