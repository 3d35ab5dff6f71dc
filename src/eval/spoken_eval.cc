#include "eval/spoken_eval.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "answer/understand/normalize.h"
#include "asr/lm_builder.h"
#include "asr/wer.h"
#include "common/metrics.h"
#include "eval/speech_cache.h"
#include "eval/telephone_line.h"
#include "tts/text_normalizer.h"

namespace hotline::eval {

std::vector<Voice> DefaultVoices() {
  return {{"flite", "cmu_us_slt", false},  {"flite", "cmu_us_awb", false},
          {"espeak-ng", "en-us", false},   {"flite", "cmu_us_rms", true},
          {"flite", "cmu_us_kal16", true}, {"espeak-ng", "en-gb-x-rp", true}};
}

Result<std::vector<Voice>> ParseVoices(std::string_view spec) {
  const std::vector<Voice> declared = DefaultVoices();
  std::vector<Voice> out;
  if (spec == "all") return declared;
  if (spec == "tuning" || spec == "report") {
    for (const Voice& v : declared) {
      if (v.report_only == (spec == "report")) out.push_back(v);
    }
    return out;
  }
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string_view::npos) end = spec.size();
    const std::string_view item = spec.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    const size_t slash = item.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 == item.size()) {
      return InvalidArgumentError("voice '" + std::string(item) +
                                  "': write BACKEND/VOICE, e.g. flite/cmu_us_slt or "
                                  "espeak-ng/en-gb-x-rp");
    }
    Voice v{std::string(item.substr(0, slash)), std::string(item.substr(slash + 1)), true};
    if (v.backend != "flite" && v.backend != "espeak-ng") {
      return InvalidArgumentError("voice '" + std::string(item) +
                                  "': backend must be flite or espeak-ng");
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
    total += sampled.back().questions.size() * options.voices.size() * options.snrs_db.size();
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
    ASSIGN_OR_RETURN(auto synth, tts::CreateSynthesizer(tc));
    for (size_t si = 0; si < sampled.size(); ++si) {
      const QuestionSet& set = sampled[si];
      for (double snr : options.snrs_db) {
        SpokenCell cell;
        cell.set = set.name;
        cell.voice = voice.id();
        cell.report_only = voice.report_only;
        cell.snr_db = snr;
        PercentileSummary final_ms;
        const std::string cell_name = set.name + " " + voice.id() + " " + SnrName(snr);
        for (size_t qi = 0; qi < set.questions.size(); ++qi) {
          const answer::LabelledText& q = set.questions[qi];
          SpokenItem item;
          item.question = q.text;
          item.label = q.label;
          const std::string said = speech_text.Normalize(q.text);
          item.spoken = asr::NormalizeTranscriptText(said);
          ASSIGN_OR_RETURN(audio::AudioBuffer speech, cache.Get(*synth, said));
          LineOptions line;
          line.add_noise = !std::isinf(snr);
          line.snr_db = line.add_noise ? snr : 0;
          line.seed = Seed(q.text, snr);
          ASSIGN_OR_RETURN(
              std::vector<int16_t> pcm,
              ThroughTelephoneLine(audio::AudioView(speech.samples, speech.sample_rate_hz), line));
          ASSIGN_OR_RETURN(asr::AsrResult heard, Recognize(*recognizer, pcm, item.final_ms));
          final_ms.Add(item.final_ms);
          item.heard = heard.text;
          item.asr_confidence = heard.confidence;
          const asr::WerCounts w = asr::ComputeWer(asr::NormalizeForScoring(item.spoken),
                                                   asr::NormalizeForScoring(heard.text));
          item.wer = w.rate();
          cell.wer += w;
          item.text_intent = text_intents[si][qi];
          const answer::Question understood = answers.Understand(heard.text);
          item.heard_intent = understood.intent;
          // The turn as a call answers it: a new caller, the recognizer's confidence.
          answer::CallerSession caller("");
          answer::AnswerOptions ao;
          ao.asr_confidence = heard.confidence;
          ASSIGN_OR_RETURN(answer::AnswerResult a,
                           stack.answerer().Answer(heard.text, caller, {}, ao));
          item.tier = std::string(answer::TierName(a.tier));
          if (a.tier == answer::AnswerTierId::kFallback) {
            item.outcome = "fallback";
          } else {
            item.answered_intent = attribution.IntentOf(a, understood);
            if (q.label.empty()) {
              item.outcome = "answered";  // unlabelled: judged by a person
            } else {
              item.outcome =
                  q.label != kOutOfScope && item.answered_intent == q.label ? "right" : "wrong";
            }
            if (a.tier == answer::AnswerTierId::kLlm && item.answered_intent.empty()) {
              ++cell.by_model;
            }
          }
          if (!q.label.empty() && q.label != kOutOfScope) {
            ++cell.in_scope;
            cell.text_intent_right += item.text_intent == q.label ? 1 : 0;
            cell.heard_intent_right += item.heard_intent == q.label ? 1 : 0;
          }
          if (item.outcome == "right") ++cell.right;
          if (item.outcome == "wrong" || item.outcome == "answered") ++cell.wrong;
          if (item.outcome == "fallback") ++cell.fallback;
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
                "%-18s %-22s %-6s %-7s %5s %6s %7s %7s %7s %7s %7s %7s %6s %6s\n", "set", "voice",
                "role", "line", "n", "WER", "int.txt", "int.asr", "penalty", "right", "wrong",
                "fallbk", "fin50", "fin99");
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
    std::snprintf(line, sizeof line,
                  "%-18s %-22s %-6s %-7s %5zu %5.1f%% %7s %7s %7s %7s %7s %7s %6.1f %6.1f\n",
                  c.set.c_str(), c.voice.c_str(), c.report_only ? "report" : "tuning",
                  SnrName(c.snr_db).c_str(), c.questions, 100 * c.wer.rate(), txt.c_str(),
                  asr.c_str(), pen, pct(c.right).c_str(), pct(c.wrong).c_str(),
                  pct(c.fallback).c_str(), c.final_p50_ms, c.final_p99_ms);
    out += line;
  }
  std::snprintf(line, sizeof line,
                "int.txt/int.asr: intent accuracy on the written question / the transcript; "
                "penalty = their difference (points);\nright/wrong/fallbk: answers from the "
                "question's intent's article / any other answer (out of scope: any answer) / the "
                "fallback;\nfin50/fin99: recognizer final pass P50/P99 (ms). %zu synthesized, "
                "%zu from the speech cache, %.0f s.\n",
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
        {"role", c.report_only ? "report" : "tuning"},
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
                         {"text_intent", i.text_intent},
                         {"heard_intent", i.heard_intent},
                         {"tier", i.tier},
                         {"answered_intent", i.answered_intent},
                         {"outcome", i.outcome},
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
