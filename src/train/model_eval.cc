#include "train/model_eval.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <unordered_map>

#include "answer/understand/normalize.h"

namespace hotline::train {
namespace {

constexpr size_t kMaxTsvLineBytes = 16 * 1024;
constexpr size_t kMaxTsvLines = 1000000;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool IsWordChar(unsigned char c) { return std::isalnum(c) || c >= 0x80; }

}  // namespace

std::vector<std::string> EvalWords(std::string_view text, size_t max_words) {
  std::vector<std::string> words;
  std::string cur;
  auto flush = [&] {
    while (!cur.empty() && cur.back() == '\'') cur.pop_back();
    if (!cur.empty() && words.size() < max_words) words.push_back(cur);
    cur.clear();
  };
  for (size_t i = 0; i < text.size() && words.size() < max_words; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (IsWordChar(c)) {
      cur.push_back(static_cast<char>(std::tolower(c)));
    } else if (c == '\'' && !cur.empty()) {
      cur.push_back('\'');  // "don't" stays one word; a trailing quote is dropped by flush
    } else {
      flush();
    }
  }
  flush();
  return words;
}

RougeL RougeLScore(std::string_view candidate, std::string_view reference) {
  const std::vector<std::string> c = EvalWords(candidate), r = EvalWords(reference);
  RougeL out;
  if (c.empty() && r.empty()) return {1, 1, 1};
  if (c.empty() || r.empty()) return out;
  // LCS with two rows: O(|c|·|r|) time, O(|r|) memory; both are capped by EvalWords.
  std::vector<int> prev(r.size() + 1, 0), cur(r.size() + 1, 0);
  for (size_t i = 1; i <= c.size(); ++i) {
    for (size_t j = 1; j <= r.size(); ++j) {
      cur[j] = c[i - 1] == r[j - 1] ? prev[j - 1] + 1 : std::max(prev[j], cur[j - 1]);
    }
    std::swap(prev, cur);
  }
  const double lcs = prev[r.size()];
  out.precision = lcs / double(c.size());
  out.recall = lcs / double(r.size());
  out.f1 = lcs > 0 ? 2 * out.precision * out.recall / (out.precision + out.recall) : 0.0;
  return out;
}

Repetition FindRepetition(std::string_view text, const RepetitionOptions& options) {
  Repetition out;
  const int n = std::max(1, options.ngram);
  const std::vector<std::string> w = EvalWords(text);
  if (w.size() < size_t(n)) return out;
  std::unordered_map<std::string, int> seen;
  std::string first;
  for (size_t i = 0; i + size_t(n) <= w.size(); ++i) {
    std::string key = w[i];
    for (int k = 1; k < n; ++k) key += ' ' + w[i + size_t(k)];
    const int count = ++seen[key];
    if (count == 2 && first.empty()) first = key;
  }
  if (first.empty()) return out;
  out.repeats = true;
  out.ngram = first;
  out.occurrences = seen[first];
  return out;
}

Result<std::vector<SupportExample>> ParseHeldOutTsv(std::string_view text) {
  std::vector<SupportExample> out;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > kMaxTsvLineBytes) {
      return InvalidArgumentError("held-out line " + std::to_string(line_no) + " is longer than " +
                                  std::to_string(kMaxTsvLineBytes) + " bytes");
    }
    if (line_no > kMaxTsvLines) {
      return InvalidArgumentError("held-out file has more than " + std::to_string(kMaxTsvLines) +
                                  " lines");
    }
    if (line_no == 1) {
      if (line != "question\tintent\tanswer") {
        return InvalidArgumentError(
            "held-out line 1: expected the header question<TAB>intent<TAB>answer (the "
            "MODEL.heldout.tsv `hotline train` writes)");
      }
      continue;
    }
    if (line.empty()) continue;
    std::vector<std::string_view> f;
    size_t s = 0;
    while (true) {
      const size_t t = line.find('\t', s);
      f.push_back(line.substr(s, t == std::string_view::npos ? std::string_view::npos : t - s));
      if (t == std::string_view::npos) break;
      s = t + 1;
    }
    if (f.size() != 3) {
      return InvalidArgumentError("held-out line " + std::to_string(line_no) + ": expected 3 " +
                                  "tab-separated fields, got " + std::to_string(f.size()));
    }
    if (Trim(f[0]).empty() || Trim(f[1]).empty() || Trim(f[2]).empty()) {
      return InvalidArgumentError("held-out line " + std::to_string(line_no) +
                                  ": question, intent and answer must not be empty");
    }
    out.push_back(SupportExample{std::string(f[0]), std::string(f[2]), std::string(f[1])});
  }
  if (out.empty()) return InvalidArgumentError("the held-out file has no examples");
  return out;
}

Result<std::unique_ptr<AnswerIntentJudge>> AnswerIntentJudge::Create(
    const answer::IntentClassifier& classifier, const std::vector<answer::Article>& articles) {
  std::unique_ptr<AnswerIntentJudge> j(new AnswerIntentJudge(classifier));
  for (const answer::Article& a : articles) {
    if (a.intent.empty() || Trim(a.body).empty()) continue;
    j->entries_.push_back(
        {a.id, a.intent, classifier.feature_space().Vectorize(answer::NormalizeText(a.body))});
  }
  if (j->entries_.empty()) {
    return InvalidArgumentError("no knowledge-base article has both an answer and an intent");
  }
  return j;
}

AnswerIntentJudge::Verdict AnswerIntentJudge::Judge(std::string_view answer_text) const {
  Verdict v;
  const std::string normalized = answer::NormalizeText(answer_text);
  const answer::IntentPrediction p = classifier_.Predict(normalized);
  v.classifier_intent = p.intent;
  v.classifier_probability = p.probability;
  const answer::SparseVector q = classifier_.feature_space().Vectorize(normalized);
  for (const Entry& e : entries_) {
    const double sim = answer::Dot(q, e.vector);
    if (sim > v.kb_similarity) {
      v.kb_similarity = sim;
      v.kb_intent = e.intent;
      v.kb_article_id = e.id;
    }
  }
  return v;
}

Result<ModelEvalReport> EvaluateModel(llm::LanguageModel& model,
                                      const std::vector<SupportExample>& examples,
                                      const AnswerIntentJudge& judge,
                                      const ModelEvalOptions& options) {
  if (examples.empty()) return InvalidArgumentError("no held-out examples to evaluate");
  if (options.max_tokens < 1) return InvalidArgumentError("max_tokens must be at least 1");
  const size_t n =
      options.limit > 0 ? std::min(options.limit, examples.size()) : examples.size();
  ModelEvalReport rep;
  rep.rouge_threshold = options.rouge_threshold;
  Status first_error;
  double rouge_sum = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < n; ++i) {
    const SupportExample& ex = examples[i];
    ModelEvalItem it;
    it.question = ex.question;
    it.intent = ex.intent;
    it.reference = ex.answer;
    // The reference through the same judges: how far the judges themselves can be trusted.
    const AnswerIntentJudge::Verdict ref = judge.Judge(ex.answer);
    rep.reference_classifier_correct += ref.classifier_intent == ex.intent;
    rep.reference_kb_correct += ref.kb_intent == ex.intent;
    rep.reference_repeats += FindRepetition(ex.answer, options.repetition).repeats;

    auto generate = [&]() -> Result<llm::GenerateStats> {
      ASSIGN_OR_RETURN(std::vector<engine::ChatMessage> prompt,
                       CallPrompt(ex.question, options.prompt));
      llm::GenerateRequest req;
      for (const engine::ChatMessage& m : prompt) req.messages.push_back({m.role, m.content});
      req.max_tokens = options.max_tokens;
      req.temperature = 0.0f;  // greedy: the figures are reproducible
      return model.Generate(req, [&](std::string_view delta) {
        it.generated.append(delta);
        return true;
      });
    };
    const Result<llm::GenerateStats> stats = generate();
    if (!stats.ok()) {
      it.error = stats.status().message();
      if (first_error.ok()) first_error = stats.status();
      ++rep.errors;
    } else {
      it.finish = std::string(llm::FinishReasonName(stats->finish));
      it.generated_tokens = stats->generated_tokens;
      it.ms = stats->total_ms;
      it.hit_max_tokens = stats->finish == llm::FinishReason::kLength ||
                          stats->finish == llm::FinishReason::kContextFull;
      rep.generated_tokens += stats->generated_tokens;
    }
    it.verdict = judge.Judge(it.generated);
    it.rouge = RougeLScore(it.generated, ex.answer);
    it.exact = stats.ok() && Trim(it.generated) == Trim(ex.answer);
    it.repetition = FindRepetition(it.generated, options.repetition);
    const bool ok = stats.ok();
    rep.intent_classifier_correct += ok && it.verdict.classifier_intent == ex.intent;
    rep.intent_kb_correct += ok && it.verdict.kb_intent == ex.intent;
    rep.classifier_agrees_with_reference +=
        ok && it.verdict.classifier_intent == ref.classifier_intent;
    rep.exact += it.exact;
    rep.rouge_at_threshold += ok && it.rouge.f1 >= options.rouge_threshold;
    rouge_sum += it.rouge.f1;
    rep.repeats += it.repetition.repeats;
    rep.hit_max_tokens += it.hit_max_tokens;
    rep.loops += it.repetition.repeats || it.hit_max_tokens;
    rep.items.push_back(std::move(it));
  }
  rep.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rep.examples = n;
  rep.rouge_l_f1_mean = rouge_sum / double(n);
  if (rep.errors == n) return first_error.WithContext("every generation failed");
  return rep;
}

}  // namespace hotline::train
