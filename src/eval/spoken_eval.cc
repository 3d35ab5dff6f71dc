#include "eval/spoken_eval.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "answer/understand/clarify.h"
#include "answer/understand/normalize.h"
#include "asr/lm_builder.h"
#include "asr/wer.h"
#include "common/metrics.h"
#include "eval/speech_cache.h"
#include "eval/telephone_line.h"
#include "tts/text_normalizer.h"

namespace hotline::eval {

std::string_view ItemOutcomeName(ItemOutcome outcome) {
  switch (outcome) {
    case ItemOutcome::kNone:
      return "";
    case ItemOutcome::kRight:
      return "right";
    case ItemOutcome::kWrong:
      return "wrong";
    case ItemOutcome::kFallback:
      return "fallback";
    case ItemOutcome::kClarified:
      return "clarified";
    case ItemOutcome::kAnswered:
      return "answered";
  }
  return "";
}

std::vector<Voice> DefaultVoices() {
  return {{"flite", "cmu_us_slt", false},  {"flite", "cmu_us_awb", false},
          {"espeak-ng", "en-us", false},   {"flite", "cmu_us_rms", true},
          {"flite", "cmu_us_kal16", true}, {"espeak-ng", "en-gb-x-rp", true}};
}

Result<std::vector<Voice>> ParseVoices(std::string_view spec) {
  const std::vector<Voice> declared = DefaultVoices();
  std::vector<Voice> out;
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string_view::npos) end = spec.size();
    const std::string_view item = spec.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    if (item == "all" || item == "tuning" || item == "report") {
      for (const Voice& v : declared) {
        if (item == "all" || v.report_only == (item == "report")) out.push_back(v);
      }
      continue;
    }
    const size_t slash = item.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 == item.size()) {
      return InvalidArgumentError("voice '" + std::string(item) +
                                  "': write BACKEND/VOICE, e.g. flite/cmu_us_slt or "
                                  "espeak-ng/en-gb-x-rp");
    }
    Voice v{std::string(item.substr(0, slash)), std::string(item.substr(slash + 1)), true};
    if (item == kWrittenLine) {
      v.report_only = false;
      out.push_back(std::move(v));
      continue;
    }
    if (v.backend != "flite" && v.backend != "espeak-ng") {
      return InvalidArgumentError("voice '" + std::string(item) + "': backend must be flite or " +
                                  "espeak-ng (or " + kWrittenLine + " for the written line)");
    }
    for (const Voice& d : declared) {
      if (d.id() == v.id()) v.report_only = d.report_only;
    }
    out.push_back(std::move(v));
  }
  if (out.empty()) return InvalidArgumentError("no voice given");
  return out;
}

std::vector<answer::LabelledText> EvenSample(const std::vector<answer::LabelledText>& v,
                                             size_t limit) {
  if (limit == 0 || v.size() <= limit) return v;
  std::vector<answer::LabelledText> out;
  out.reserve(limit);
  for (size_t i = 0; i < limit; ++i) out.push_back(v[i * v.size() / limit]);
  return out;
}

Result<QuestionSet> LoadBanking77(const std::string& path, const std::string& name) {
  ASSIGN_OR_RETURN(auto rows, answer::LoadLabelledTexts(path, ""));
  return QuestionSet{name, std::move(rows)};
}

Result<QuestionSet> LoadClinc(const std::string& path, const std::string& key,
                              const std::string& name) {
  QuestionSet s{name, {}};
  if (key.rfind("oos", 0) == 0) {
    ASSIGN_OR_RETURN(auto texts, answer::LoadNegativeTexts(path, key));
    for (std::string& t : texts) s.questions.push_back({std::move(t), kOutOfScope});
  } else {
    ASSIGN_OR_RETURN(s.questions, answer::LoadLabelledTexts(path, key));
  }
  return s;
}

Result<QuestionSet> LoadQuestionTsv(const std::string& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot open");
  QuestionSet s{name, {}};
  std::string line;
  int line_no = 0;
  int q_col = -1, label_col = -1, domain_col = -1;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.size() > 16384)
      return InvalidArgumentError(path + ":" + std::to_string(line_no) + ": line over 16 KiB");
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, '\t')) f.push_back(field);
    if (q_col < 0) {  // header: "question<TAB>intent..." or "# domain<TAB>question<TAB>topic"
      for (size_t i = 0; i < f.size(); ++i) {
        std::string h = f[i];
        if (!h.empty() && h[0] == '#') h = std::string(answer::NormalizeText(h));
        if (h == "question") q_col = static_cast<int>(i);
        if (h == "intent" || h == "label") label_col = static_cast<int>(i);
        if (h == "domain") domain_col = static_cast<int>(i);
      }
      if (q_col < 0) {
        return InvalidArgumentError(path + ":" + std::to_string(line_no) +
                                    ": the header must name a `question` column");
      }
      continue;
    }
    if (static_cast<int>(f.size()) <= q_col) {
      return InvalidArgumentError(path + ":" + std::to_string(line_no) + ": no question field");
    }
    answer::LabelledText t{f[static_cast<size_t>(q_col)], ""};
    if (label_col >= 0 && static_cast<int>(f.size()) > label_col) {
      t.label = f[static_cast<size_t>(label_col)];
    } else if (domain_col >= 0 && static_cast<int>(f.size()) > domain_col &&
               f[static_cast<size_t>(domain_col)] == "oos") {
      t.label = kOutOfScope;
    }
    s.questions.push_back(std::move(t));
  }
  if (s.questions.empty()) return InvalidArgumentError(path + ": no questions");
  return s;
}

namespace {

std::string SnrName(double snr) {
  if (std::isinf(snr)) return "clean";
  char b[32];
  std::snprintf(b, sizeof b, "%g dB", snr);
  return b;
}

uint64_t Seed(const std::string& text, double snr) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  return h ^ static_cast<uint64_t>(std::isinf(snr) ? 0 : snr * 1000);
}

// Which article (and so which intent) an answer came from.
class Attribution {
 public:
  static Result<Attribution> Of(answer::KnowledgeBase& kb) {
    Attribution a;
    ASSIGN_OR_RETURN(auto articles, kb.All());
    for (const auto& art : articles) {
      a.by_id_[art.id] = art.intent;
      a.by_text_[art.body] = art.intent;
      if (!art.answer_template.empty()) a.by_text_[art.answer_template] = art.intent;
    }
    return a;
  }
  // "" when the answer is no article's (the language model's, or the fallback).
  std::string IntentOf(const answer::AnswerResult& r, const answer::Question& q) const {
    using answer::AnswerTierId;
    switch (r.tier) {
      case AnswerTierId::kL1:
      case AnswerTierId::kTool:
      case AnswerTierId::kIdentify:
        return q.intent;  // L1 speaks the template of the question's accepted intent
      case AnswerTierId::kKnowledgeBase:
        if (!r.passage_ids.empty()) {
          auto it = by_id_.find(r.passage_ids[0]);
          if (it != by_id_.end()) return it->second;
        }
        break;
      default:
        break;
    }
    auto it = by_text_.find(r.text);
    return it == by_text_.end() ? std::string() : it->second;
  }

 private:
  std::unordered_map<std::string, std::string> by_id_;
  std::unordered_map<std::string, std::string> by_text_;
};

Result<asr::AsrResult> Recognize(asr::Recognizer& recognizer, const std::vector<int16_t>& pcm,
                                 double& final_ms) {
  ASSIGN_OR_RETURN(auto stream, recognizer.CreateStream(8000));
  constexpr size_t kFrame = 160;  // 20 ms at 8 kHz, as a call delivers them
  for (size_t i = 0; i < pcm.size(); i += kFrame) {
    const size_t n = std::min(kFrame, pcm.size() - i);
    RETURN_IF_ERROR(
        stream->AcceptFrames(audio::AudioView(std::span<const int16_t>(pcm.data() + i, n), 8000)));
  }
  const auto start = std::chrono::steady_clock::now();
  auto result = stream->Finish();
  final_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

// Longer than any answer-cache entry lives: the L2 and L3 times to live are 32-bit counts of
// milliseconds (under 25 days). (The PIN ledger's windows are in seconds and may be longer; an
// evaluation's turns never give a PIN.)
constexpr std::chrono::hours kPastEveryTimeToLive{24 * 30};

// `said` spoken by `synth` (or read from `cache`), carried over the telephone line at `snr` and
// recognized: fills item.heard, asr_confidence and final_ms.
Status Hear(tts::Synthesizer& synth, SpeechCache& cache, asr::Recognizer& recognizer,
            const std::string& said, uint64_t seed, double snr, SpokenItem& item) {
  ASSIGN_OR_RETURN(audio::AudioBuffer speech, cache.Get(synth, said));
  LineOptions line;
  line.add_noise = !std::isinf(snr);
  line.snr_db = line.add_noise ? snr : 0;
  line.seed = seed;
  ASSIGN_OR_RETURN(
      std::vector<int16_t> pcm,
      ThroughTelephoneLine(audio::AudioView(speech.samples, speech.sample_rate_hz), line));
  ASSIGN_OR_RETURN(asr::AsrResult heard, Recognize(recognizer, pcm, item.final_ms));
  item.heard = heard.text;
  item.asr_confidence = heard.confidence;
  item.asr_word_confidence.clear();
  for (const asr::AsrWord& w : heard.words) item.asr_word_confidence.push_back(w.confidence);
  return Status::Ok();
}

// How one answer to a question labelled `label` counts.
ItemOutcome OutcomeOf(const answer::AnswerResult& a, const std::string& answered_intent,
                      const std::string& label) {
  if (a.tier == answer::AnswerTierId::kFallback) return ItemOutcome::kFallback;
  if (a.tier == answer::AnswerTierId::kClarify) return ItemOutcome::kClarified;
  if (label.empty()) return ItemOutcome::kAnswered;  // unlabelled: judged by a person
  return label != kOutOfScope && answered_intent == label ? ItemOutcome::kRight
                                                          : ItemOutcome::kWrong;
}

// Answered, but not from the question's article: counted in the "wrong" column.
bool AnsweredWrong(ItemOutcome o) {
  return o == ItemOutcome::kWrong || o == ItemOutcome::kAnswered;
}

// What a cooperative caller whose question has intent `label` says to a clarifying question.
std::string CooperativeReply(const answer::PendingClarification& p, const std::string& label) {
  if (p.kind == answer::PendingClarification::Kind::kConfirm) {
    return !p.intents.empty() && p.intents[0] == label ? "yes" : "no";
  }
  if (!p.intents.empty() && p.intents[0] == label) return "the first one";
  if (p.intents.size() > 1 && p.intents[1] == label) return "the second one";
  return "neither";
}

// Answers `heard` as a call answers a new caller's turn and records the outcome in `item` and
// `cell`; a clarifying question gets the cooperative caller's reply, answered in the same call.
Status AnswerLikeACall(pipeline::CallStack& stack, const Attribution& attribution,
                       const std::string& label, const std::string& heard, double confidence,
                       SpokenItem& item, SpokenCell& cell) {
  answer::AnswerStack& answers = stack.answers();
  const answer::Question understood = answers.Understand(heard);
  item.heard_intent = understood.intent;
  if (understood.prediction) {
    item.guess = understood.prediction->intent;
    item.guess_probability = understood.prediction->probability;
    item.guess_confidence = understood.prediction->confidence;
    item.guess_margin = understood.prediction->margin;
    item.runner_up = understood.prediction->runner_up;
    item.neighbour_intent = understood.prediction->neighbour_intent;
    item.neighbour_similarity = understood.prediction->neighbour_similarity;
  }
  if (!understood.text.empty()) {  // what the knowledge-base tier searches with
    ASSIGN_OR_RETURN(std::vector<answer::Passage> top, answers.kb().Search(understood.text, 1));
    if (!top.empty()) {
      item.kb_top_intent = top[0].article.intent;
      item.kb_top_score = top[0].score;
    }
  }
  answer::CallerSession caller("");
  answer::AnswerOptions ao;
  ao.asr_confidence = confidence;
  ASSIGN_OR_RETURN(answer::AnswerResult a, stack.answerer().Answer(heard, caller, {}, ao));
  item.tier = std::string(answer::TierName(a.tier));
  if (a.tier != answer::AnswerTierId::kFallback) {
    item.answered_intent = attribution.IntentOf(a, understood);
    if (a.tier == answer::AnswerTierId::kLlm && item.answered_intent.empty()) ++cell.by_model;
  }
  item.outcome = OutcomeOf(a, item.answered_intent, label);
  if (item.outcome == ItemOutcome::kRight) ++cell.right;
  if (AnsweredWrong(item.outcome)) ++cell.wrong;
  if (item.outcome == ItemOutcome::kFallback) ++cell.fallback;
  if (item.outcome != ItemOutcome::kClarified || !caller.clarification()) return Status::Ok();

  ++cell.clarified;
  const answer::PendingClarification pending = *caller.clarification();
  item.reply = CooperativeReply(pending, label);
  answer::Question settled = understood;
  const answer::ClarificationReply r =
      answer::ResolveClarification(pending, answer::NormalizeText(item.reply));
  if (r.outcome == answer::ClarificationReply::Outcome::kChosen) settled.intent = r.intent;
  ASSIGN_OR_RETURN(answer::AnswerResult b, stack.answerer().Answer(item.reply, caller, {}, {}));
  const std::string intent =
      b.tier == answer::AnswerTierId::kFallback ? "" : attribution.IntentOf(b, settled);
  item.after_clarification = OutcomeOf(b, intent, label);
  if (item.after_clarification == ItemOutcome::kRight) ++cell.right_after_clarification;
  if (AnsweredWrong(item.after_clarification)) {
    ++cell.wrong_after_clarification;
  }
  return Status::Ok();
}

}  // namespace

Result<SpokenReport> RunSpokenEval(pipeline::CallStack& stack, const std::vector<QuestionSet>& sets,
                                   const tts::TtsConfig& tts_config,
                                   const SpokenEvalOptions& options) {
  if (options.voices.empty()) return InvalidArgumentError("no voices to speak the questions");
  if (options.snrs_db.empty()) return InvalidArgumentError("no line condition");
  const auto wall_start = std::chrono::steady_clock::now();
  asr::Recognizer* recognizer = stack.resources().recognizer;
  if (recognizer == nullptr) return FailedPreconditionError("the call stack has no recognizer");
  answer::AnswerStack& answers = stack.answers();
  ASSIGN_OR_RETURN(Attribution attribution, Attribution::Of(answers.kb()));
  const tts::TextNormalizer speech_text;
  SpeechCache cache(options.cache_dir);

  std::vector<QuestionSet> sampled;
  size_t total = 0;
  for (const QuestionSet& s : sets) {
    sampled.push_back({s.name, EvenSample(s.questions, options.limit)});
    for (const Voice& v : options.voices) {
      total += sampled.back().questions.size() * (v.written() ? 1 : options.snrs_db.size());
    }
  }
  // The written questions' intents do not depend on the voice.
  std::vector<std::vector<std::string>> text_intents;
  for (const QuestionSet& s : sampled) {
    std::vector<std::string> v;
    for (const auto& q : s.questions) v.push_back(answers.Understand(q.text).intent);
    text_intents.push_back(std::move(v));
  }

  SpokenReport report;
  size_t done = 0;
  for (const Voice& voice : options.voices) {
    tts::TtsConfig tc = tts_config;
    tc.backend = voice.backend;
    if (voice.backend == "flite") tc.flite.voice = voice.name;
    if (voice.backend == "espeak-ng") tc.espeak_ng.voice = voice.name;
    std::unique_ptr<tts::Synthesizer> synth;
    if (!voice.written()) {
      ASSIGN_OR_RETURN(synth, tts::CreateSynthesizer(tc));
    }
    // The written line has no noise to add: one condition.
    const std::vector<double> lines =
        voice.written() ? std::vector<double>{kCleanLine} : options.snrs_db;
    for (size_t si = 0; si < sampled.size(); ++si) {
      const QuestionSet& set = sampled[si];
      for (double snr : lines) {
        SpokenCell cell;
        cell.set = set.name;
        cell.voice = voice.id();
        cell.report_only = voice.report_only;
        cell.snr_db = snr;
        PercentileSummary final_ms;
        const std::string cell_name = set.name + " " + voice.id() + " " + SnrName(snr);
        if (options.answer_clock) options.answer_clock->Advance(kPastEveryTimeToLive);
        for (size_t qi = 0; qi < set.questions.size(); ++qi) {
          if (options.answer_clock) options.answer_clock->Advance(kQuestionInterval);
          const answer::LabelledText& q = set.questions[qi];
          SpokenItem item;
          item.question = q.text;
          item.label = q.label;
          const std::string said = speech_text.Normalize(q.text);
          item.spoken = asr::NormalizeTranscriptText(said);
          if (voice.written()) {
            item.heard = item.spoken;
            item.asr_confidence = 1;
          } else {
            RETURN_IF_ERROR(Hear(*synth, cache, *recognizer, said, Seed(q.text, snr), snr, item));
            final_ms.Add(item.final_ms);
          }
          const asr::WerCounts w = asr::ComputeWer(asr::NormalizeForScoring(item.spoken),
                                                   asr::NormalizeForScoring(item.heard));
          item.wer = w.rate();
          cell.wer += w;
          item.text_intent = text_intents[si][qi];
          RETURN_IF_ERROR(AnswerLikeACall(stack, attribution, q.label, item.heard,
                                          item.asr_confidence, item, cell));
          if (!q.label.empty() && q.label != kOutOfScope) {
            ++cell.in_scope;
            cell.text_intent_right += item.text_intent == q.label ? 1 : 0;
            cell.heard_intent_right += item.heard_intent == q.label ? 1 : 0;
          }
          ++cell.questions;
          if (options.keep_items) cell.items.push_back(std::move(item));
          ++done;
          if (options.progress) options.progress(done, total, cell_name);
        }
        cell.final_p50_ms = final_ms.count() ? final_ms.P50() : 0;
        cell.final_p99_ms = final_ms.count() ? final_ms.P99() : 0;
        report.cells.push_back(std::move(cell));
      }
    }
  }
  report.synthesized = cache.misses();
  report.cached = cache.hits();
  report.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return report;
}

std::string FormatSpokenTable(const SpokenReport& r) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line,
                "%-18s %-22s %-6s %-7s %5s %6s %7s %7s %7s %7s %7s %7s %7s %7s %6s %6s\n", "set",
                "voice", "role", "line", "n", "WER", "int.txt", "int.asr", "penalty", "right",
                "wrong", "fallbk", "clarif", "+right", "fin50", "fin99");
  out += line;
  for (const SpokenCell& c : r.cells) {
    const bool labelled = c.in_scope > 0;
    auto pct = [&](size_t k) {
      char b[16];
      std::snprintf(b, sizeof b, "%.1f%%", 100 * c.Share(k));
      return std::string(b);
    };
    auto ipct = [&](size_t k) {
      char b[16];
      std::snprintf(b, sizeof b, "%.1f%%", 100 * c.IntentShare(k));
      return std::string(b);
    };
    const std::string txt = labelled ? ipct(c.text_intent_right) : "-";
    const std::string asr = labelled ? ipct(c.heard_intent_right) : "-";
    char pen[16] = "-";
    if (labelled) {
      std::snprintf(
          pen, sizeof pen, "%.1f",
          100 * (c.IntentShare(c.text_intent_right) - c.IntentShare(c.heard_intent_right)));
    }
    const bool written = c.voice == kWrittenLine;
    char fin[32] = "     -      -";
    if (!written) std::snprintf(fin, sizeof fin, "%6.1f %6.1f", c.final_p50_ms, c.final_p99_ms);
    std::snprintf(line, sizeof line,
                  "%-18s %-22s %-6s %-7s %5zu %5.1f%% %7s %7s %7s %7s %7s %7s %7s %7s %s\n",
                  c.set.c_str(), c.voice.c_str(),
                  written ? "text" : (c.report_only ? "report" : "tuning"),
                  SnrName(c.snr_db).c_str(), c.questions, 100 * c.wer.rate(), txt.c_str(),
                  asr.c_str(), pen, pct(c.right).c_str(), pct(c.wrong).c_str(),
                  pct(c.fallback).c_str(), pct(c.clarified).c_str(),
                  pct(c.right_after_clarification).c_str(), fin);
    out += line;
  }
  out +=
      "int.txt/int.asr: intent accuracy on the written question / the transcript; penalty = "
      "their difference (points);\nright/wrong/fallbk: answers from the question's intent's "
      "article / any other answer (out of scope: any answer) / the fallback;\nclarif: asked a "
      "clarifying question instead; +right: of all questions, answered right after a cooperative "
      "caller's reply to it;\n";
  std::snprintf(line, sizeof line,
                "fin50/fin99: recognizer final pass P50/P99 (ms). %zu synthesized, %zu from the "
                "speech cache, %.0f s.\n",
                r.synthesized, r.cached, r.wall_s);
  out += line;
  return out;
}

std::string SpokenReportJson(const SpokenReport& r, bool with_items) {
  nlohmann::json cells = nlohmann::json::array();
  for (const SpokenCell& c : r.cells) {
    nlohmann::json j = {
        {"set", c.set},
        {"voice", c.voice},
        {"role", c.voice == kWrittenLine ? "text" : (c.report_only ? "report" : "tuning")},
        {"snr_db", std::isinf(c.snr_db) ? nlohmann::json(nullptr) : nlohmann::json(c.snr_db)},
        {"questions", c.questions},
        {"wer", c.wer.rate()},
        {"reference_words", c.wer.reference_words},
        {"in_scope", c.in_scope},
        {"intent_accuracy_text", c.IntentShare(c.text_intent_right)},
        {"intent_accuracy_spoken", c.IntentShare(c.heard_intent_right)},
        {"speech_penalty_points",
         100 * (c.IntentShare(c.text_intent_right) - c.IntentShare(c.heard_intent_right))},
        {"answered_right", c.Share(c.right)},
        {"answered_wrong", c.Share(c.wrong)},
        {"answered_wrong_by_model", c.Share(c.by_model)},
        {"fell_back", c.Share(c.fallback)},
        {"clarified", c.Share(c.clarified)},
        {"right_after_clarification", c.Share(c.right_after_clarification)},
        {"wrong_after_clarification", c.Share(c.wrong_after_clarification)},
        {"final_pass_ms_p50", c.final_p50_ms},
        {"final_pass_ms_p99", c.final_p99_ms}};
    if (with_items) {
      nlohmann::json items = nlohmann::json::array();
      for (const SpokenItem& i : c.items) {
        items.push_back({{"question", i.question},
                         {"label", i.label},
                         {"spoken", i.spoken},
                         {"heard", i.heard},
                         {"wer", i.wer},
                         {"asr_confidence", i.asr_confidence},
                         {"asr_word_confidence", i.asr_word_confidence},
                         {"text_intent", i.text_intent},
                         {"heard_intent", i.heard_intent},
                         {"guess", i.guess},
                         {"guess_probability", i.guess_probability},
                         {"guess_confidence", i.guess_confidence},
                         {"guess_margin", i.guess_margin},
                         {"runner_up", i.runner_up},
                         {"neighbour_intent", i.neighbour_intent},
                         {"neighbour_similarity", i.neighbour_similarity},
                         {"kb_top_intent", i.kb_top_intent},
                         {"kb_top_score", i.kb_top_score},
                         {"tier", i.tier},
                         {"answered_intent", i.answered_intent},
                         {"outcome", ItemOutcomeName(i.outcome)},
                         {"reply", i.reply},
                         {"after_clarification", ItemOutcomeName(i.after_clarification)},
                         {"final_ms", i.final_ms}});
      }
      j["items"] = std::move(items);
    }
    cells.push_back(std::move(j));
  }
  nlohmann::json out = {
      {"cells", cells}, {"synthesized", r.synthesized}, {"cached", r.cached}, {"wall_s", r.wall_s}};
  return out.dump(1);
}

}  // namespace hotline::eval
