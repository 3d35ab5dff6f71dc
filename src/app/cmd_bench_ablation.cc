// `hotline bench ablation [--json] [--questions N] [--shape tiny|0.5b|1b] ...`
// The design's headline table measured on this machine: what each step from a plain model to the
// full answer stack buys, in first-audio latency, sustainable questions per second and memory.
//
// Rows, each adding one thing to the one above:
//   1. unquantized model (F32 by default) with plain attention (engine.flash_attention false),
//      the whole answer generated, then synthesized;
//   2. quantized weights (Q4_0 by default) with fused attention, still whole-answer;
//   3. + streaming: each finished sentence goes to the synthesizer while the model continues;
//   4. + answer cache: the L1 intent templates, L2 semantic cache and L3 result cache answer
//      repeated and similar questions;
//   5. row 3 + pre-prefill + speculation, no cache (every answer still from the model): the
//      question's prompt goes to the model's prefix cache while the caller is still talking
//      (--lead-ms before the question ends, Answerer::Prefetch of the last stable partial), and
//      the scheduler drafts tokens (llm.engine.speculative_tokens; rows 1-4 have it off).
// With --calls, rows 3 and 5 are also measured with that many callers at once (their calls
// starting spread over one turn's cycle), each talking for --talk-ms, then listening to the whole
// answer as it plays, on a fresh engine, each distinct question asked once: first audio of model
// turns with that many calls on the line.
//
// Every row runs the real parts: a random-weight model of a real shape written by
// engine::WriteRandomModel, the embedded engine behind llm::EngineLanguageModel (batching
// scheduler, prefix cache), the answer stack over the bundled knowledge base (understanding,
// retrieval, prompt, SpeechStream) and a flite synthesizer per worker. Knowledge-base answers
// spoken directly are off in every row (kb_direct_min_score), so what no cache answers goes to
// the model. Random weights produce unspeakable text, so the model's text is replaced, delta for
// delta, by the words of the question's knowledge-base article (ScriptedText below): the engine
// does every token's work, the synthesizer gets real sentences, and every row speaks the same
// words. The answer is forced to a fixed length (--answer-tokens, the model's max_tokens, with
// the spoken-sentence limits lifted) so the rows compare fairly.
//
// First audio: from the moment the final transcript of the question is handed to the answerer
// (the end of the caller's question once recognized: endpointing and recognition are not in it)
// to the first audio chunk the synthesizer delivers. Included: understanding, cache look-ups,
// retrieval, prompt building, queueing for and running the engine (prefill, decode), sentence
// splitting, synthesis up to the first chunk. Not included: endpointing, ASR, transport and
// playout (see `hotline bench calls` for the caller's whole voice-to-voice figure).
//
// Sustainable questions per second: --concurrency C askers in a closed loop (each asks its next
// question once the previous answer is wholly synthesized) over the same question stream, on a
// fresh answer stack (cold answer caches); questions answered / wall seconds. With C at or above
// the point where the engine is saturated, that is the throughput the row can sustain.
//
// Memory: model weights (the GGUF file, mapped; every weight is read for each token, so all of
// it is resident), the KV cache the batching scheduler allocates (its block pool), and the
// answer caches' bytes in the answer store (L2 and L3 entries) after the throughput pass.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "answer/answer_stack.h"
#include "answer/answerer.h"
#include "answer/understand/understanding.h"
#include "app/bench_ablation_parts.h"
#include "app/cli.h"
#include "common/build_paths.h"
#include "common/log.h"
#include "engine/compute_pool.h"
#include "engine/ggml_types.h"
#include "engine/quant_model.h"
#include "llm/engine/engine_language_model.h"
#include "server/testing/call_load.h"
#include "tts/synthesizer.h"

namespace hotline::cli {
namespace {

using ablation::AnswerAndSpeak;
using ablation::BuildQuestionStream;
using ablation::ReadBitextQuestions;
using ablation::ReadKbScripts;
using ablation::AskedQuestion;
using ablation::ScriptedText;

using Clock = std::chrono::steady_clock;

constexpr char kUsage[] =
    "usage: hotline bench ablation [--json] [--questions N] [--shape tiny|0.5b|1b]\n"
    "                              [--arch qwen2|llama] [--unquantized f32|f16]\n"
    "                              [--quantized q4_0|q8_0] [--answer-tokens T]\n"
    "                              [--concurrency C] [--threads T] [--bitext FILE] [--kb FILE]\n"
    "                              [--passages K] [--seed S] [--calls 1,8] [--lead-ms MS]\n"
    "                              [--talk-ms MS]\n"
    "                              [--partial-drop-words N] [--rows 1,2,3,4,5]\n"
    "  The headline table on this machine: (1) unquantized model + plain attention, whole answer\n"
    "  then synthesis; (2) quantized + fused attention; (3) + streaming sentences to the\n"
    "  synthesizer; (4) + answer caches (L1/L2/L3); (5) row 3 + pre-prefill (the question so far\n"
    "  prefetched --lead-ms before it ends) + speculative decoding, no cache: every answer\n"
    "  still comes from the model. Columns: first-audio latency P50/P99 (final\n"
    "  transcript handed to the answerer -> first synthesized audio chunk, one question at a\n"
    "  time), questions per second with C closed-loop askers, memory (model + KV + caches).\n"
    "  Random-weight models of the shape are written to a temporary folder and removed after\n"
    "  (an interrupted run leaves $TMPDIR/hotline-ablation-PID behind).\n"
    "  --json               the table as one JSON object\n"
    "  --questions N        questions per pass, 2..500 (default 8): half distinct, then each\n"
    "                       asked again, alternately word for word and in other words\n"
    "  --shape S            model shape (default 0.5b; tiny for a quick check)\n"
    "  --arch A             model family (default qwen2)\n"
    "  --unquantized T      row 1's weight type (default f32)\n"
    "  --quantized T        rows 2-4's weight type (default q4_0)\n"
    "  --answer-tokens T    tokens every model answer generates, 4..512 (default 32)\n"
    "  --concurrency C      askers in the throughput pass, 1..64 (default 2)\n"
    "  --threads T          engine compute threads (default 2)\n"
    "  --bitext FILE        questions from the Bitext corpus CSV (instruction,intent columns);\n"
    "                       default: the knowledge base's example questions\n"
    "  --kb FILE            knowledge base CSV (default assets/kb/bitext_kb.csv)\n"
    "  --passages K         knowledge-base passages in each model prompt, 1..8 (default 1: keeps\n"
    "                       the unquantized row's prompt pass within minutes on 2 cores)\n"
    "  --seed S             question sampling seed (default 1)\n"
    "  --calls LIST         also measure rows 3 and 5 with that many callers at once (e.g. 1,8),\n"
    "                       on a fresh engine: each talks for --talk-ms, then listens to the\n"
    "                       whole answer as it plays (calls start spread over one turn's\n"
    "                       cycle); the stream's distinct questions are dealt out (use\n"
    "                       --questions 2 x the turns wanted)\n"
    "  --lead-ms MS         time from the stable partial to the end of the question (default 500)\n"
    "  --talk-ms MS         a caller's question in the --calls sweep (default 2000)\n"
    "  --rows LIST          the rows to run (default all; ratios are against the first run)\n"
    "  --partial-drop-words N  row 5 prefetches the question without its last N words\n"
    "                       (default 0: the last stable partial is the whole question)\n";

struct RowSpec {
  std::string name;
  std::string weights;  // type name
  bool flash_attention = true;
  bool streaming = false;
  bool caches = false;
  // The prompt of the question so far (all but its last word) goes to the model's prefix cache
  // --lead-ms before the question is asked, as a call's stable partial does while the caller
  // finishes (Answerer::Prefetch).
  bool prefetch = false;
  bool speculate = false;  // the scheduler's guesses (llm.engine.speculative_tokens)
  bool sweep = false;      // measured with --calls concurrent callers too
};

// First audio with `calls` callers at once (the --calls sweep).
struct SweepPoint {
  int calls = 0;
  std::vector<double> first_audio_ms;
};

struct RowResult {
  RowSpec spec;
  std::vector<double> first_audio_ms;
  std::map<std::string, int> tiers;
  double generated_tokens_mean = 0;  // over the model's answers in the latency pass
  double prompt_tokens_mean = 0;     // the same answers' prompts
  double cached_prompt_tokens_mean = 0;  // of those, found in the prefix cache
  double qps = 0;
  double throughput_wall_s = 0;
  int failures = 0;
  std::string first_error;
  uint64_t model_bytes = 0, kv_bytes = 0, cache_bytes = 0;
  std::vector<SweepPoint> sweep;
};

struct Setup {
  std::string kb_csv;
  std::string scratch;  // temporary folder
  int answer_tokens = 32;
  int passages = 1;
  int concurrency = 2;
  int threads = 2;
  int lead_ms = 500;
  int talk_ms = 2000;
  int partial_drop_words = 0;
  std::vector<int> calls;  // the sweep's caller counts
  std::string chat_template;
  engine::RandomModelInfo info;
};

// The question as the recognizer's last stable partial has it: without its last `drop` words
// (0: the whole question, as when the last word was recognized before the end-of-turn silence
// ran out).
std::string Partial(const std::string& question, int drop) {
  std::string p = question;
  for (int i = 0; i < drop; ++i) {
    const size_t end = p.find_last_not_of(" ?.!");
    const size_t cut = end == std::string::npos ? std::string::npos : p.rfind(' ', end);
    if (cut == std::string::npos || cut == 0) break;
    p.resize(cut);
  }
  return p;
}

// How a question is asked: alone (one at a time; a prefetching row's caller talks for --lead-ms
// after the partial), by one of several callers (the --calls sweep: each caller talks for
// --talk-ms, the last --lead-ms of it after the stable partial, then listens to the whole answer
// as it plays in real time before talking again), or back to back (the throughput pass: no
// talking, no prefetch).
enum class Asking { kAlone, kCaller, kBackToBack };

Result<ablation::Spoken> Ask(const Setup& setup, const RowSpec& row, answer::Answerer& answerer,
                             tts::Synthesizer& synth, const AskedQuestion& q, Asking how) {
  const bool prefetch = row.prefetch && how != Asking::kBackToBack;
  if (how == Asking::kCaller) {
    std::this_thread::sleep_for(std::chrono::milliseconds(setup.talk_ms - setup.lead_ms));
  }
  if (prefetch) {
    const answer::CallerSession caller("+15550100");
    // Best effort, as in a call.
    (void)answerer.Prefetch(Partial(q.text, setup.partial_drop_words), caller, {});
  }
  if (prefetch || how == Asking::kCaller) {
    std::this_thread::sleep_for(std::chrono::milliseconds(setup.lead_ms));
  }
  const Clock::time_point asked = Clock::now();
  auto spoken = AnswerAndSpeak(answerer, synth, q, row.streaming);
  if (how == Asking::kCaller && spoken.ok()) {
    std::this_thread::sleep_until(
        asked + std::chrono::microseconds(
                    static_cast<int64_t>(1000 * (spoken->first_audio_ms + spoken->audio_ms))));
  }
  return spoken;
}

// The answer stack of one pass: its own knowledge-base file (so passes never share caches),
// answer caches on or off.
struct Answering {
  std::unique_ptr<answer::AnswerStack> stack;
  answer::Answerer& answerer() { return stack->answerer(); }
};

Result<Answering> BuildAnswering(const Setup& setup, const RowSpec& row, llm::LanguageModel* lm,
                                 const std::string& tag) {
  answer::AnswererConfig cfg;
  cfg.use_intent_cache = row.caches;
  cfg.use_semantic_cache = row.caches;
  cfg.use_result_cache = row.caches;
  cfg.kb_direct_min_score = 1e9;  // nothing spoken straight from the knowledge base
  cfg.kb_direct_agreed_min_score = 1e9;
  cfg.tool_intents.clear();       // no account tools: no PIN prompts
  cfg.intent_templates.clear();
  cfg.prompt.reserved_output_tokens = setup.answer_tokens;
  cfg.prompt.max_passages = setup.passages;
  cfg.prompt.max_seq_len = 1024;
  cfg.speech.max_sentences = 1000;  // the answer's length is the model's max_tokens
  cfg.speech.max_chars = 100000;
  cfg.kb.path = setup.scratch + "/kb-" + tag + ".sqlite";
  answer::StoreConfig store;
  answer::AnswerStackOptions options;
  options.kb_csv = setup.kb_csv;
  options.llm = lm;
  Answering a;
  ASSIGN_OR_RETURN(a.stack, answer::AnswerStack::Build(cfg, store, options));
  return a;
}

uint64_t KvBlockBytes(const engine::RandomModelInfo& info, int block_tokens) {
  const uint64_t head_dim = uint64_t(info.n_embd / info.n_head);
  return uint64_t(info.n_layer) * 2 * uint64_t(block_tokens) * uint64_t(info.n_head_kv) * head_dim *
         2;  // f16 rows
}

Result<RowResult> RunRow(const Setup& setup, const RowSpec& row, const std::string& model_path,
                         const std::vector<AskedQuestion>& questions, bool progress) {
  RowResult res;
  res.spec = row;
  llm::LlmEngineConfig lc;
  lc.engine.model_path = model_path;
  lc.engine.threads = setup.threads;
  lc.engine.max_seq_len = 1024;
  lc.engine.flash_attention = row.flash_attention;
  int most_calls = setup.concurrency;
  for (int c : setup.calls) most_calls = std::max(most_calls, c);
  lc.engine.max_batch_size = std::max(2, most_calls);
  lc.engine.speculative_tokens = row.speculate ? lc.engine.speculative_tokens : 0;
  lc.chat_template = setup.chat_template;
  ASSIGN_OR_RETURN(auto engine_lm, llm::EngineLanguageModel::Create(lc));
  ScriptedText lm(std::move(engine_lm));
  res.model_bytes = std::filesystem::file_size(model_path);
  tts::TtsConfig tts_config;

  // Latency: one question at a time, answer caches cold at the start.
  {
    ASSIGN_OR_RETURN(Answering a, BuildAnswering(setup, row, &lm, "lat"));
    ASSIGN_OR_RETURN(auto synth, tts::CreateSynthesizer(tts_config));
    double tokens = 0;
    int model_answers = 0;
    for (const AskedQuestion& q : questions) {
      auto spoken = Ask(setup, row, a.answerer(), *synth, q, Asking::kAlone);
      if (!spoken.ok()) {
        if (res.failures++ == 0) res.first_error = spoken.status().ToString();
        continue;
      }
      res.first_audio_ms.push_back(spoken->first_audio_ms);
      ++res.tiers[spoken->tier];
      if (spoken->tier == "llm") {
        tokens += spoken->generated_tokens;
        res.prompt_tokens_mean += spoken->prompt_tokens;
        res.cached_prompt_tokens_mean += spoken->cached_prompt_tokens;
        ++model_answers;
      }
    }
    res.generated_tokens_mean = model_answers > 0 ? tokens / model_answers : 0;
    if (model_answers > 0) {
      res.prompt_tokens_mean /= model_answers;
      res.cached_prompt_tokens_mean /= model_answers;
    }
    std::filesystem::remove(setup.scratch + "/kb-lat.sqlite");
  }
  if (progress) {
    std::cerr << "  " << row.name << ": latency pass done (P50 "
              << server::testing::Percentile(res.first_audio_ms, 50) << " ms)\n";
  }

  // The sweep: C callers at once, each talking for --lead-ms before each of its questions. Each
  // C gets a fresh engine (an empty prefix cache: only what the callers share, the system prompt
  // and common passages, is found there) and a fresh answer stack; the distinct questions of the
  // stream (its first half) are dealt out to the callers, so no turn repeats another's question.
  const size_t distinct = (questions.size() + 1) / 2;
  for (int calls : row.sweep ? setup.calls : std::vector<int>{}) {
    const std::string tag = "sweep" + std::to_string(calls);
    ASSIGN_OR_RETURN(auto fresh_engine, llm::EngineLanguageModel::Create(lc));
    ScriptedText fresh(std::move(fresh_engine));
    ASSIGN_OR_RETURN(Answering a, BuildAnswering(setup, row, &fresh, tag));
    std::vector<std::unique_ptr<tts::Synthesizer>> synths;
    for (int i = 0; i < calls; ++i) {
      ASSIGN_OR_RETURN(auto s, tts::CreateSynthesizer(tts_config));
      synths.push_back(std::move(s));
    }
    SweepPoint point;
    point.calls = calls;
    std::mutex mu;
    std::vector<std::thread> callers;
    // Calls do not begin together: each starts at its own moment within one turn's cycle (its
    // question, then an answer of --answer-tokens words at about 3 words a second).
    const int cycle_ms = setup.talk_ms + 330 * setup.answer_tokens;
    for (int i = 0; i < calls; ++i) {
      callers.emplace_back([&, i] {
        std::this_thread::sleep_for(std::chrono::milliseconds(int64_t{cycle_ms} * i / calls));
        for (size_t k = size_t(i); k < distinct; k += size_t(calls)) {
          auto spoken = Ask(setup, row, a.answerer(), *synths[size_t(i)], questions[k],
                            Asking::kCaller);
          std::lock_guard<std::mutex> lock(mu);
          if (spoken.ok()) {
            point.first_audio_ms.push_back(spoken->first_audio_ms);
          } else if (res.failures++ == 0) {
            res.first_error = spoken.status().ToString();
          }
        }
      });
    }
    for (auto& t : callers) t.join();
    std::filesystem::remove(setup.scratch + "/kb-" + tag + ".sqlite");
    if (progress) {
      std::cerr << "  " << row.name << ": " << calls << " callers (P50 "
                << server::testing::Percentile(point.first_audio_ms, 50) << " ms, P99 "
                << server::testing::Percentile(point.first_audio_ms, 99) << " ms)\n";
    }
    res.sweep.push_back(std::move(point));
  }

  // Throughput: C askers over the same stream, on a fresh answer stack.
  {
    ASSIGN_OR_RETURN(Answering a, BuildAnswering(setup, row, &lm, "tput"));
    std::vector<std::unique_ptr<tts::Synthesizer>> synths;
    for (int i = 0; i < setup.concurrency; ++i) {
      ASSIGN_OR_RETURN(auto s, tts::CreateSynthesizer(tts_config));
      synths.push_back(std::move(s));
    }
    std::atomic<size_t> next{0};
    std::atomic<int> answered{0};
    std::mutex err_mu;
    const auto t0 = Clock::now();
    std::vector<std::thread> askers;
    for (int i = 0; i < setup.concurrency; ++i) {
      askers.emplace_back([&, i] {
        for (size_t k = next++; k < questions.size(); k = next++) {
          auto spoken =
              Ask(setup, row, a.answerer(), *synths[size_t(i)], questions[k], Asking::kBackToBack);
          if (spoken.ok()) {
            ++answered;
          } else {
            std::lock_guard<std::mutex> lock(err_mu);
            if (res.failures++ == 0) res.first_error = spoken.status().ToString();
          }
        }
      });
    }
    for (auto& t : askers) t.join();
    res.throughput_wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
    res.qps = res.throughput_wall_s > 0 ? answered.load() / res.throughput_wall_s : 0;
    res.cache_bytes = row.caches ? a.stack->store().Stats().bytes : 0;
    std::filesystem::remove(setup.scratch + "/kb-tput.sqlite");
  }
  const engine::SchedulerStats ss = lm.engine().scheduler_stats();
  res.kv_bytes = uint64_t(ss.kv_blocks_total) * KvBlockBytes(setup.info, lc.engine.kv_block_tokens);
  return res;
}

double LoadAverage1m() {
  std::ifstream in("/proc/loadavg");
  double load = NAN;
  in >> load;
  return load;
}

// "1,8" -> {1, 8}, each in [lo, hi]; "" -> {}.
Result<std::vector<int>> IntList(const std::string& arg, const std::string& flag, int lo, int hi) {
  std::vector<int> out;
  if (arg.empty()) return out;
  std::stringstream ss(arg);
  for (std::string item; std::getline(ss, item, ',');) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < lo || v > hi) {
      return InvalidArgumentError(flag + ": '" + item + "' is not a number in " +
                                  std::to_string(lo) + ".." + std::to_string(hi));
    }
    out.push_back(static_cast<int>(v));
  }
  return out;
}

nlohmann::json NumberOrNull(double v) {
  return std::isnan(v) ? nlohmann::json() : nlohmann::json(v);
}

int RunBenchAblation(std::span<const std::string> argv) {
  auto args = Args::Parse(
      argv, {"--questions", "--shape", "--arch", "--unquantized", "--quantized", "--answer-tokens",
             "--concurrency", "--threads", "--bitext", "--kb", "--seed", "--passages", "--calls",
             "--lead-ms", "--talk-ms", "--partial-drop-words", "--rows"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  const bool json = args->Has("--json");
  auto n = args->GetInt("--questions", 8, 2, 500);
  auto passages = args->GetInt("--passages", 1, 1, 8);
  auto answer_tokens = args->GetInt("--answer-tokens", 32, 4, 512);
  auto concurrency = args->GetInt("--concurrency", 2, 1, 64);
  auto threads = args->GetInt("--threads", 2, 1, 256);
  auto seed = args->GetInt("--seed", 1, 0, 1ll << 62);
  auto lead_ms = args->GetInt("--lead-ms", 500, 0, 10000);
  auto talk_ms = args->GetInt("--talk-ms", 2000, 0, 60000);
  auto drop_words = args->GetInt("--partial-drop-words", 0, 0, 10);
  auto calls = IntList(args->GetOr("--calls", ""), "--calls", 1, 64);
  auto row_numbers = IntList(args->GetOr("--rows", "1,2,3,4,5"), "--rows", 1, 5);
  for (const Status& s : {calls.status(), row_numbers.status()}) {
    if (!s.ok()) return UsageError(s.message(), kUsage);
  }
  if (row_numbers->empty()) return UsageError("--rows names no row", kUsage);
  const std::string shape = args->GetOr("--shape", "0.5b");
  const std::string arch = args->GetOr("--arch", "qwen2");
  const std::string unq = args->GetOr("--unquantized", "f32");
  const std::string quant = args->GetOr("--quantized", "q4_0");
  const std::string bitext = args->GetOr("--bitext", "");
  const std::string kb_csv =
      args->GetOr("--kb", std::string(HOTLINE_ASSETS_DIR) + "/kb/bitext_kb.csv");
  for (const Status& s : {n.status(), passages.status(), answer_tokens.status(),
                          concurrency.status(), threads.status(), seed.status(), lead_ms.status(),
                          talk_ms.status(), drop_words.status(), args->Finish()}) {
    if (!s.ok()) return UsageError(s.message(), kUsage);
  }
  if (*talk_ms < *lead_ms) return UsageError("--talk-ms must be at least --lead-ms", kUsage);
  if (!args->positional().empty()) return UsageError("unexpected argument", kUsage);
  InitLogging("warn");  // stdout carries the table; start-up chatter would only bury it
  if (shape != "tiny" && shape != "0.5b" && shape != "1b") {
    return UsageError("--shape must be tiny, 0.5b or 1b", kUsage);
  }
  if (arch != "qwen2" && arch != "llama")
    return UsageError("--arch must be qwen2 or llama", kUsage);
  if (unq != "f32" && unq != "f16") return UsageError("--unquantized must be f32 or f16", kUsage);
  if (quant != "q4_0" && quant != "q8_0") {
    return UsageError("--quantized must be q4_0 or q8_0", kUsage);
  }

  // Knowledge base: the scripts (each intent's first article) and, without --bitext, the
  // example questions.
  std::map<std::string, std::string> scripts;
  std::map<std::string, std::vector<std::string>> by_intent;
  if (Status s = ReadKbScripts(kb_csv, &scripts, &by_intent); !s.ok()) return Fail(s);
  if (!bitext.empty()) {
    auto read = ReadBitextQuestions(bitext);
    if (!read.ok()) return Fail(read.status());
    by_intent = std::move(*read);
  }
  auto questions =
      BuildQuestionStream(by_intent, scripts, static_cast<int>(*n), static_cast<uint64_t>(*seed));
  if (!questions.ok()) return Fail(questions.status());

  Setup setup;
  setup.kb_csv = kb_csv;
  setup.answer_tokens = static_cast<int>(*answer_tokens);
  setup.passages = static_cast<int>(*passages);
  setup.concurrency = static_cast<int>(*concurrency);
  setup.threads = static_cast<int>(*threads);
  setup.lead_ms = static_cast<int>(*lead_ms);
  setup.talk_ms = static_cast<int>(*talk_ms);
  setup.partial_drop_words = static_cast<int>(*drop_words);
  setup.calls = *calls;
  setup.chat_template = arch == "qwen2" ? "chatml" : "llama3";
  setup.scratch =
      (std::filesystem::temp_directory_path() / ("hotline-ablation-" + std::to_string(getpid())))
          .string();
  std::error_code ec;
  std::filesystem::create_directories(setup.scratch, ec);
  if (ec) return Fail("cannot create " + setup.scratch + ": " + ec.message());
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code e;
      std::filesystem::remove_all(dir, e);
    }
  } cleanup{setup.scratch};

  // The two models (the unquantized one only for row 1).
  const std::string unq_path = setup.scratch + "/model-" + unq + ".gguf";
  const std::string quant_path = setup.scratch + "/model-" + quant + ".gguf";
  const bool row1 = std::find(row_numbers->begin(), row_numbers->end(), 1) != row_numbers->end();
  {
    engine::ComputePool pool(setup.threads);
    for (const auto& [type, path] : {std::pair{unq, unq_path}, std::pair{quant, quant_path}}) {
      if (path == unq_path && !row1) continue;
      engine::RandomModelSpec spec;
      spec.arch = arch;
      spec.shape = shape;
      auto parsed = engine::ParseTypeName(type.c_str());
      if (!parsed.ok()) return Fail(parsed.status());
      spec.type = *parsed;
      auto info = engine::WriteRandomModel(spec, path, pool);
      if (!info.ok()) return Fail(info.status().WithContext("writing the " + type + " model"));
      setup.info = *info;
    }
  }

  const std::vector<RowSpec> specs = {
      {"unquantized + plain attention, whole answer", unq, false, false, false},
      {"quantized + fused attention, whole answer", quant, true, false, false},
      {"+ streaming pipeline", quant, true, true, false, false, false, true},
      {"+ answer cache (L1/L2/L3)", quant, true, true, true},
      {"3 + pre-prefill + speculation (no cache)", quant, true, true, false, true, true, true},
  };
  if (!json) {
    std::cerr << "hotline bench ablation: " << arch << " " << shape << " (" << unq << " / " << quant
              << "), " << questions->size() << " questions, " << *answer_tokens
              << " tokens per model answer, throughput with " << *concurrency << " askers\n";
  }
  const double load_start = LoadAverage1m();
  const auto t_start = Clock::now();
  std::vector<RowResult> rows;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (std::find(row_numbers->begin(), row_numbers->end(), int(i) + 1) == row_numbers->end()) {
      continue;
    }
    const RowSpec& spec = specs[i];
    auto r = RunRow(setup, spec, spec.weights == unq ? unq_path : quant_path, *questions, !json);
    if (!r.ok()) return Fail(r.status().WithContext(spec.name));
    rows.push_back(std::move(*r));
  }
  const double load_end = LoadAverage1m();
  const double wall_s = std::chrono::duration<double>(Clock::now() - t_start).count();

  int failures = 0;
  for (const RowResult& r : rows) failures += r.failures;
  const double base_p50 = server::testing::Percentile(rows[0].first_audio_ms, 50);
  const double base_qps = rows[0].qps;
  if (json) {
    nlohmann::json out = {
        {"arch", arch},
        {"shape", shape},
        {"unquantized", unq},
        {"quantized", quant},
        {"questions", questions->size()},
        {"answer_tokens", *answer_tokens},
        {"passages", *passages},
        {"concurrency", *concurrency},
        {"threads", *threads},
        {"question_source", bitext.empty() ? kb_csv : bitext},
        {"lead_ms", *lead_ms},
        {"talk_ms", *talk_ms},
        {"partial_drop_words", *drop_words},
        {"load_average_1m", {{"start", NumberOrNull(load_start)}, {"end", NumberOrNull(load_end)}}},
        {"wall_s", wall_s}};
    nlohmann::json jr = nlohmann::json::array();
    for (const RowResult& r : rows) {
      const double p50 = server::testing::Percentile(r.first_audio_ms, 50);
      nlohmann::json row = {
          {"name", r.spec.name},
          {"weights", r.spec.weights},
          {"flash_attention", r.spec.flash_attention},
          {"streaming", r.spec.streaming},
          {"answer_cache", r.spec.caches},
          {"first_audio_ms",
           {{"p50", NumberOrNull(p50)},
            {"p99", NumberOrNull(server::testing::Percentile(r.first_audio_ms, 99))},
            {"mean_of", r.first_audio_ms.size()}}},
          {"questions_per_s", r.qps},
          {"throughput_wall_s", r.throughput_wall_s},
          {"memory_bytes",
           {{"model", r.model_bytes},
            {"kv", r.kv_bytes},
            {"caches", r.cache_bytes},
            {"total", r.model_bytes + r.kv_bytes + r.cache_bytes}}},
          {"answers_by_tier", r.tiers},
          {"generated_tokens_mean", r.generated_tokens_mean},
          {"prompt_tokens_mean", r.prompt_tokens_mean},
          {"cached_prompt_tokens_mean", r.cached_prompt_tokens_mean},
          {"failures", r.failures},
          {"vs_row1",
           {{"p50", NumberOrNull(base_p50 / p50)},
            {"questions_per_s",
             base_qps > 0 ? nlohmann::json(r.qps / base_qps) : nlohmann::json()}}}};
      if (!r.first_error.empty()) row["first_error"] = r.first_error;
      row["prefetch"] = r.spec.prefetch;
      row["speculation"] = r.spec.speculate;
      for (const SweepPoint& sp : r.sweep) {
        row["first_audio_by_calls"].push_back(
            {{"calls", sp.calls},
             {"p50", NumberOrNull(server::testing::Percentile(sp.first_audio_ms, 50))},
             {"p99", NumberOrNull(server::testing::Percentile(sp.first_audio_ms, 99))},
             {"turns", sp.first_audio_ms.size()}});
      }
      jr.push_back(row);
    }
    out["rows"] = jr;
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf("%-46s %10s %10s %9s %12s %10s %10s %10s\n", "row", "P50 ms", "P99 ms", "q/s",
                "model MB", "KV MB", "cache KB", "P50 gain");
    for (const RowResult& r : rows) {
      const double p50 = server::testing::Percentile(r.first_audio_ms, 50);
      std::printf("%-46s %10.0f %10.0f %9.2f %12.1f %10.1f %10.1f %9.1fx\n", r.spec.name.c_str(),
                  p50, server::testing::Percentile(r.first_audio_ms, 99), r.qps,
                  r.model_bytes / 1048576.0, r.kv_bytes / 1048576.0, r.cache_bytes / 1024.0,
                  base_p50 / p50);
    }
    for (const RowResult& r : rows) {
      std::printf("  %s: tiers", r.spec.name.c_str());
      for (const auto& [tier, count] : r.tiers) std::printf(" %s %d", tier.c_str(), count);
      std::printf("; %.1f tokens per model answer", r.generated_tokens_mean);
      if (r.prompt_tokens_mean > 0) {
        std::printf(", prompts %.0f tokens (%.0f from the prefix cache)", r.prompt_tokens_mean,
                    r.cached_prompt_tokens_mean);
      }
      if (r.failures > 0) std::printf("; %d failed (%s)", r.failures, r.first_error.c_str());
      std::printf("\n");
    }
    for (const RowResult& r : rows) {
      for (const SweepPoint& sp : r.sweep) {
        std::printf("  %s, %d callers (each talking %d ms, then listening to the whole answer): "
                    "first audio P50 %.0f ms, P99 %.0f ms (%zu turns)\n",
                    r.spec.name.c_str(), sp.calls, setup.talk_ms,
                    server::testing::Percentile(sp.first_audio_ms, 50),
                    server::testing::Percentile(sp.first_audio_ms, 99), sp.first_audio_ms.size());
      }
    }
    std::printf("load average (1 min): %.2f at start, %.2f at end; %.0f s\n", load_start, load_end,
                wall_s);
  }
  return failures == 0 ? 0 : 3;
}

const CommandRegistrar kBenchAblation({"bench ablation",
                                       "the headline table: quantization, fused attention, "
                                       "streaming and the answer cache, measured",
                                       kUsage, RunBenchAblation});

}  // namespace
}  // namespace hotline::cli
