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
// delta, by the words of the question's knowledge-base article (ablation::ScriptedText): the engine
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
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "app/bench_ablation_parts.h"
#include "app/bench_ablation_row.h"
#include "app/cli.h"
#include "common/build_paths.h"
#include "common/log.h"
#include "engine/compute_pool.h"
#include "engine/ggml_types.h"
#include "engine/quant_model.h"
#include "server/testing/call_load.h"

namespace hotline::cli {
namespace {

using ablation::AskedQuestion;
using ablation::BuildQuestionStream;
using ablation::ReadBitextQuestions;
using ablation::ReadKbScripts;
using ablation::RowResult;
using ablation::RowSpec;
using ablation::RunRow;
using ablation::Setup;
using ablation::SweepPoint;

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

// The command line, checked. Setup carries what the rows read; scratch, chat_template and info
// are filled later.
struct Options {
  bool json = false;
  int questions = 8;
  uint64_t seed = 1;
  std::vector<int> rows;
  std::string shape, arch, unquantized, quantized, bitext;
  Setup setup;
};

// Errors are usage errors, with the message to show above the usage text.
Result<Options> ParseOptions(Args& args) {
  Options o;
  o.json = args.Has("--json");
  auto n = args.GetInt("--questions", 8, 2, 500);
  auto passages = args.GetInt("--passages", 1, 1, 8);
  auto answer_tokens = args.GetInt("--answer-tokens", 32, 4, 512);
  auto concurrency = args.GetInt("--concurrency", 2, 1, 64);
  auto threads = args.GetInt("--threads", 2, 1, 256);
  auto seed = args.GetInt("--seed", 1, 0, 1ll << 62);
  auto lead_ms = args.GetInt("--lead-ms", 500, 0, 10000);
  auto talk_ms = args.GetInt("--talk-ms", 2000, 0, 60000);
  auto drop_words = args.GetInt("--partial-drop-words", 0, 0, 10);
  auto calls = IntList(args.GetOr("--calls", ""), "--calls", 1, 64);
  auto row_numbers = IntList(args.GetOr("--rows", "1,2,3,4,5"), "--rows", 1, 5);
  RETURN_IF_ERROR(calls.status());
  RETURN_IF_ERROR(row_numbers.status());
  if (row_numbers->empty()) return InvalidArgumentError("--rows names no row");
  o.shape = args.GetOr("--shape", "0.5b");
  o.arch = args.GetOr("--arch", "qwen2");
  o.unquantized = args.GetOr("--unquantized", "f32");
  o.quantized = args.GetOr("--quantized", "q4_0");
  o.bitext = args.GetOr("--bitext", "");
  o.setup.kb_csv = args.GetOr("--kb", std::string(HOTLINE_ASSETS_DIR) + "/kb/bitext_kb.csv");
  for (const Status& s : {n.status(), passages.status(), answer_tokens.status(),
                          concurrency.status(), threads.status(), seed.status(), lead_ms.status(),
                          talk_ms.status(), drop_words.status(), args.Finish()}) {
    RETURN_IF_ERROR(s);
  }
  if (*talk_ms < *lead_ms) return InvalidArgumentError("--talk-ms must be at least --lead-ms");
  if (!args.positional().empty()) return InvalidArgumentError("unexpected argument");
  if (o.shape != "tiny" && o.shape != "0.5b" && o.shape != "1b") {
    return InvalidArgumentError("--shape must be tiny, 0.5b or 1b");
  }
  if (o.arch != "qwen2" && o.arch != "llama") {
    return InvalidArgumentError("--arch must be qwen2 or llama");
  }
  if (o.unquantized != "f32" && o.unquantized != "f16") {
    return InvalidArgumentError("--unquantized must be f32 or f16");
  }
  if (o.quantized != "q4_0" && o.quantized != "q8_0") {
    return InvalidArgumentError("--quantized must be q4_0 or q8_0");
  }
  o.questions = static_cast<int>(*n);
  o.seed = static_cast<uint64_t>(*seed);
  o.rows = *row_numbers;
  o.setup.answer_tokens = static_cast<int>(*answer_tokens);
  o.setup.passages = static_cast<int>(*passages);
  o.setup.concurrency = static_cast<int>(*concurrency);
  o.setup.threads = static_cast<int>(*threads);
  o.setup.lead_ms = static_cast<int>(*lead_ms);
  o.setup.talk_ms = static_cast<int>(*talk_ms);
  o.setup.partial_drop_words = static_cast<int>(*drop_words);
  o.setup.calls = *calls;
  o.setup.chat_template = o.arch == "qwen2" ? "chatml" : "llama3";
  return o;
}

// The question stream: the knowledge base's scripts (each intent's first article) and its
// example questions, or --bitext's questions.
Result<std::vector<ablation::AskedQuestion>> Questions(const Options& o) {
  std::map<std::string, std::string> scripts;
  std::map<std::string, std::vector<std::string>> by_intent;
  RETURN_IF_ERROR(ReadKbScripts(o.setup.kb_csv, &scripts, &by_intent));
  if (!o.bitext.empty()) {
    ASSIGN_OR_RETURN(by_intent, ReadBitextQuestions(o.bitext));
  }
  return BuildQuestionStream(by_intent, scripts, o.questions, o.seed);
}

// Writes the random-weight models to `unquantized_path` (only when row 1 runs) and
// `quantized_path`; sets setup.info.
Status WriteModels(const Options& o, const std::string& unquantized_path,
                   const std::string& quantized_path, Setup& setup) {
  const bool row1 = std::find(o.rows.begin(), o.rows.end(), 1) != o.rows.end();
  engine::ComputePool pool(setup.threads);
  for (const auto& [type, path] :
       {std::pair{o.unquantized, unquantized_path}, std::pair{o.quantized, quantized_path}}) {
    if (path == unquantized_path && !row1) continue;
    engine::RandomModelSpec spec;
    spec.arch = o.arch;
    spec.shape = o.shape;
    ASSIGN_OR_RETURN(spec.type, engine::ParseTypeName(type.c_str()));
    auto info = engine::WriteRandomModel(spec, path, pool);
    if (!info.ok()) return info.status().WithContext("writing the " + type + " model");
    setup.info = *info;
  }
  return Status::Ok();
}

// What the rows measured, and how they ran.
struct Report {
  size_t questions = 0;
  std::vector<RowResult> rows;
  double load_start = NAN, load_end = NAN, wall_s = 0;
};

void PrintJson(const Options& o, const Report& r) {
  const double base_p50 = server::testing::Percentile(r.rows[0].first_audio_ms, 50);
  const double base_qps = r.rows[0].qps;
  nlohmann::json out = {
      {"arch", o.arch},
      {"shape", o.shape},
      {"unquantized", o.unquantized},
      {"quantized", o.quantized},
      {"questions", r.questions},
      {"answer_tokens", o.setup.answer_tokens},
      {"passages", o.setup.passages},
      {"concurrency", o.setup.concurrency},
      {"threads", o.setup.threads},
      {"question_source", o.bitext.empty() ? o.setup.kb_csv : o.bitext},
      {"lead_ms", o.setup.lead_ms},
      {"talk_ms", o.setup.talk_ms},
      {"partial_drop_words", o.setup.partial_drop_words},
      {"load_average_1m",
       {{"start", NumberOrNull(r.load_start)}, {"end", NumberOrNull(r.load_end)}}},
      {"wall_s", r.wall_s}};
  nlohmann::json jr = nlohmann::json::array();
  for (const RowResult& x : r.rows) {
    const double p50 = server::testing::Percentile(x.first_audio_ms, 50);
    nlohmann::json row = {
        {"name", x.spec.name},
        {"weights", x.spec.weights},
        {"flash_attention", x.spec.flash_attention},
        {"streaming", x.spec.streaming},
        {"answer_cache", x.spec.caches},
        {"first_audio_ms",
         {{"p50", NumberOrNull(p50)},
          {"p99", NumberOrNull(server::testing::Percentile(x.first_audio_ms, 99))},
          {"mean_of", x.first_audio_ms.size()}}},
        {"questions_per_s", x.qps},
        {"throughput_wall_s", x.throughput_wall_s},
        {"memory_bytes",
         {{"model", x.model_bytes},
          {"kv", x.kv_bytes},
          {"caches", x.cache_bytes},
          {"total", x.model_bytes + x.kv_bytes + x.cache_bytes}}},
        {"answers_by_tier", x.tiers},
        {"generated_tokens_mean", x.generated_tokens_mean},
        {"prompt_tokens_mean", x.prompt_tokens_mean},
        {"cached_prompt_tokens_mean", x.cached_prompt_tokens_mean},
        {"failures", x.failures},
        {"vs_row1",
         {{"p50", NumberOrNull(base_p50 / p50)},
          {"questions_per_s",
           base_qps > 0 ? nlohmann::json(x.qps / base_qps) : nlohmann::json()}}}};
    if (!x.first_error.empty()) row["first_error"] = x.first_error;
    row["prefetch"] = x.spec.prefetch;
    row["speculation"] = x.spec.speculate;
    for (const SweepPoint& sp : x.sweep) {
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
}

void PrintTable(const Options& o, const Report& r) {
  const double base_p50 = server::testing::Percentile(r.rows[0].first_audio_ms, 50);
  std::printf("%-46s %10s %10s %9s %12s %10s %10s %10s\n", "row", "P50 ms", "P99 ms", "q/s",
              "model MB", "KV MB", "cache KB", "P50 gain");
  for (const RowResult& x : r.rows) {
    const double p50 = server::testing::Percentile(x.first_audio_ms, 50);
    std::printf("%-46s %10.0f %10.0f %9.2f %12.1f %10.1f %10.1f %9.1fx\n", x.spec.name.c_str(), p50,
                server::testing::Percentile(x.first_audio_ms, 99), x.qps, x.model_bytes / 1048576.0,
                x.kv_bytes / 1048576.0, x.cache_bytes / 1024.0, base_p50 / p50);
  }
  for (const RowResult& x : r.rows) {
    std::printf("  %s: tiers", x.spec.name.c_str());
    for (const auto& [tier, count] : x.tiers) std::printf(" %s %d", tier.c_str(), count);
    std::printf("; %.1f tokens per model answer", x.generated_tokens_mean);
    if (x.prompt_tokens_mean > 0) {
      std::printf(", prompts %.0f tokens (%.0f from the prefix cache)", x.prompt_tokens_mean,
                  x.cached_prompt_tokens_mean);
    }
    if (x.failures > 0) std::printf("; %d failed (%s)", x.failures, x.first_error.c_str());
    std::printf("\n");
  }
  for (const RowResult& x : r.rows) {
    for (const SweepPoint& sp : x.sweep) {
      std::printf(
          "  %s, %d callers (each talking %d ms, then listening to the whole answer): "
          "first audio P50 %.0f ms, P99 %.0f ms (%zu turns)\n",
          x.spec.name.c_str(), sp.calls, o.setup.talk_ms,
          server::testing::Percentile(sp.first_audio_ms, 50),
          server::testing::Percentile(sp.first_audio_ms, 99), sp.first_audio_ms.size());
    }
  }
  std::printf("load average (1 min): %.2f at start, %.2f at end; %.0f s\n", r.load_start,
              r.load_end, r.wall_s);
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
  auto options = ParseOptions(*args);
  if (!options.ok()) return UsageError(options.status().message(), kUsage);
  Options& o = *options;
  Setup& setup = o.setup;
  InitLogging("warn");  // stdout carries the table; start-up chatter would only bury it
  auto questions = Questions(o);
  if (!questions.ok()) return Fail(questions.status());

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
  const std::string unq_path = setup.scratch + "/model-" + o.unquantized + ".gguf";
  const std::string quant_path = setup.scratch + "/model-" + o.quantized + ".gguf";
  if (Status s = WriteModels(o, unq_path, quant_path, setup); !s.ok()) return Fail(s);

  const std::vector<RowSpec> specs = {
      {"unquantized + plain attention, whole answer", o.unquantized, false, false, false},
      {"quantized + fused attention, whole answer", o.quantized, true, false, false},
      {"+ streaming pipeline", o.quantized, true, true, false, false, false, true},
      {"+ answer cache (L1/L2/L3)", o.quantized, true, true, true},
      {"3 + pre-prefill + speculation (no cache)", o.quantized, true, true, false, true, true,
       true},
  };
  if (!o.json) {
    std::cerr << "hotline bench ablation: " << o.arch << " " << o.shape << " (" << o.unquantized
              << " / " << o.quantized << "), " << questions->size() << " questions, "
              << setup.answer_tokens << " tokens per model answer, throughput with "
              << setup.concurrency << " askers\n";
  }
  Report report;
  report.questions = questions->size();
  report.load_start = LoadAverage1m();
  const auto t_start = Clock::now();
  for (size_t i = 0; i < specs.size(); ++i) {
    if (std::find(o.rows.begin(), o.rows.end(), int(i) + 1) == o.rows.end()) continue;
    const RowSpec& spec = specs[i];
    auto r = RunRow(setup, spec, spec.weights == o.unquantized ? unq_path : quant_path, *questions,
                    !o.json);
    if (!r.ok()) return Fail(r.status().WithContext(spec.name));
    report.rows.push_back(std::move(*r));
  }
  report.load_end = LoadAverage1m();
  report.wall_s = std::chrono::duration<double>(Clock::now() - t_start).count();

  int failures = 0;
  for (const RowResult& r : report.rows) failures += r.failures;
  if (o.json) {
    PrintJson(o, report);
  } else {
    PrintTable(o, report);
  }
  return failures == 0 ? 0 : 3;
}

const CommandRegistrar kBenchAblation({"bench ablation",
                                       "the headline table: quantization, fused attention, "
                                       "streaming and the answer cache, measured",
                                       kUsage, RunBenchAblation});

}  // namespace
}  // namespace hotline::cli
