// `hotline bench ablation` (cmd_bench_ablation.cc): one row of the table measured (its latency
// pass, the --calls sweep and the throughput pass) on a real engine and answer stack. Internal to
// the command.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "app/bench_ablation_parts.h"
#include "common/status.h"
#include "engine/quant_model.h"

namespace hotline::cli::ablation {

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
  double generated_tokens_mean = 0;      // over the model's answers in the latency pass
  double prompt_tokens_mean = 0;         // the same answers' prompts
  double cached_prompt_tokens_mean = 0;  // of those, found in the prefix cache
  double qps = 0;
  double throughput_wall_s = 0;
  int failures = 0;
  std::string first_error;
  uint64_t model_bytes = 0, kv_bytes = 0, cache_bytes = 0;
  std::vector<SweepPoint> sweep;
};

// What every row reads: the command line and the models written for it.
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

// Measures `row` on the model at `model_path` over `questions`. `progress`: a line on stderr after
// each pass.
Result<RowResult> RunRow(const Setup& setup, const RowSpec& row, const std::string& model_path,
                         const std::vector<AskedQuestion>& questions, bool progress);

}  // namespace hotline::cli::ablation
