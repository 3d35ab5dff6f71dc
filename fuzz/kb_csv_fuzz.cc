// Knowledge-base imports (answer/kb/knowledge_base.h, answer/kb/kb_csv.h): the CSV reader on its
// own (default limits, as the Bitext and training readers use it), then KnowledgeBase::ImportCsv
// and ImportJsonl into a real in-memory SQLite knowledge base, as `hotline kb import` and the admin
// API's reload run them. Input: the file's text.
// Properties: records come in line order with at most the field limit, and an import that succeeds
// makes every imported article findable by id.
#include <cstdint>
#include <memory>
#include <string_view>

#include "answer/kb/kb_csv.h"
#include "answer/kb/knowledge_base.h"
#include "fuzz/fuzz_input.h"

namespace {

using hotline::answer::KnowledgeBase;

// One database for the whole run while imports fail (a failed import rolls back and leaves it as
// it was); a fresh one after every import that succeeded, so each input starts from an empty
// knowledge base and a reproducer behaves the same on its own.
std::unique_ptr<KnowledgeBase>& Db() {
  static std::unique_ptr<KnowledgeBase> db;
  return db;
}

KnowledgeBase& FreshDb() {
  if (!Db()) {
    auto kb = KnowledgeBase::Open(":memory:", /*create=*/true);
    HOTLINE_FUZZ_CHECK(kb.ok());
    Db() = std::move(kb).value();
  }
  return *Db();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = hotline::fuzz::AsText(data, size);

  hotline::answer::CsvReader reader(text);
  hotline::answer::CsvRecord rec;
  int last_line = 0;
  for (;;) {
    auto more = reader.Next(rec);
    if (!more.ok() || !*more) break;
    HOTLINE_FUZZ_CHECK(rec.line > last_line);
    HOTLINE_FUZZ_CHECK(rec.fields.size() <= hotline::answer::CsvReader::Limits{}.max_fields);
    last_line = rec.line;
  }

  for (bool csv : {true, false}) {
    KnowledgeBase& kb = FreshDb();
    auto report = csv ? kb.ImportCsv(text, "fuzz.csv") : kb.ImportJsonl(text, "fuzz.jsonl");
    if (!report.ok()) continue;
    auto count = kb.Count();
    HOTLINE_FUZZ_CHECK(count.ok() && *count == report->records);
    auto all = kb.All();
    HOTLINE_FUZZ_CHECK(all.ok());
    for (const auto& article : *all) {
      auto got = kb.Get(article.id);
      HOTLINE_FUZZ_CHECK(got.ok() && got->has_value());
    }
    (void)kb.Search(text.substr(0, 64), 3);
    Db().reset();
  }
  return 0;
}
