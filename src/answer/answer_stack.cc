#include "answer/answer_stack.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <set>

#include "answer/cache/semantic_store.h"
#include "answer/understand/normalize.h"
#include "common/config.h"
#include "common/log.h"

namespace hotline::answer {

namespace {

bool IsEntitySlot(std::string_view slot) {
  for (EntityType t : {EntityType::kMonth, EntityType::kDate, EntityType::kAmount,
                       EntityType::kOrderNumber, EntityType::kAccountNumber, EntityType::kNumber}) {
    if (EntityTypeName(t) == slot) return true;
  }
  return false;
}

// Article text as a template with no slots: braces are literal.
std::string Literal(std::string_view text) {
  std::string out;
  for (char c : text) {
    out.push_back(c);
    if (c == '{' || c == '}') out.push_back(c);
  }
  return out;
}

// "2026-12" + months (may be negative).
std::string AddMonths(int year, int month, int delta) {
  int m = year * 12 + (month - 1) + delta;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d", m / 12, m % 12 + 1);
  return buf;
}

std::string ResolveMonth(const std::string& value, std::string_view today) {
  if (today.size() != 7 || today[4] != '-') return value;
  const int year = std::atoi(std::string(today.substr(0, 4)).c_str());
  const int month = std::atoi(std::string(today.substr(5, 2)).c_str());
  if (year < 1 || month < 1 || month > 12) return value;
  if (value == "this_month") return AddMonths(year, month, 0);
  if (value == "last_month") return AddMonths(year, month, -1);
  if (value == "next_month") return AddMonths(year, month, 1);
  if (value.size() == 2 && std::isdigit(static_cast<unsigned char>(value[0])) &&
      std::isdigit(static_cast<unsigned char>(value[1]))) {
    const int m = std::atoi(value.c_str());
    if (m < 1 || m > 12) return value;
    return AddMonths(m <= month ? year : year - 1, m, 0);  // the latest such month, not ahead
  }
  return value;
}

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

std::string CurrentYearMonth() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d", tm.tm_year + 1900, tm.tm_mon + 1);
  return buf;
}

Question QuestionFromUnderstanding(const Understanding& u, std::string_view today_yyyy_mm) {
  Question q;
  q.text = u.redacted;
  q.digits = DigitsOf(u.normalized);
  q.prediction = u.intent;
  if (u.intent && u.intent->accepted) {
    q.intent = u.intent->intent;
    q.intent_confidence = u.intent->confidence;
  }
  q.entity_list = u.entities;
  for (Entity& e : q.entity_list) {
    if (e.type == EntityType::kMonth) e.value = ResolveMonth(e.value, today_yyyy_mm);
    q.entities.emplace(std::string(EntityTypeName(e.type)), e.value);  // the first of each type
  }
  return q;
}

AnswerStack::~AnswerStack() = default;

Question AnswerStack::Understand(std::string_view turn) const {
  return QuestionFromUnderstanding(answer::Understand(turn, classifier_.get()), CurrentYearMonth());
}

Result<std::vector<Article>> AnswerStack::OpenKnowledgeBase(const AnswererConfig& config,
                                                            const AnswerStackOptions& options) {
  const std::string kb_path = options.kb_path.empty() ? config.kb.path : options.kb_path;
  auto kb = KnowledgeBase::Open(kb_path, /*create=*/true);
  if (!kb.ok()) return kb.status().WithContext("knowledge base " + kb_path);
  kb_ = std::move(*kb);
  kb_->SetCompany(config.company);
  if (!options.kb_csv.empty()) {
    auto imported = kb_->ImportFile(options.kb_csv);
    if (!imported.ok()) return imported.status().WithContext("knowledge base import");
  }
  return kb_->All();
}

Status AnswerStack::OpenAccounts(const AnswererConfig& config, const StoreConfig& store_config,
                                 const AnswerStackOptions& options) {
  const bool demo_accounts = options.accounts_path.empty();
  auto accounts = AccountsDb::Open(demo_accounts ? ":memory:" : options.accounts_path,
                                   /*create=*/demo_accounts);
  if (!accounts.ok()) return accounts.status().WithContext("accounts database");
  accounts_ = std::move(*accounts);
  if (demo_accounts) RETURN_IF_ERROR(accounts_->SeedDemo().WithContext("demo accounts"));
  ASSIGN_OR_RETURN(ToolRegistry tools, CreateDemoTools(*accounts_, config.language));
  tools_ = std::make_unique<ToolRegistry>(std::move(tools));
  attempt_counters_.push_back(AccountsAttemptCounters(*accounts_));
  if (store_config.backend == "redis") attempt_counters_.push_back(StoreAttemptCounters(*store_));
  std::vector<AttemptCounters*> counters;
  for (const auto& c : attempt_counters_) counters.push_back(c.get());
  ledger_ = std::make_unique<VerificationLedger>(config.verification, std::move(counters),
                                                 options.metrics);
  identifier_ = std::make_unique<CallerIdentifier>(*accounts_, config.caller, ledger_.get());
  return Status::Ok();
}

void AnswerStack::TrainClassifier(const AnswererConfig& config,
                                  const std::vector<Article>& articles) {
  std::vector<IntentExample> examples;
  std::set<std::pair<std::string, std::string>> seen;
  for (const Article& a : articles) {
    if (a.intent.empty()) continue;
    for (std::string& text : SplitQuestions(a.questions)) {
      std::string normalized = NormalizeText(text);
      if (normalized.empty()) continue;
      if (seen.emplace(std::move(normalized), a.intent).second) {
        examples.push_back(IntentExample{std::move(text), a.intent});
      }
    }
  }
  report_.training_examples = examples.size();
  const auto start = std::chrono::steady_clock::now();
  auto classifier = IntentClassifier::Train(examples, config.intent);
  if (!classifier.ok()) {
    // A knowledge base without example questions runs without L1 rather than not at all.
    HLOG_WARN("intent classifier not trained ({}); answering without the intent tier",
              classifier.status().message());
    return;
  }
  classifier_ = std::move(*classifier);
  report_.classifier_ms = MsSince(start);
  report_.intents = classifier_->intents().size();
  report_.classifier_threshold = classifier_->threshold();
  report_.cv_precision = classifier_->calibration().cv_precision;
  report_.cv_coverage = classifier_->calibration().cv_coverage;
}

Status AnswerStack::BuildIntentTier(const AnswererConfig& config,
                                    const std::vector<Article>& articles) {
  std::map<std::string, std::string> tool_for_intent;
  for (const auto& pair : config.tool_intents) {
    const size_t eq = pair.find('=');
    tool_for_intent[pair.substr(0, eq)] = pair.substr(eq + 1);
  }
  intent_cache_ = std::make_unique<IntentCache>(config.intent_cache);
  std::map<std::string, IntentTemplate> templates;
  for (const auto& pair : config.intent_templates) {
    const size_t eq = pair.find('=');
    IntentTemplate t;
    t.intent = pair.substr(0, eq);
    auto text = FillCompanyPlaceholders(pair.substr(eq + 1), config.company);
    if (!text.ok())
      return text.status().WithContext("answer.intent_templates entry '" + pair + "'");
    t.text = std::move(*text);
    if (auto it = tool_for_intent.find(t.intent); it != tool_for_intent.end()) t.tool = it->second;
    templates[t.intent] = std::move(t);
  }
  for (const Article& a : articles) {
    // Tool intents are about the caller's own data: an article's general text never answers
    // them from L1 (the tool does, or the configured template).
    if (a.intent.empty() || templates.count(a.intent) || tool_for_intent.count(a.intent)) continue;
    IntentTemplate t;
    t.intent = a.intent;
    t.text = Literal(a.body);
    if (!a.answer_template.empty()) {
      auto slots = TemplateSlots(a.answer_template);
      bool fillable = slots.ok() && !slots->empty();
      if (slots.ok()) {
        for (const auto& slot : *slots) fillable = fillable && IsEntitySlot(slot);
      }
      if (fillable) t.text = a.answer_template;
    }
    templates[a.intent] = std::move(t);
  }
  for (auto& [intent, t] : templates) {
    RETURN_IF_ERROR(intent_cache_->AddTemplate(std::move(t)).WithContext("L1 template"));
  }
  report_.l1_templates = intent_cache_->size();
  l1_ = std::make_unique<IntentTier>(*intent_cache_, tools_.get(), metrics_);
  return Status::Ok();
}

void AnswerStack::BuildSemanticTier(const AnswererConfig& config,
                                    const std::vector<Article>& articles) {
  std::shared_ptr<const FeatureSpace> space;
  if (classifier_) {
    space = classifier_->shared_feature_space();
  } else {
    std::vector<std::string> docs;
    for (const Article& a : articles) docs.push_back(NormalizeText(a.title + " " + a.questions));
    space = FeatureSpace::Build(docs, config.intent.features);
  }
  l2_store_ = std::make_shared<StoreBackedAnswerStore>(store_.get(),
                                                       std::chrono::milliseconds(config.l3.ttl_ms));
  semantic_ = std::make_unique<SemanticCache>(config.semantic_cache, space, l2_store_);
  l2_ = std::make_unique<SemanticTier>(*semantic_, metrics_);
}

Result<std::unique_ptr<AnswerStack>> AnswerStack::Build(const AnswererConfig& config,
                                                        const StoreConfig& store_config,
                                                        const AnswerStackOptions& options) {
  RETURN_IF_ERROR(ValidateConfig(config).WithContext("answer"));
  std::unique_ptr<AnswerStack> s(new AnswerStack());
  s->clock_ = options.clock ? options.clock : &SystemClock::Get();
  s->metrics_ = options.metrics;

  ASSIGN_OR_RETURN(s->store_, Store::Create(store_config, s->clock_));
  ASSIGN_OR_RETURN(std::vector<Article> articles, s->OpenKnowledgeBase(config, options));
  s->report_.articles = articles.size();
  RETURN_IF_ERROR(s->OpenAccounts(config, store_config, options));
  if (config.use_intent_cache) s->TrainClassifier(config, articles);
  if (s->classifier_) RETURN_IF_ERROR(s->BuildIntentTier(config, articles));
  if (config.use_semantic_cache) s->BuildSemanticTier(config, articles);
  if (config.use_result_cache) s->l3_ = std::make_unique<ResultCache>(*s->store_, config.l3);

  AnswererParts parts;
  const IntentClassifier* classifier = s->classifier_.get();
  parts.understand = [classifier](std::string_view turn) -> Result<Question> {
    return QuestionFromUnderstanding(answer::Understand(turn, classifier), CurrentYearMonth());
  };
  parts.l1 = s->l1_.get();
  parts.l2 = s->l2_.get();
  parts.l3 = s->l3_.get();
  parts.kb = s->kb_.get();
  parts.tools = s->tools_.get();
  parts.identifier = s->identifier_.get();
  parts.llm = options.llm;
  parts.clock = s->clock_;
  parts.metrics = options.metrics;
  ASSIGN_OR_RETURN(s->answerer_, Answerer::Create(config, std::move(parts)));
  HLOG_INFO("answer stack: {} articles, intent classifier {} intents from {} questions in {:.0f} ms "
            "(threshold {:.3f}: {:.1f}% of held-out folds accepted at {:.1f}% precision), "
            "{} L1 templates, L2 {}, LLM {}",
            s->report_.articles, s->report_.intents, s->report_.training_examples,
            s->report_.classifier_ms, s->report_.classifier_threshold,
            100 * s->report_.cv_coverage, 100 * s->report_.cv_precision,
            s->report_.l1_templates, s->semantic_ ? "on" : "off",
            options.llm ? options.llm->name() : std::string("none"));
  return s;
}

}  // namespace hotline::answer
