// Demo knowledge base derived from the Bitext customer-support corpus (CDLA-Sharing-1.0).
//
// The corpus pairs customer utterances with long written agent responses (greetings, numbered
// steps, {{Placeholder}} names) across 27 intents. DeriveBitextArticles turns it into voice-length
// articles, per intent:
//   - responses are split into sentences; list items, lead-ins ending in ':' and stock phrases
//     ("I understand...", "Certainly!", "Thank you...") are dropped;
//   - the remaining sentences are scored by how typical their words are among all responses of
//     the intent (document frequency) plus a bonus for the intent's own words, and the best
//     `articles_per_intent` distinct ones (from different responses) become answers of one or two
//     sentences (at most `max_answer_chars` characters);
//   - {{Placeholders}} become template slots ("{order_number}") in `template`, and are filled in
//     `body` with speakable defaults ("our support line", "our website") or their own words;
//   - a handful of the intent's utterances (without entity values) become the article's example
//     questions, which the full-text index uses for retrieval.
// The derivation is deterministic: the same corpus always gives the same articles.
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "answer/knowledge_base.h"
#include "common/status.h"

namespace hotline::answer {

struct BitextDeriveOptions {
  int articles_per_intent = 2;
  int max_answer_chars = 240;
  int questions_per_article = 20;
};

// `csv_text` is customer_support.csv (columns instruction, intent, entity_value, response, ...).
Result<std::vector<Article>> DeriveBitextArticles(std::string_view csv_text,
                                                  const BitextDeriveOptions& options = {});

// Writes articles as a knowledge-base CSV (id,title,intent,body,template,questions).
std::string ArticlesToCsv(const std::vector<Article>& articles);

// "{{Order Number Anonymized}}" -> slot "order_number"; -> speakable default "your order number".
std::string PlaceholderSlot(std::string_view placeholder);
std::string PlaceholderSpoken(std::string_view placeholder);

}  // namespace hotline::answer
