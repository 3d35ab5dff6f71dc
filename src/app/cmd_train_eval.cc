// `hotline train eval --model M.gguf --heldout M.heldout.tsv [--json] [--limit N]`: answers each
// held-out question with the model through the call's LLM-tier path (the answerer's prompt, the
// llm engine backend, greedy) and reports intent accuracy (two judges, with their ceilings on the
// reference answers), ROUGE-L F1, exact match and loops (train/model_eval.h).
#include <cstdio>
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "answer/answer_stack.h"
#include "app/cli.h"
#include "app/hotline_config.h"
#include "common/build_paths.h"
#include "common/log.h"
#include "llm/llm_config.h"
#include "train/model_eval.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline train eval --heldout FILE.tsv [--model M.gguf] [options]\n"
    "  Answers every held-out question as the call's LLM tier would (the answerer's prompt, greedy)\n"
    "  and reports intent accuracy, ROUGE-L F1, exact match and loops.\n"
    "  --heldout FILE      MODEL.heldout.tsv written by `hotline train`\n"
    "  --model FILE        GGUF model for the engine backend (default: the configured llm)\n"
    "  --kb FILE           knowledge-base CSV the intent judges are built from (default: the\n"
    "                      demo knowledge base)\n"
    "  --config FILE       configuration (answer.prompt, answer.intent, llm); --set a.b=v overrides\n"
    "  --threads T         engine compute threads (default: llm.engine.threads)\n"
    "  --max-tokens N      tokens per answer; reaching it counts as a loop (default:\n"
    "                      answer.prompt.reserved_output_tokens)\n"
    "  --rouge-threshold X ROUGE-L F1 counted as a match (default 0.5)\n"
    "  --ngram N           repeated word n-gram length of the loop detector (default 4)\n"
    "  --limit N           first N held-out questions only\n"
    "  --json              print the report (with every answer) as JSON\n"
    "  -o FILE             also write the JSON report to FILE\n";

std::string Pct(size_t k, size_t n) {
  char b[64];
  std::snprintf(b, sizeof b, "%zu/%zu = %.1f %%", k, n, n ? 100.0 * double(k) / double(n) : 0.0);
  return b;
}

nlohmann::json ReportJson(const train::ModelEvalReport& r, const std::string& model_name) {
  nlohmann::json items = nlohmann::json::array();
  for (const train::ModelEvalItem& it : r.items) {
    nlohmann::json j = {{"question", it.question},
                        {"intent", it.intent},
                        {"reference", it.reference},
                        {"answer", it.generated},
                        {"finish", it.finish},
                        {"generated_tokens", it.generated_tokens},
                        {"ms", it.ms},
                        {"classifier_intent", it.verdict.classifier_intent},
                        {"kb_intent", it.verdict.kb_intent},
                        {"kb_similarity", it.verdict.kb_similarity},
                        {"rouge_l_f1", it.rouge.f1},
                        {"exact", it.exact},
                        {"repeated_ngram", it.repetition.ngram},
                        {"hit_max_tokens", it.hit_max_tokens}};
    if (!it.error.empty()) j["error"] = it.error;
    items.push_back(std::move(j));
  }
  const double n = double(std::max<size_t>(1, r.examples));
  return {{"model", model_name},
          {"examples", r.examples},
          {"intent_accuracy_classifier", double(r.intent_classifier_correct) / n},
          {"intent_accuracy_kb_answer", double(r.intent_kb_correct) / n},
          {"reference_intent_accuracy_classifier", double(r.reference_classifier_correct) / n},
          {"classifier_agrees_with_reference", double(r.classifier_agrees_with_reference) / n},
          {"reference_intent_accuracy_kb_answer", double(r.reference_kb_correct) / n},
          {"rouge_l_f1_mean", r.rouge_l_f1_mean},
          {"rouge_threshold", r.rouge_threshold},
          {"rouge_at_threshold", double(r.rouge_at_threshold) / n},
          {"exact_match", double(r.exact) / n},
          {"loops", r.loops},
          {"repeats", r.repeats},
          {"hit_max_tokens", r.hit_max_tokens},
          {"reference_repeats", r.reference_repeats},
          {"errors", r.errors},
          {"seconds", r.seconds},
          {"generated_tokens", r.generated_tokens},
          {"items", std::move(items)}};
}

// The judges: the intent classifier exactly as the call trains it (the answer stack on the
// knowledge base), and the knowledge base's answers. The stack owns what the judge reads.
struct Judges {
  std::unique_ptr<answer::AnswerStack> stack;
  std::vector<answer::Article> articles;
  std::unique_ptr<train::AnswerIntentJudge> judge;
};

Result<std::unique_ptr<Judges>> BuildJudges(const HotlineConfig& cfg, const std::string& kb_csv) {
  auto j = std::make_unique<Judges>();
  answer::AnswerStackOptions so;
  so.kb_path = ":memory:";
  so.kb_csv = kb_csv;
  // An in-memory answer store: the judges need the classifier and the articles, not the caches
  // (and an evaluation must not reach a configured Redis).
  auto stack = answer::AnswerStack::Build(cfg.answer, answer::StoreConfig{}, so);
  if (!stack.ok()) return stack.status().WithContext("answer stack");
  j->stack = std::move(*stack);
  if (j->stack->classifier() == nullptr) {
    return FailedPreconditionError("the knowledge base " + kb_csv + " trains no intent classifier");
  }
  ASSIGN_OR_RETURN(j->articles, j->stack->kb().All());
  ASSIGN_OR_RETURN(j->judge,
                   train::AnswerIntentJudge::Create(*j->stack->classifier(), j->articles));
  return j;
}

void PrintReport(const train::ModelEvalReport& r, const std::string& model_name,
                 const train::ModelEvalOptions& opt) {
  const size_t n = r.examples;
  std::printf("model: %s, %zu held-out questions, greedy, max %d tokens\n", model_name.c_str(), n,
              opt.max_tokens);
  std::printf("intent (call's classifier on the answer): %s   (on the reference answers: %s)\n",
              Pct(r.intent_classifier_correct, n).c_str(),
              Pct(r.reference_classifier_correct, n).c_str());
  std::printf("  the classifier gives the answer the intent it gives the reference: %s\n",
              Pct(r.classifier_agrees_with_reference, n).c_str());
  std::printf("intent (nearest knowledge-base answer):   %s   (on the reference answers: %s)\n",
              Pct(r.intent_kb_correct, n).c_str(), Pct(r.reference_kb_correct, n).c_str());
  std::printf("ROUGE-L F1: mean %.3f, >= %.2f: %s\n", r.rouge_l_f1_mean, r.rouge_threshold,
              Pct(r.rouge_at_threshold, n).c_str());
  std::printf("exact match: %s\n", Pct(r.exact, n).c_str());
  std::printf(
      "loops: %zu (repeated %d-grams %zu, hit max tokens %zu; reference answers with a "
      "repeated %d-gram: %zu)\n",
      r.loops, opt.repetition.ngram, r.repeats, r.hit_max_tokens, opt.repetition.ngram,
      r.reference_repeats);
  std::printf("errors: %zu; generated %lld tokens in %.2f s\n", r.errors,
              static_cast<long long>(r.generated_tokens), r.seconds);
  int shown = 0;
  for (const train::ModelEvalItem& it : r.items) {
    if (it.verdict.kb_intent == it.intent && it.verdict.classifier_intent == it.intent &&
        !it.repetition.repeats && !it.hit_max_tokens && it.error.empty()) {
      continue;
    }
    if (shown++ == 0) std::printf("misses (question [intent] -> answer [classifier / kb]):\n");
    if (shown > 20) {
      std::printf("  ... (--json lists every answer)\n");
      break;
    }
    std::printf("  %s [%s] -> %s [%s / %s]%s\n", it.question.c_str(), it.intent.c_str(),
                it.error.empty() ? it.generated.c_str() : ("error: " + it.error).c_str(),
                it.verdict.classifier_intent.c_str(), it.verdict.kb_intent.c_str(),
                it.repetition.repeats ? " (repeats)"
                : it.hit_max_tokens   ? " (max tokens)"
                                      : "");
  }
}

int RunTrainEval(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"--heldout", "--model", "--kb", "--config", "--set", "--threads",
                                 "--max-tokens", "--rouge-threshold", "--ngram", "--limit", "-o"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  const std::optional<std::string> heldout_path = args->Get("--heldout");
  const std::optional<std::string> model_path = args->Get("--model");
  const std::string kb_csv =
      args->GetOr("--kb", std::string(HOTLINE_ASSETS_DIR) + "/kb/bitext_kb.csv");
  const std::string config_path = args->GetOr("--config", "");
  const std::vector<std::string> overrides = args->GetAll("--set");
  auto threads = args->GetInt("--threads", 0, 0, 256);
  auto max_tokens = args->GetInt("--max-tokens", 0, 0, 4096);
  auto rouge = args->GetDouble("--rouge-threshold", 0.5, 0.0, 1.0);
  auto ngram = args->GetInt("--ngram", 4, 1, 32);
  auto limit = args->GetInt("--limit", 0, 0, 10000000);
  const bool json = args->Has("--json");
  const std::optional<std::string> out_path = args->Get("-o");
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  for (const auto* r : {&threads, &max_tokens, &ngram, &limit}) {
    if (!r->ok()) return UsageError(r->status().message(), kUsage);
  }
  if (!rouge.ok()) return UsageError(rouge.status().message(), kUsage);
  if (!heldout_path) return UsageError("--heldout is required", kUsage);
  if (!args->positional().empty()) return UsageError("unexpected argument", kUsage);

  auto cfg = LoadHotlineConfig(config_path, overrides);
  if (!cfg.ok()) return Fail(cfg.status());
  InitLogging(cfg->log_level == "info" ? "warn" : cfg->log_level);
  auto tsv = train::ReadTextFile(*heldout_path, 64u << 20);
  if (!tsv.ok()) return Fail(tsv.status());
  auto heldout = train::ParseHeldOutTsv(*tsv);
  if (!heldout.ok()) return Fail(heldout.status().WithContext(*heldout_path));

  auto judges = BuildJudges(*cfg, kb_csv);
  if (!judges.ok()) return Fail(judges.status());

  llm::LlmConfig lc = cfg->llm;
  if (model_path) {
    lc.backend = "engine";
    lc.engine.engine.model_path = *model_path;
  }
  if (*threads > 0) lc.engine.engine.threads = static_cast<int>(*threads);
  if (lc.backend == "none") {
    return UsageError("no model: give --model or configure llm.backend", kUsage);
  }
  auto model = llm::CreateLanguageModel(lc);
  if (!model.ok()) return Fail(model.status());

  train::ModelEvalOptions opt;
  opt.prompt = cfg->answer.prompt;
  opt.max_tokens =
      *max_tokens > 0 ? static_cast<int>(*max_tokens) : cfg->answer.prompt.reserved_output_tokens;
  opt.rouge_threshold = *rouge;
  opt.repetition.ngram = static_cast<int>(*ngram);
  opt.limit = static_cast<size_t>(*limit);
  auto report = train::EvaluateModel(**model, *heldout, *(*judges)->judge, opt);
  if (!report.ok()) return Fail(report.status());
  const train::ModelEvalReport& r = *report;

  const nlohmann::json js = ReportJson(r, (*model)->name());
  if (out_path) {
    std::ofstream out(*out_path);
    if (!(out << js.dump(1) << "\n")) return Fail("cannot write " + *out_path);
  }
  if (json) {
    std::cout << js.dump(1) << "\n";
    return 0;
  }
  PrintReport(r, (*model)->name(), opt);
  return 0;
}

const CommandRegistrar kTrainEval({"train eval",
                                   "evaluate a trained model on its held-out questions", kUsage,
                                   RunTrainEval});

}  // namespace
}  // namespace hotline::cli
