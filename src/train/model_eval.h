// Evaluation of a trained support-agent model on held-out questions, through the same path the
// call uses: each question becomes the answerer's LLM-tier prompt (CallPrompt), the model answers
// through llm::LanguageModel greedily, and the answer is scored.
//
//   auto judge = AnswerIntentJudge::Create(*stack->classifier(), articles);
//   auto report = EvaluateModel(*model, heldout, **judge, {});
//
// Scores per answer:
//   - intent, twice: (1) the call's intent classifier (trained on the knowledge base's example
//     questions) applied to the generated answer, top-1 regardless of its acceptance threshold;
//     (2) the intent of the most similar knowledge-base answer (cosine over the same classifier's
//     features). Both judges are also run on the reference answers: that share is the judge's own
//     ceiling, reported beside the model's figure;
//   - ROUGE-L F1 (longest common word subsequence) against the reference answer;
//   - exact match (after trimming whitespace);
//   - repetition: a word n-gram occurring more than once, and whether generation hit max_tokens.
//
// Thread-safety: the functions are pure; AnswerIntentJudge is immutable after Create (Judge is
// const and thread-safe). EvaluateModel blocks for the whole run (one request at a time).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "answer/generate/prompt.h"
#include "answer/kb/knowledge_base.h"
#include "answer/understand/features.h"
#include "answer/understand/intent_classifier.h"
#include "common/status.h"
#include "llm/language_model.h"
#include "train/support_data.h"

namespace hotline::train {

// Lower-case words (letters, digits, inner apostrophes) of `text`, at most `max_words`.
std::vector<std::string> EvalWords(std::string_view text, size_t max_words = 1024);

struct RougeL {
  double precision = 0;
  double recall = 0;
  double f1 = 0;
};
// ROUGE-L over EvalWords: LCS / candidate words, LCS / reference words, their harmonic mean.
// Two empty texts score 1; one empty text scores 0.
RougeL RougeLScore(std::string_view candidate, std::string_view reference);

struct RepetitionOptions {
  // Word n-gram length. 4 words repeated is a loop in a one- or two-sentence answer; shorter
  // n-grams ("your order") repeat legitimately.
  int ngram = 4;
};
struct Repetition {
  bool repeats = false;
  std::string ngram;    // the first n-gram seen twice ("" when none)
  int occurrences = 0;  // how often that n-gram occurs
};
Repetition FindRepetition(std::string_view text, const RepetitionOptions& options = {});

// Reads the MODEL.heldout.tsv `hotline train` writes: a header "question<TAB>intent<TAB>answer",
// then one example per line. Errors name the line (wrong field count, empty field, a line over
// 16 KiB, more than 1,000,000 lines).
Result<std::vector<SupportExample>> ParseHeldOutTsv(std::string_view text);

class AnswerIntentJudge {
 public:
  struct Verdict {
    std::string classifier_intent;  // the call's classifier, top-1
    double classifier_probability = 0;
    std::string kb_intent;          // intent of the most similar knowledge-base answer
    std::string kb_article_id;
    double kb_similarity = 0;       // its cosine (0 when nothing is similar)
  };

  // `classifier` is borrowed and must outlive the judge; `articles` are the knowledge base's
  // answers (bodies) with their intents. InvalidArgument when no article has a body and intent.
  static Result<std::unique_ptr<AnswerIntentJudge>> Create(
      const answer::IntentClassifier& classifier, const std::vector<answer::Article>& articles);

  Verdict Judge(std::string_view answer_text) const;

 private:
  explicit AnswerIntentJudge(const answer::IntentClassifier& c) : classifier_(c) {}
  struct Entry {
    std::string id, intent;
    answer::SparseVector vector;
  };
  const answer::IntentClassifier& classifier_;
  std::vector<Entry> entries_;
};

struct ModelEvalOptions {
  answer::PromptConfig prompt;  // the call's prompt settings (system prompt, budget)
  int max_tokens = 64;          // per answer; reaching it counts as a loop
  double rouge_threshold = 0.5;
  RepetitionOptions repetition;
  size_t limit = 0;  // first N examples only; 0 = all
};

struct ModelEvalItem {
  std::string question, intent, reference, generated;
  std::string error;  // the model's error, if generation failed (the item then counts as wrong)
  std::string finish;
  int generated_tokens = 0;
  double ms = 0;
  AnswerIntentJudge::Verdict verdict;
  RougeL rouge;
  bool exact = false;
  Repetition repetition;
  bool hit_max_tokens = false;
};

struct ModelEvalReport {
  std::vector<ModelEvalItem> items;
  size_t examples = 0;
  size_t intent_classifier_correct = 0;  // judge (1) agrees with the question's intent
  // Judge (1) gives the answer the intent it gives the reference answer (right or wrong): how
  // often the model's answer reads like the reference to the call's classifier.
  size_t classifier_agrees_with_reference = 0;
  size_t intent_kb_correct = 0;          // judge (2) agrees
  size_t exact = 0;
  size_t rouge_at_threshold = 0;  // ROUGE-L F1 >= options.rouge_threshold
  double rouge_l_f1_mean = 0;
  size_t repeats = 0;
  size_t hit_max_tokens = 0;
  size_t loops = 0;  // repeats or hit max_tokens
  size_t errors = 0;
  // The judges and the repetition detector on the reference answers themselves.
  size_t reference_classifier_correct = 0;
  size_t reference_kb_correct = 0;
  size_t reference_repeats = 0;
  double rouge_threshold = 0;
  double seconds = 0;
  int64_t generated_tokens = 0;
};

// Errors: no examples, or every generation failed (the first error is returned).
Result<ModelEvalReport> EvaluateModel(llm::LanguageModel& model,
                                      const std::vector<SupportExample>& examples,
                                      const AnswerIntentJudge& judge,
                                      const ModelEvalOptions& options);

}  // namespace hotline::train
