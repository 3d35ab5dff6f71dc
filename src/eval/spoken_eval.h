// The spoken-question benchmark behind `hotline eval spoken` and bench/spoken: labelled questions
// are synthesized by several voices, carried over a telephone line (8 kHz μ-law, optionally with
// line noise at a given SNR), recognized by the call's own recognizer and answered by the call's
// own answer chain — the objects a pipeline::CallStack builds for every call.
//
//   ASSIGN_OR_RETURN(auto stack, pipeline::CallStack::Build(options));
//   SpokenEvalOptions o;  o.voices = DefaultVoices();  o.snrs_db = {kCleanLine, 20};
//   ASSIGN_OR_RETURN(SpokenReport r, RunSpokenEval(*stack, sets, synth_config, o));
//   std::fputs(FormatSpokenTable(r).c_str(), stdout);
//
// Per set, voice and line condition it reports: the word error rate of the recognizer's final
// transcript against the words spoken; intent accuracy of the intent classifier on the written
// question and on the transcript (their difference is the "speech penalty"); how the answer chain
// answered — right (the answer came from an article of the question's intent), wrong (another
// article, an answer of the language model, which cannot be attributed to an article, or any
// answer to an out-of-scope question), fell back (no tier answered: the rephrase answer) — and the
// recognizer's final-pass time (RecognizerStream::Finish, the work left when the caller stops
// talking), P50/P99.
//
// Voices are declared as tuning voices (their figures may guide choices of settings) or report
// voices (never used for tuning); SpokenReport keeps the role beside each row.
//
// Cells are independent when the run keeps the answer chain's time (SpokenEvalOptions::
// answer_clock): each starts with empty answer caches. The recognizer's channel estimate
// (asr.pocketsphinx.cmn_per_stream off) carries from one question to the next, as it carries from
// call to call in a server, so the question before a cell's first one still matters a little.
//
// Thread-safety: RunSpokenEval runs on the calling thread and uses the stack's recognizer and
// answerer as one call would. Blocking: synthesis, recognition, SQLite, disk (the speech cache).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "answer/eval/eval_data.h"
#include "asr/wer.h"
#include "common/clock.h"
#include "common/status.h"
#include "pipeline/call_stack.h"
#include "tts/synthesizer.h"

namespace hotline::eval {

// A line without added noise (SpokenEvalOptions::snrs_db).
inline constexpr double kCleanLine = std::numeric_limits<double>::infinity();
// The label of out-of-scope questions: any answer to them is wrong; the fallback is right.
inline constexpr const char* kOutOfScope = "oos";

struct QuestionSet {
  std::string name;  // "banking77_test"
  // Text + intent label (kOutOfScope for questions no article answers).
  std::vector<answer::LabelledText> questions;
};

struct Voice {
  std::string backend;  // "flite" | "espeak-ng" | "text" (kWrittenLine)
  std::string name;     // "cmu_us_slt", "en-gb-x-rp"
  bool report_only = false;
  std::string id() const { return backend + "/" + name; }
  bool written() const { return backend == "text"; }
};

// Not a voice: the written question reaches the answer chain as a recognizer that heard every
// word would deliver it (lower case, numbers as words, no punctuation), with confidence 1 and no
// line noise. Its figures are the ceiling the spoken lines are measured against, and the fast
// loop for tuning understanding on a dev split (no synthesis, no recognition).
inline constexpr const char* kWrittenLine = "text/written";

// The declared voices: tuning — flite slt and awb, espeak-ng en-us; report only — flite rms and
// kal16, espeak-ng en-gb-x-rp.
std::vector<Voice> DefaultVoices();
// "flite/cmu_us_slt,espeak-ng/en-gb-x-rp" (roles from DefaultVoices(); a voice not declared there
// is report-only); an item may also be a group, "tuning" / "report" / "all", and "text/written"
// adds the written line (kWrittenLine): "text/written,report".
Result<std::vector<Voice>> ParseVoices(std::string_view spec);

struct SpokenEvalOptions {
  std::vector<Voice> voices;
  std::vector<double> snrs_db = {kCleanLine};  // line noise (signal-to-noise ratio, dB)
  // Questions per set at most, taken evenly over the set (every k-th); 0 = all.
  size_t limit = 0;
  // Synthesized speech is kept here between runs (one WAV per voice and question); "" = none.
  std::string cache_dir;
  // Called after each question with (done, total); may be empty.
  std::function<void(size_t done, size_t total, const std::string& cell)> progress;
  // Keep every question's row in the report (for --json).
  bool keep_items = true;
  // The clock the stack's answer chain was built with (CallStackOptions::answer_clock). When
  // given, the run keeps time itself: the clock moves kQuestionInterval per question and past
  // every answer-cache time to live between cells, so every cell starts with empty answer caches
  // (L2, L3) and its figures depend neither on the cells run before it nor on how fast the
  // machine is. Null: the stack's caches carry answers from cell to cell and expire by
  // wall-clock time, so two runs of the same command can differ.
  FakeClock* answer_clock = nullptr;
};

// The time between two questions of a cell on SpokenEvalOptions::answer_clock: answers cached in
// a cell stay cached for the rest of it (the L3 time to live is 5 minutes by default).
inline constexpr std::chrono::seconds kQuestionInterval{1};

// How the chain answered one question: from an article of its intent (right), anything else
// (wrong; any answer to an out-of-scope question), the rephrase answer (fallback), a clarifying
// question (clarified), or any answer to a question without a label (answered, judged by a
// person). kNone: not answered (a reply that was never asked for).
enum class ItemOutcome { kNone, kRight, kWrong, kFallback, kClarified, kAnswered };
// "right", "wrong", "fallback", "clarified", "answered"; "" for kNone (the JSON's values).
std::string_view ItemOutcomeName(ItemOutcome outcome);

struct SpokenItem {
  std::string question;
  std::string label;
  std::string spoken;  // the words spoken (normalized reference)
  std::string heard;
  double wer = 0;
  std::string text_intent;   // accepted intent of the written question ("" rejected)
  std::string heard_intent;  // accepted intent of the transcript
  // The classifier's best guess for the transcript, accepted or not, with its probability,
  // calibrated confidence and margin over the runner-up; and the knowledge base's best passage
  // for it (intent, BM25 score); and the intent of the most similar training question, with its
  // cosine similarity.
  std::string guess, runner_up;
  double guess_probability = 0, guess_confidence = 0, guess_margin = 0;
  std::string neighbour_intent;
  double neighbour_similarity = 0;
  std::string kb_top_intent;
  double kb_top_score = 0;
  std::string tier;
  std::string answered_intent;  // intent of the article the answer came from ("" none)
  ItemOutcome outcome = ItemOutcome::kNone;
  // After a clarifying question, the caller's reply as a cooperative caller gives it ("yes" when
  // the topic offered is theirs, else "no"; "the first" / "the second" / "neither" for a choice)
  // and how the chain answered that reply (kNone when not clarified).
  std::string reply;
  ItemOutcome after_clarification = ItemOutcome::kNone;
  double final_ms = 0;
  double asr_confidence = 0;
  std::vector<float> asr_word_confidence;  // per word of `heard`
};

struct SpokenCell {
  std::string set;
  std::string voice;
  bool report_only = false;
  double snr_db = kCleanLine;
  size_t questions = 0;
  size_t in_scope = 0;  // questions with an intent label (intent accuracy is over these)
  asr::WerCounts wer;
  size_t text_intent_right = 0;
  size_t heard_intent_right = 0;
  size_t right = 0, wrong = 0, fallback = 0;
  size_t clarified = 0;  // asked a clarifying question instead of answering
  size_t right_after_clarification = 0, wrong_after_clarification = 0;
  size_t by_model = 0;  // of `wrong`: answered by the language model (unattributable)
  double final_p50_ms = 0, final_p99_ms = 0;
  std::vector<SpokenItem> items;

  double Share(size_t k) const {
    return questions ? static_cast<double>(k) / static_cast<double>(questions) : 0;
  }
  double IntentShare(size_t k) const {
    return in_scope ? static_cast<double>(k) / static_cast<double>(in_scope) : 0;
  }
};

struct SpokenReport {
  std::vector<SpokenCell> cells;
  size_t synthesized = 0;  // speech not found in the cache
  size_t cached = 0;
  double wall_s = 0;
};

// Runs every question of every set with every voice at every line condition.
Result<SpokenReport> RunSpokenEval(pipeline::CallStack& stack, const std::vector<QuestionSet>& sets,
                                   const tts::TtsConfig& tts, const SpokenEvalOptions& options);

// The report as a text table (one row per set, voice, SNR), and as JSON.
std::string FormatSpokenTable(const SpokenReport& report);
std::string SpokenReportJson(const SpokenReport& report, bool with_items);

// Question sets from the usual files. Banking77 CSV (text,category); CLINC150 JSON (`key` such as
// "test" or "oos_test"; oos_* questions get the kOutOfScope label); a TSV with a header naming
// `question` and `intent` columns (the demo model's held-out questions); the everyday-questions
// TSV (domain, question, topic: questions of domain "oos" get kOutOfScope, the others the label
// "" — their topic is judged by a person, so only WER and outcomes other than right/wrong count).
Result<QuestionSet> LoadBanking77(const std::string& path, const std::string& name);
Result<QuestionSet> LoadClinc(const std::string& path, const std::string& key,
                              const std::string& name);
Result<QuestionSet> LoadQuestionTsv(const std::string& path, const std::string& name);

// Every k-th question so that at most `limit` remain (0: all), in order.
std::vector<answer::LabelledText> EvenSample(const std::vector<answer::LabelledText>& v,
                                             size_t limit);

}  // namespace hotline::eval
