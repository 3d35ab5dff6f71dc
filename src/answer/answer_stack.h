// AnswerStack: the whole answering chain built from configuration in one call, for the call
// pipeline and `hotline demo`.
//
//   auto stack = AnswerStack::Build(cfg.answer, cfg.store, {.kb_csv = "assets/kb/bitext_kb.csv",
//                                                          .llm = model.get()});
//   auto r = (*stack)->answerer().Answer(turn, caller, history, options);
//
// What it builds and owns, in order: the answer store (memory or Redis, StoreConfig); the
// knowledge base (config.kb.path or options.kb_path, importing options.kb_csv when given); the
// accounts database (options.accounts_path, or in-memory demo accounts), its tools and the
// caller identifier with its verification ledger (wrong PINs counted in the accounts database,
// and in the store too when it is Redis); the intent classifier, trained at start-up on the
// knowledge base's example questions (each article's questions labelled with its intent); the
// understander (normalize, redact, entities, intent); L1 (IntentCache with one template per intent:
// the intent's first article, or config.intent_templates; tool intents get templates filled by
// their tool); L2 (SemanticCache over the classifier's feature space, answers in the store); L3
// (ResultCache); and the Answerer over all of them. The language model is borrowed (may be null: no
// LLM tier).
//
// Thread-safety: Build runs once at start-up (it trains on config.intent.threads threads); the
// built stack is as thread-safe as the Answerer. Blocking: Build reads files and SQLite and
// trains (well under a second on the demo knowledge base: see report()).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "answer/account/accounts.h"
#include "answer/account/caller.h"
#include "answer/account/tools.h"
#include "answer/account/verification.h"
#include "answer/answer_tiers.h"
#include "answer/answerer.h"
#include "answer/cache/intent_cache.h"
#include "answer/cache/result_cache.h"
#include "answer/cache/semantic_cache.h"
#include "answer/cache/store.h"
#include "answer/kb/knowledge_base.h"
#include "answer/understand/intent_classifier.h"
#include "answer/understand/understanding.h"
#include "common/clock.h"
#include "common/status.h"
#include "llm/language_model.h"

namespace hotline::answer {

struct AnswerStackOptions {
  std::string kb_path;          // knowledge-base SQLite file; "" = config.kb.path
  std::string kb_csv;           // imported into the knowledge base at start-up; "" = none
  std::string accounts_path;    // accounts database; "" = in-memory demo accounts
  llm::LanguageModel* llm = nullptr;  // borrowed; null = no LLM tier
  const Clock* clock = nullptr;       // null = the system clock
  // Verification counters, the tiers' refusals and the LLM gate; null = the global registry.
  MetricsRegistry* metrics = nullptr;
};

// What Build did, for logs and the start-up banner.
struct AnswerStackReport {
  size_t articles = 0;
  size_t training_examples = 0;
  size_t intents = 0;
  double classifier_ms = 0;       // training or loading
  double classifier_threshold = 0;
  double cv_precision = 0;        // held-out precision/coverage at the threshold (trained only)
  double cv_coverage = 0;
  size_t l1_templates = 0;
};

class AnswerStack {
 public:
  static Result<std::unique_ptr<AnswerStack>> Build(const AnswererConfig& config,
                                                    const StoreConfig& store_config,
                                                    const AnswerStackOptions& options);
  ~AnswerStack();

  Answerer& answerer() { return *answerer_; }
  KnowledgeBase& kb() { return *kb_; }
  AccountsDb& accounts() { return *accounts_; }
  ResultCache* l3() { return l3_.get(); }  // null with use_result_cache off
  SemanticCache* semantic_cache() { return semantic_.get(); }
  const IntentClassifier* classifier() const { return classifier_.get(); }
  const IntentCache* intent_cache() const { return intent_cache_.get(); }
  Store& store() { return *store_; }
  const AnswerStackReport& report() const { return report_; }
  // Understanding of one turn as the Answerer sees it.
  Question Understand(std::string_view turn) const;

 private:
  AnswerStack() = default;

  // Build's steps, in order.
  // The knowledge base (opened, the CSV imported); returns its articles.
  Result<std::vector<Article>> OpenKnowledgeBase(const AnswererConfig& config,
                                                 const AnswerStackOptions& options);
  // The accounts database (demo accounts in memory without a path), the tools over it, and the
  // PIN verification ledger with its attempt counters.
  Status OpenAccounts(const AnswererConfig& config, const StoreConfig& store_config,
                      const AnswerStackOptions& options);
  // The intent classifier on the articles' example questions (none when they have none).
  void TrainClassifier(const AnswererConfig& config, const std::vector<Article>& articles);
  // L1: configured templates first, then each intent's first article.
  Status BuildIntentTier(const AnswererConfig& config, const std::vector<Article>& articles);
  // L2 over the classifier's feature space (or one built from the articles' questions).
  void BuildSemanticTier(const AnswererConfig& config, const std::vector<Article>& articles);

  AnswerStackReport report_;
  const Clock* clock_ = nullptr;
  MetricsRegistry* metrics_ = nullptr;  // null: the global registry
  std::unique_ptr<Store> store_;
  std::unique_ptr<KnowledgeBase> kb_;
  std::unique_ptr<AccountsDb> accounts_;
  std::unique_ptr<ToolRegistry> tools_;
  std::vector<std::unique_ptr<AttemptCounters>> attempt_counters_;
  std::unique_ptr<VerificationLedger> ledger_;
  std::unique_ptr<CallerIdentifier> identifier_;
  std::unique_ptr<IntentClassifier> classifier_;
  std::unique_ptr<IntentCache> intent_cache_;
  std::unique_ptr<IntentTier> l1_;
  std::shared_ptr<SemanticAnswerStore> l2_store_;
  std::unique_ptr<SemanticCache> semantic_;
  std::unique_ptr<SemanticTier> l2_;
  std::unique_ptr<ResultCache> l3_;
  std::unique_ptr<Answerer> answerer_;
};

// The Answerer's Question from an Understanding: redacted text, PIN digits, the accepted intent,
// entities (months resolved to YYYY-MM against `today_yyyy_mm`, e.g. "2026-12", for tool
// arguments and template slots).
Question QuestionFromUnderstanding(const Understanding& u, std::string_view today_yyyy_mm);

// "YYYY-MM" of the system clock's current UTC date.
std::string CurrentYearMonth();

}  // namespace hotline::answer
