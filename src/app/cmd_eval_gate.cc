// `hotline eval gate`: which questions the LLM gate (answer/generate/llm_gate.h) lets reach the
// language model. Every question goes through the real answer stack (the configured answerer, the
// demo knowledge base) with a probe model that only notes that the LLM tier was reached, so no
// cache learns anything between questions. For the questions that reach the LLM tier it reports the
// share the gate keeps, for in-scope questions (the Bitext questions of `hotline train`'s split:
// train for tuning, test = the demo model's held-out questions) and out-of-scope ones (CLINC150:
// oos_train + oos_val for tuning, oos_test for the report); it picks the intent top-two minimum
// that best separates the two TUNING sets (Youden's J: kept in scope - kept out of scope) and
// compares the other signals at a fixed in-scope share.
//
// --spoken N speaks N questions of each set with flite over a telephone line (8 kHz μ-law) to
// the configured recognizer with the knowledge base's domain model (as a call builds it), and
// answers what it heard: the recognizer's confidence for well and badly recognized questions,
// and the gate with both checks.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "answer/answer_stack.h"
#include "answer/eval/eval_data.h"
#include "answer/kb/knowledge_base.h"
#include "answer/understand/normalize.h"
#include "app/cli.h"
#include "app/hotline_config.h"
#include "pipeline/call_stack.h"
#include "asr/recognizer.h"
#include "asr/wer.h"
#include "audio/g711.h"
#include "audio/resampler.h"
#include "common/build_paths.h"
#include "common/log.h"
#include "train/support_data.h"
#include "tts/synthesizer.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline eval gate --bitext CSV --clinc JSON [options]\n"
    "  Runs in-scope and out-of-scope questions through the answer stack and reports which reach\n"
    "  the LLM tier and which of those the LLM gate keeps or blocks.\n"
    "  --bitext FILE     Bitext customer_support.csv: in-scope questions, split as\n"
    "                    `hotline train` splits them (train: tuning; test: the demo model's\n"
    "                    held-out questions)\n"
    "  --clinc FILE      CLINC150 data_full.json: oos_train + oos_val (tuning), oos_test (report)\n"
    "  --kb FILE         knowledge-base CSV (default: the demo knowledge base)\n"
    "  --config FILE     configuration (answer.*, asr.*); --set a.b=v overrides\n"
    "  --spoken N        also speak N questions of each set (flite) over a telephone line (8 kHz\n"
    "                    mu-law) to the configured recognizer (pocketsphinx with the knowledge\n"
    "                    base's domain model, as a call builds it) and answer what it heard, with\n"
    "                    its confidence (default 0: text only)\n"
    "  --json            print the report as JSON\n"
    "  -o FILE           also write the JSON report to FILE\n";

// One question as the answer stack saw it.
struct Item {
  std::string question;
  bool reached = false;  // reached the LLM tier (the gate's inputs below)
  answer::LlmGateInput input;
  std::string tier;  // the tier that answered with the gate off ("llm" when reached)
  // Spoken only: what the recognizer heard and its word error rate against the question.
  std::string heard;
  double wer = -1;
};

// Notes that the LLM tier was reached and answers nothing (the answerer then falls back and
// shares nothing, so each question is answered as if it were the first).
class ProbeModel final : public llm::LanguageModel {
 public:
  Result<llm::GenerateStats> Generate(const llm::GenerateRequest& request,
                                      const llm::TextCallback& on_text) override {
    (void)request;
    (void)on_text;
    ++calls;
    return llm::GenerateStats{};
  }
  int CountTokens(std::string_view text) const override {
    return static_cast<int>(text.size() / 4 + 1);
  }
  std::string name() const override { return "probe"; }
  int calls = 0;
};

struct Set {
  std::string name;
  bool in_scope = false;
  bool tuning = false;
  std::vector<Item> items;
};

Result<Item> Ask(answer::Answerer& answerer, ProbeModel& probe, std::string question,
                 std::optional<double> asr_confidence) {
  Item it;
  it.question = std::move(question);
  answer::CallerSession caller("");
  answer::AnswerOptions options;
  options.asr_confidence = asr_confidence;
  const int before = probe.calls;
  ASSIGN_OR_RETURN(answer::AnswerResult a, answerer.Answer(it.question, caller, {}, options));
  it.reached = a.llm_gate.has_value();
  it.tier = std::string(answer::TierName(a.tier));
  if (it.reached) {
    it.input = a.llm_gate->input;
    it.tier = "llm";
    if (probe.calls == before) return InternalError("the LLM tier was reached but not called");
  }
  return it;
}

std::vector<const Item*> Reached(const Set& s) {
  std::vector<const Item*> out;
  for (const Item& it : s.items) {
    if (it.reached) out.push_back(&it);
  }
  return out;
}

// Share of `set`'s LLM-tier questions the gate `g` lets through.
double KeptShare(const Set& set, const answer::LlmGateConfig& g) {
  const auto reached = Reached(set);
  if (reached.empty()) return 1;
  size_t kept = 0;
  for (const Item* it : reached) kept += answer::DecideLlmGate(g, it->input).pass ? 1 : 0;
  return static_cast<double>(kept) / static_cast<double>(reached.size());
}

double Quantile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  return v[i];
}

nlohmann::json Quantiles(const std::vector<double>& v) {
  return {{"n", v.size()},           {"p10", Quantile(v, 0.1)},  {"p25", Quantile(v, 0.25)},
          {"p50", Quantile(v, 0.5)}, {"p75", Quantile(v, 0.75)}, {"p90", Quantile(v, 0.9)}};
}

using Signal = double (*)(const answer::LlmGateInput&);
const std::pair<const char*, Signal> kSignals[] = {
    {"intent_top_two", [](const answer::LlmGateInput& i) { return i.intent_top_two.value_or(0); }},
    {"intent_margin", [](const answer::LlmGateInput& i) { return i.intent_margin; }},
    {"intent_probability", [](const answer::LlmGateInput& i) { return i.intent_probability; }},
    {"intent_confidence", [](const answer::LlmGateInput& i) { return i.intent_confidence; }},
    {"intent_score", [](const answer::LlmGateInput& i) { return i.intent_score; }},
    {"neighbour_similarity", [](const answer::LlmGateInput& i) { return i.neighbour_similarity; }},
    {"kb_top_score", [](const answer::LlmGateInput& i) { return i.kb_top_score; }},
};

std::vector<double> Values(const Set& s, Signal f) {
  std::vector<double> v;
  for (const Item* it : Reached(s)) v.push_back(f(it->input));
  return v;
}

// Share of `neg` below the highest cut that keeps at least `keep` of `pos`.
double BlockedAtKept(std::vector<double> pos, const std::vector<double>& neg, double keep) {
  if (pos.empty() || neg.empty()) return 0;
  std::sort(pos.begin(), pos.end());
  const size_t drop = static_cast<size_t>((1 - keep) * static_cast<double>(pos.size()));
  const double cut = pos[std::min(drop, pos.size() - 1)];
  size_t blocked = 0;
  for (double x : neg) blocked += x < cut ? 1 : 0;
  return static_cast<double>(blocked) / static_cast<double>(neg.size());
}

double ShareAtLeast(const std::vector<double>& v, double cut) {
  if (v.empty()) return 0.0;
  size_t k = 0;
  for (double x : v) k += x >= cut ? 1 : 0;
  return static_cast<double>(k) / static_cast<double>(v.size());
}

// The cut among `cuts` that maximizes share(pos >= cut) - share(neg >= cut) (Youden's J); the
// lowest such cut on ties.
double BestCut(const std::vector<double>& pos, const std::vector<double>& neg,
               std::vector<double> cuts) {
  std::sort(cuts.begin(), cuts.end());
  double best = 0, best_j = -2;
  for (double cut : cuts) {
    const double j = ShareAtLeast(pos, cut) - ShareAtLeast(neg, cut);
    if (j > best_j + 1e-12) {
      best_j = j;
      best = cut;
    }
  }
  return best;
}

// Every `n`th question so that about `count` remain, skipping those with digits (a synthesizer
// reads "00004587345" as digits, the recognizer writes words: the error would be the scoring's).
std::vector<std::string> Sample(const std::vector<std::string>& questions, size_t count) {
  std::vector<std::string> usable;
  for (const std::string& q : questions) {
    if (std::none_of(q.begin(), q.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      usable.push_back(q);
    }
  }
  if (usable.size() <= count) return usable;
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) out.push_back(usable[i * usable.size() / count]);
  return out;
}

// Speaks `text`, carries it over a μ-law telephone line and recognizes it as a call would.
Result<asr::AsrResult> Hear(tts::Synthesizer& synth, asr::Recognizer& recognizer,
                            const std::string& text) {
  ASSIGN_OR_RETURN(audio::AudioBuffer speech, tts::SynthesizeToBuffer(synth, text));
  ASSIGN_OR_RETURN(audio::AudioBuffer narrow,
                   audio::Resample(audio::AudioView(speech.samples, speech.sample_rate_hz), 8000));
  std::vector<uint8_t> line(narrow.samples.size());
  audio::EncodeMulaw(narrow.samples, line);
  std::vector<int16_t> pcm(line.size());
  audio::DecodeMulaw(line, pcm);
  ASSIGN_OR_RETURN(auto stream, recognizer.CreateStream(8000));
  constexpr size_t kFrame = 160;  // 20 ms at 8 kHz
  for (size_t i = 0; i < pcm.size(); i += kFrame) {
    const size_t n = std::min(kFrame, pcm.size() - i);
    RETURN_IF_ERROR(
        stream->AcceptFrames(audio::AudioView(std::span<const int16_t>(pcm.data() + i, n), 8000)));
  }
  return stream->Finish();
}

// The four question sets as they are read: Bitext train / test (split as `hotline train` splits
// them) and CLINC150's out-of-scope questions (oos_train + oos_val for tuning, oos_test).
struct Input {
  std::string name;
  bool in_scope = false;
  bool tuning = false;
  std::vector<std::string> questions;
};

Result<std::vector<Input>> LoadInputs(const std::string& bitext_path,
                                      const std::string& clinc_path) {
  ASSIGN_OR_RETURN(std::string csv, train::ReadTextFile(bitext_path, 64u << 20));
  auto support = train::BuildSupportData(csv, train::SupportDataOptions{});
  if (!support.ok()) return support.status().WithContext(bitext_path);
  auto questions = [](const std::vector<train::SupportExample>& v) {
    std::vector<std::string> out;
    for (const auto& e : v) out.push_back(e.question);
    return out;
  };
  std::vector<std::string> oos_tune;
  for (const char* key : {"oos_train", "oos_val"}) {
    ASSIGN_OR_RETURN(std::vector<std::string> part, answer::LoadNegativeTexts(clinc_path, key));
    oos_tune.insert(oos_tune.end(), part.begin(), part.end());
  }
  ASSIGN_OR_RETURN(std::vector<std::string> oos_test,
                   answer::LoadNegativeTexts(clinc_path, "oos_test"));
  std::vector<Input> inputs;
  inputs.push_back({"bitext_train", true, true, questions(support->train)});
  inputs.push_back({"clinc_oos_train_val", false, true, std::move(oos_tune)});
  inputs.push_back({"bitext_test", true, false, questions(support->test)});
  inputs.push_back({"clinc_oos_test", false, false, std::move(oos_test)});
  return inputs;
}

// The written questions of each set through the answer stack.
Result<std::vector<Set>> AskWritten(answer::Answerer& answerer, ProbeModel& probe,
                                    const std::vector<Input>& inputs) {
  std::vector<Set> sets;
  for (const Input& in : inputs) {
    Set s{in.name, in.in_scope, in.tuning, {}};
    for (const std::string& q : in.questions) {
      auto it = Ask(answerer, probe, q, std::nullopt);
      if (!it.ok()) return it.status().WithContext(in.name);
      s.items.push_back(std::move(*it));
    }
    sets.push_back(std::move(s));
  }
  return sets;
}

// Per set: the tiers, what reached the LLM tier and the share kept by the configured and chosen
// gates, each signal's quantiles and the reached questions; each signal's separation of the
// tuning sets; and the kept shares by min_intent_top_two.
void ReportWritten(const std::vector<Set>& sets, const answer::LlmGateConfig& configured,
                   const answer::LlmGateConfig& chosen, nlohmann::json& js) {
  for (const Set& s : sets) {
    std::map<std::string, size_t> tiers;
    for (const Item& it : s.items) ++tiers[it.tier];
    nlohmann::json j = {{"questions", s.items.size()},
                        {"tiers", tiers},
                        {"reached_llm", Reached(s).size()},
                        {"kept_at_configured", KeptShare(s, configured)},
                        {"kept_at_chosen", KeptShare(s, chosen)}};
    for (const auto& [name, f] : kSignals) j[name] = Quantiles(Values(s, f));
    nlohmann::json items = nlohmann::json::array();
    for (const Item* it : Reached(s)) {
      nlohmann::json row = {{"question", it->question}};
      for (const auto& [name, f] : kSignals) row[name] = f(it->input);
      items.push_back(std::move(row));
    }
    j["reached_items"] = std::move(items);
    js["sets"][s.name] = std::move(j);
  }
  // Each signal's separation on the tuning sets: out-of-scope share blocked by the cut that keeps
  // 75 % of the in-scope questions reaching the LLM tier.
  for (const auto& [name, f] : kSignals) {
    js["oos_blocked_at_75pct_kept_tuning"][name] =
        BlockedAtKept(Values(sets[0], f), Values(sets[1], f), 0.75);
  }
  nlohmann::json sweep = nlohmann::json::array();
  for (const double m : {0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8}) {
    answer::LlmGateConfig g;
    g.min_asr_confidence = 0;
    g.min_intent_top_two = m;
    nlohmann::json row = {{"min_intent_top_two", m}};
    for (const Set& s : sets) row[s.name] = KeptShare(s, g);
    sweep.push_back(std::move(row));
  }
  js["sweep_kept"] = std::move(sweep);
}

// Up to `count` questions of each set spoken by flite (rms, not the agent's voice) over the
// telephone line to the configured recognizer with the knowledge base's domain model, and
// answered as heard, with the recognizer's confidence.
Result<std::vector<Set>> AskSpoken(const HotlineConfig& cfg, const std::string& kb_csv,
                                   const std::vector<Input>& inputs, size_t count,
                                   answer::Answerer& answerer, ProbeModel& probe) {
  asr::AsrConfig asr_cfg = cfg.asr;
  const std::string lm = "/tmp/hotline_eval_gate_" + std::to_string(getpid()) + ".lm";
  RETURN_IF_ERROR(pipeline::UseKnowledgeBaseLm(asr_cfg, kb_csv, lm).status());
  auto recognizer = asr::CreateRecognizer(asr_cfg);
  tts::TtsConfig tc = cfg.tts;
  tc.backend = "flite";
  tc.flite.voice = "cmu_us_rms";  // not the agent's voice
  auto synth = tts::CreateSynthesizer(tc);
  std::filesystem::remove(lm);
  std::filesystem::remove(lm + ".dict");
  if (!recognizer.ok()) return recognizer.status().WithContext("recognizer");
  if (!synth.ok()) return synth.status().WithContext("synthesizer");
  std::vector<Set> heard_sets;
  for (const Input& in : inputs) {
    Set s{in.name, in.in_scope, in.tuning, {}};
    for (const std::string& q : Sample(in.questions, count)) {
      auto heard = Hear(**synth, **recognizer, q);
      if (!heard.ok()) return heard.status().WithContext("spoken '" + q + "'");
      auto it = Ask(answerer, probe, heard->text, heard->confidence);
      if (!it.ok()) return it.status().WithContext(in.name);
      it->heard = heard->text;
      it->question = q;
      it->input.asr_confidence = heard->confidence;
      it->wer = asr::ComputeWer(asr::NormalizeForScoring(answer::NormalizeText(q)),
                                asr::NormalizeForScoring(heard->text))
                    .rate();
      s.items.push_back(std::move(*it));
    }
    heard_sets.push_back(std::move(s));
  }
  return heard_sets;
}

// The recognizer's confidences of `s`'s questions heard with a word error rate in [lo, hi].
std::vector<double> ConfidencesAt(const Set& s, double lo, double hi) {
  std::vector<double> v;
  for (const Item& it : s.items) {
    if (it.wer >= lo && it.wer <= hi) v.push_back(it.input.asr_confidence.value_or(0));
  }
  return v;
}

// The spoken report: the recognizer's confidence of well (WER <= 0.25) and badly (WER > 0.5)
// recognized questions; the minimum that best separates, on the tuning sets, the well heard
// in-scope questions from the badly heard ones of both sets (an out-of-scope question is heard as
// in-domain words: the domain model knows no others); and the gate with each check and both.
nlohmann::json ReportSpoken(const std::vector<Set>& heard_sets,
                            const answer::LlmGateConfig& configured,
                            const answer::LlmGateConfig& chosen) {
  const std::vector<double> good = ConfidencesAt(heard_sets[0], 0, 0.25);
  std::vector<double> bad = ConfidencesAt(heard_sets[0], 0.5001, 1e9);
  const std::vector<double> bad_oos = ConfidencesAt(heard_sets[1], 0.5001, 1e9);
  bad.insert(bad.end(), bad_oos.begin(), bad_oos.end());
  std::vector<double> cuts = good;
  cuts.insert(cuts.end(), bad.begin(), bad.end());
  cuts.push_back(0);
  const double chosen_asr = BestCut(good, bad, cuts);
  nlohmann::json js;
  js["chosen_min_asr_confidence"] = chosen_asr;
  nlohmann::json asr_sweep = nlohmann::json::array();
  for (double cut : {0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9}) {
    nlohmann::json row = {{"min_asr_confidence", cut}};
    for (const Set& s : heard_sets) {
      row[s.name + "_wer_le_0.25_kept"] = ShareAtLeast(ConfidencesAt(s, 0, 0.25), cut);
      row[s.name + "_wer_gt_0.5_kept"] = ShareAtLeast(ConfidencesAt(s, 0.5001, 1e9), cut);
    }
    asr_sweep.push_back(std::move(row));
  }
  js["sweep_kept"] = std::move(asr_sweep);
  answer::LlmGateConfig both = chosen;
  both.min_asr_confidence = chosen_asr;
  answer::LlmGateConfig asr_only;
  asr_only.min_asr_confidence = chosen_asr;
  asr_only.min_intent_top_two = 0;
  for (const Set& s : heard_sets) {
    std::vector<double> wers;
    std::map<std::string, size_t> tiers;
    nlohmann::json items = nlohmann::json::array();
    for (const Item& it : s.items) {
      wers.push_back(it.wer);
      ++tiers[it.tier];
      items.push_back({{"question", it.question},
                       {"heard", it.heard},
                       {"wer", it.wer},
                       {"asr_confidence", it.input.asr_confidence.value_or(0)},
                       {"tier", it.tier},
                       {"intent_top_two", it.input.intent_top_two.value_or(0)}});
    }
    js["sets"][s.name] = {{"questions", s.items.size()},
                          {"wer", Quantiles(wers)},
                          {"asr_confidence_wer_le_0.25", Quantiles(ConfidencesAt(s, 0, 0.25))},
                          {"asr_confidence_wer_0.25_0.5", Quantiles(ConfidencesAt(s, 0.2501, 0.5))},
                          {"asr_confidence_wer_gt_0.5", Quantiles(ConfidencesAt(s, 0.5001, 1e9))},
                          {"tiers", tiers},
                          {"reached_llm", Reached(s).size()},
                          {"kept_intent_only", KeptShare(s, chosen)},
                          {"kept_asr_only", KeptShare(s, asr_only)},
                          {"kept_both", KeptShare(s, both)},
                          {"kept_at_configured", KeptShare(s, configured)},
                          {"items", items}};
  }
  return js;
}

// The written sets' table from the JSON report.
void PrintWritten(const nlohmann::json& js, const std::vector<std::string>& set_names,
                  const answer::LlmGateConfig& configured) {
  std::printf("%-20s %9s %7s %9s %9s  %s\n", "set", "questions", "to LLM", "kept*", "kept**",
              "intent top-two of those p10/p50/p90");
  for (const std::string& name : set_names) {
    const nlohmann::json& j = js["sets"][name];
    const auto& q = j["intent_top_two"];
    std::printf("%-20s %9zu %7zu %8.1f%% %8.1f%%  %.3f/%.3f/%.3f\n", name.c_str(),
                j["questions"].get<size_t>(), j["reached_llm"].get<size_t>(),
                100 * j["kept_at_configured"].get<double>(),
                100 * j["kept_at_chosen"].get<double>(), q["p10"].get<double>(),
                q["p50"].get<double>(), q["p90"].get<double>());
  }
  std::printf(
      "*  configured gate: %s, min_intent_top_two %.3f, min_asr_confidence %.2g (text\n"
      "   questions carry no recognizer confidence)\n",
      configured.enabled ? "enabled" : "disabled", configured.min_intent_top_two,
      configured.min_asr_confidence);
  std::printf("** min_intent_top_two %.3f: best separation of the tuning sets (Youden's J)\n",
              js["chosen_min_intent_top_two"].get<double>());
  std::printf(
      "out of scope blocked (tuning) where 75%% of in-scope questions to the LLM are kept:\n");
  for (const auto& [name, f] : kSignals) {
    std::printf("  %-22s %5.1f%%\n", name,
                100 * js["oos_blocked_at_75pct_kept_tuning"][name].get<double>());
  }
  std::printf("kept share of the questions reaching the LLM tier, by min_intent_top_two:\n  %8s",
              "top-two");
  for (const std::string& name : set_names) std::printf(" %20s", name.c_str());
  std::printf("\n");
  for (const auto& row : js["sweep_kept"]) {
    std::printf("  %8.3f", row["min_intent_top_two"].get<double>());
    for (const std::string& name : set_names)
      std::printf(" %19.1f%%", 100 * row[name].get<double>());
    std::printf("\n");
  }
}

// The spoken sets' table from the JSON report's "spoken" part.
void PrintSpoken(const nlohmann::json& spoken, const std::string& backend) {
  std::printf(
      "spoken (flite -> 8 kHz mu-law -> %s), min_asr_confidence %.2g chosen on the "
      "tuning sets;\n  kept shares of the questions reaching the LLM tier with the "
      "chosen minimums:\n",
      backend.c_str(), spoken["chosen_min_asr_confidence"].get<double>());
  std::printf("  %-20s %4s %8s  %-26s %-26s %5s %7s %7s %7s\n", "set", "n", "WER p50",
              "conf p25/p50/p75 WER<=.25", "conf p25/p50/p75 WER>.5", "toLLM", "intent", "asr",
              "both");
  auto q3 = [](const nlohmann::json& q) {
    char b[64];
    std::snprintf(b, sizeof b, "%.3f/%.3f/%.3f (%zu)", q["p25"].get<double>(),
                  q["p50"].get<double>(), q["p75"].get<double>(), q["n"].get<size_t>());
    return std::string(b);
  };
  for (const auto& [name, j] : spoken["sets"].items()) {
    std::printf("  %-20s %4zu %8.2f  %-26s %-26s %5zu %6.1f%% %6.1f%% %6.1f%%\n", name.c_str(),
                j["questions"].get<size_t>(), j["wer"]["p50"].get<double>(),
                q3(j["asr_confidence_wer_le_0.25"]).c_str(),
                q3(j["asr_confidence_wer_gt_0.5"]).c_str(), j["reached_llm"].get<size_t>(),
                100 * j["kept_intent_only"].get<double>(), 100 * j["kept_asr_only"].get<double>(),
                100 * j["kept_both"].get<double>());
  }
  std::printf(
      "  kept share by min_asr_confidence (well heard: WER <= 0.25 | badly: WER > 0.5):\n"
      "  %10s %23s %23s %23s %23s\n",
      "min", "bitext_train", "clinc_oos_train_val", "bitext_test", "clinc_oos_test");
  for (const auto& row : spoken["sweep_kept"]) {
    std::printf("  %10.2f", row["min_asr_confidence"].get<double>());
    for (const char* name :
         {"bitext_train", "clinc_oos_train_val", "bitext_test", "clinc_oos_test"}) {
      std::printf("        %6.1f%% | %6.1f%%",
                  100 * row[std::string(name) + "_wer_le_0.25_kept"].get<double>(),
                  100 * row[std::string(name) + "_wer_gt_0.5_kept"].get<double>());
    }
    std::printf("\n");
  }
}

int RunEvalGate(std::span<const std::string> argv) {
  auto args =
      Args::Parse(argv, {"--bitext", "--clinc", "--kb", "--config", "--set", "--spoken", "-o"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  const std::optional<std::string> bitext_path = args->Get("--bitext");
  const std::optional<std::string> clinc_path = args->Get("--clinc");
  const std::string kb_csv =
      args->GetOr("--kb", std::string(HOTLINE_ASSETS_DIR) + "/kb/bitext_kb.csv");
  const std::string config_path = args->GetOr("--config", "");
  const std::vector<std::string> overrides = args->GetAll("--set");
  auto spoken = args->GetInt("--spoken", 0, 0, 100000);
  const bool json = args->Has("--json");
  const std::optional<std::string> out_path = args->Get("-o");
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (!spoken.ok()) return UsageError(spoken.status().message(), kUsage);
  if (!bitext_path || !clinc_path) return UsageError("--bitext and --clinc are required", kUsage);
  if (!args->positional().empty()) return UsageError("unexpected argument", kUsage);

  auto cfg = LoadHotlineConfig(config_path, overrides);
  if (!cfg.ok()) return Fail(cfg.status());
  InitLogging(cfg->log_level == "info" ? "warn" : cfg->log_level);
  auto inputs = LoadInputs(*bitext_path, *clinc_path);
  if (!inputs.ok()) return Fail(inputs.status());

  // The gate is evaluated offline on what reached it: it must not block anything here.
  answer::AnswererConfig ac = cfg->answer;
  const answer::LlmGateConfig configured = ac.llm_gate;
  ac.llm_gate.enabled = false;
  ProbeModel probe;
  answer::AnswerStackOptions so;
  so.kb_path = ":memory:";
  so.kb_csv = kb_csv;
  so.llm = &probe;
  // In-memory store: an evaluation must not reach a configured Redis.
  auto stack = answer::AnswerStack::Build(ac, answer::StoreConfig{}, so);
  if (!stack.ok()) return Fail(stack.status().WithContext("answer stack"));
  if ((*stack)->classifier() == nullptr) {
    std::fprintf(stderr,
                 "note: no intent classifier (answer.use_intent_cache off or the knowledge "
                 "base trains none): the intent check never applies\n");
  }
  answer::Answerer& answerer = (*stack)->answerer();
  auto sets = AskWritten(answerer, probe, *inputs);
  if (!sets.ok()) return Fail(sets.status());

  // The intent top-two minimum that best separates the tuning sets.
  std::vector<double> top_two_grid;
  for (int k = 0; k <= 200; ++k) top_two_grid.push_back(k * 0.005);
  const double chosen_top_two = BestCut(Values((*sets)[0], kSignals[0].second),
                                        Values((*sets)[1], kSignals[0].second), top_two_grid);
  // The intent check alone (the text questions carry no recognizer confidence anyway).
  answer::LlmGateConfig chosen_gate;
  chosen_gate.min_asr_confidence = 0;
  chosen_gate.min_intent_top_two = chosen_top_two;

  nlohmann::json js;
  js["configured"] = {{"enabled", configured.enabled},
                      {"min_asr_confidence", configured.min_asr_confidence},
                      {"min_intent_top_two", configured.min_intent_top_two}};
  js["chosen_min_intent_top_two"] = chosen_top_two;
  ReportWritten(*sets, configured, chosen_gate, js);
  if (*spoken > 0) {
    auto heard = AskSpoken(*cfg, kb_csv, *inputs, static_cast<size_t>(*spoken), answerer, probe);
    if (!heard.ok()) return Fail(heard.status());
    js["spoken"] = ReportSpoken(*heard, configured, chosen_gate);
  }

  if (out_path) {
    std::ofstream out(*out_path);
    if (!(out << js.dump(1) << "\n")) return Fail("cannot write " + *out_path);
  }
  if (json) {
    std::cout << js.dump(1) << "\n";
    return 0;
  }
  std::printf("LLM gate on %s (intent classifier %s)\n", kb_csv.c_str(),
              (*stack)->classifier() ? "on" : "off");
  std::vector<std::string> set_names;
  for (const Set& s : *sets) set_names.push_back(s.name);
  PrintWritten(js, set_names, configured);
  if (js.contains("spoken")) PrintSpoken(js["spoken"], cfg->asr.backend);
  return 0;
}

const CommandRegistrar kEvalGate({"eval gate",
                                  "measure which in-scope and out-of-scope questions the LLM gate "
                                  "lets reach the language model",
                                  kUsage, RunEvalGate});

}  // namespace
}  // namespace hotline::cli
