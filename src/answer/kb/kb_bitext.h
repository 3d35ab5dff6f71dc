// Demo knowledge base derived from the Bitext customer-support corpus (CDLA-Sharing-1.0).
//
// The corpus pairs customer utterances with long written agent responses (greetings, numbered
// steps, {{Placeholder}} names) across 27 intents. Most of a response is preamble ("I understand
// how unnerving...", "Our team is here to assist you..."); what a caller can act on is in the
// steps and a few sentences. DeriveBitextArticles keeps those, per intent:
//   - a response is split into its numbered steps and its other sentences; a candidate answer is
//     a sentence that tells the caller what to do (kb_lint.h TellsWhatToDo: an action with where
//     or how long), or the first one or two steps after what they are for ("To cancel an order,
//     log in to {{website}}. Then open Order History and ..."); stock phrases, sentences about
//     one customer or the agent, and sentences built around a placeholder the corpus never
//     fills are never candidates;
//   - candidates are scored by how typical their words are among the intent's responses
//     (document frequency), the intent's own words, naming a company fact, and brevity; the
//     best `articles_per_intent` ones from different responses become bodies of one or two
//     sentences, the first at most 25 words, all at most `max_answer_chars` characters;
//   - intents whose answer is a company fact (delivery time, refund window, phone line) start
//     with that fact;
//   - company placeholders become {{key}} company facts ("{{Customer Support Phone Number}}" ->
//     {{phone}}), filled from the `answer.company` configuration when the knowledge base is
//     loaded; anonymized values become "your order number"; screen and button names stay as
//     written ("Order History");
//   - a handful of the intent's utterances (without entity values) become the article's example
//     questions, which the full-text index and the intent classifier use; questions from other
//     sources may join them (BitextDeriveOptions::extra_questions).
// The derivation is deterministic: the same corpus always gives the same articles.
//
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "answer/kb/knowledge_base.h"
#include "common/status.h"

namespace hotline::answer {

struct BitextDeriveOptions {
  int articles_per_intent = 2;
  int max_answer_chars = 240;
  int questions_per_article = 20;
  // Example questions from other sources, by Bitext intent ("track_order" -> "where's my
  // package"). The corpus's own utterances for some intents all name an order number ("where do
  // I see purchase 732201349959 status?"), and none says it the everyday way. Each article of the
  // intent takes up to `extra_questions_per_article` of them after its own: article k of n every
  // n-th one from the k-th, so that no two share one.
  std::map<std::string, std::vector<std::string>> extra_questions;
  int extra_questions_per_article = 10;
};

// `csv_text` is customer_support.csv (columns instruction, intent, entity_value, response, ...).
Result<std::vector<Article>> DeriveBitextArticles(std::string_view csv_text,
                                                  const BitextDeriveOptions& options = {});

// Adds a CLINC150 question to `options.extra_questions` when its intent asks what a Bitext
// intent answers (order_status -> track_order); returns whether it did. `hotline kb bitext
// --clinc` passes CLINC150's train split through it.
bool AddClincQuestion(std::string_view clinc_intent, std::string_view question,
                      BitextDeriveOptions& options);

// Writes articles as a knowledge-base CSV (id,title,intent,body,template,questions).
std::string ArticlesToCsv(const std::vector<Article>& articles);

// "{{Order Number Anonymized}}" -> slot "order_number"; -> spoken "your order number". A company
// fact ("{{Customer Support Phone Number}}") is spoken as its {{key}} ("{{phone}}").
std::string PlaceholderSlot(std::string_view placeholder);
std::string PlaceholderSpoken(std::string_view placeholder);

}  // namespace hotline::answer
