// Knowledge-base lint: what should not be spoken to a caller.
//
// LintKnowledgeBaseCsv reads a knowledge-base CSV (the columns `hotline kb import` takes) and
// reports, per article and with the CSV line, each of:
//   - kPlaceholder: a {{name}} that is no company fact (kb_company.h), an unclosed "{{", or a
//     {slot} / [Slot] left in the spoken body (template slots belong in the template column and
//     must be entity slots there: {order_number}, {month}, ...);
//   - kFiller: a body with no sentence that tells the caller what to do (an action with where or
//     how long: "log in to {{website}} and open Order History", "delivery takes 3 to 5 working
//     days"), or one that opens with a stock phrase of written support ("We are committed to
//     helping you...", "Our team is here to assist you...");
//   - kLongSentence: a first sentence over 25 words (too long to say in one breath);
//   - kMarkup: markdown or HTML (emphasis, headings, list markers, links, tags, line breaks);
//   - kUnspeakable: tokens a voice cannot say as written: URLs, raw e-mail addresses, symbols
//     such as | \ ^ ~ * # < > = _ and emoji, "e.g."/"i.e."/"etc.".
// Checks other than kPlaceholder run on the text as spoken: company facts filled from `company`.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "answer/kb/kb_company.h"
#include "common/status.h"

namespace hotline::answer {

enum class LintKind { kPlaceholder, kFiller, kLongSentence, kMarkup, kUnspeakable };
std::string_view LintKindName(LintKind kind);

struct LintIssue {
  int line = 0;            // CSV line where the article's record starts
  std::string article_id;  // may be empty when the id itself is missing
  LintKind kind = LintKind::kFiller;
  std::string message;
};

// Most words a first sentence may have.
inline constexpr int kMaxFirstSentenceWords = 25;

// All issues of the CSV text, in file order. An error only when the CSV cannot be read at all
// (malformed CSV, no id or body column).
Result<std::vector<LintIssue>> LintKnowledgeBaseCsv(std::string_view csv_text,
                                                    const CompanyConfig& company = {});

// The issues of one article's spoken body (and its template), line left 0.
std::vector<LintIssue> LintArticleText(std::string_view id, std::string_view body,
                                       std::string_view answer_template,
                                       const CompanyConfig& company);

// True when `sentence` tells the caller something to act on: an action (visit, log in, open,
// call, select, ...) together with where (website, page, section, button, phone line, app,
// chat, a company fact) or how long (days, hours, weeks), or a company-fact placeholder with an
// action. Used by the Bitext derivation to pick sentences and by the lint to flag filler.
bool TellsWhatToDo(std::string_view sentence);

// True when `sentence` opens with a stock phrase of written support that carries no answer
// when spoken ("I understand...", "We are committed to...", "Our team is here to assist...").
bool IsStockPhrase(std::string_view sentence);

// Number of words (runs of letters, digits and apostrophes).
int WordCount(std::string_view text);

}  // namespace hotline::answer
