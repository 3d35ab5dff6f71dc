// `hotline bench ablation`: one row of the table (see cmd_bench_ablation.cc for what each row
// adds and what each column measures).
#include "app/bench_ablation_row.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "answer/answer_stack.h"
#include "server/testing/call_load.h"

namespace hotline::cli::ablation {
namespace {

using Clock = std::chrono::steady_clock;

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
    std::this_thread::sleep_until(asked + std::chrono::microseconds(static_cast<int64_t>(
                                              1000 * (spoken->first_audio_ms + spoken->audio_ms))));
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
  cfg.tool_intents.clear();  // no account tools: no PIN prompts
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

// Latency: one question at a time, answer caches cold at the start.
Status LatencyPass(const Setup& setup, const RowSpec& row, ScriptedText& lm,
                   const std::vector<AskedQuestion>& questions, RowResult& res) {
  ASSIGN_OR_RETURN(Answering a, BuildAnswering(setup, row, &lm, "lat"));
  ASSIGN_OR_RETURN(auto synth, tts::CreateSynthesizer(tts::TtsConfig{}));
  double tokens = 0;
  int model_answers = 0;
  for (const AskedQuestion& q : questions) {
    auto spoken = Ask(setup, row, a.answerer(), *synth, q, Asking::kAlone);
    if (!spoken.ok()) {
      if (res.failures++ == 0) res.first_error = spoken.status().ToString();
      continue;
    }
    res.first_audio_ms.push_back(spoken->first_audio_ms);
    ++res.tiers[std::string(answer::TierName(spoken->tier))];
    if (spoken->tier == answer::AnswerTierId::kLlm) {
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
  return Status::Ok();
}

// The sweep at `calls` callers at once, each talking for --lead-ms before each of its questions,
// on a fresh engine (an empty prefix cache: only what the callers share, the system prompt and
// common passages, is found there) and a fresh answer stack; the distinct questions of the
// stream (its first half) are dealt out to the callers, so no turn repeats another's question.
Result<SweepPoint> SweepPass(const Setup& setup, const RowSpec& row, const llm::LlmEngineConfig& lc,
                             const std::vector<AskedQuestion>& questions, int calls,
                             RowResult& res) {
  const size_t distinct = (questions.size() + 1) / 2;
  const std::string tag = "sweep" + std::to_string(calls);
  ASSIGN_OR_RETURN(auto fresh_engine, llm::EngineLanguageModel::Create(lc));
  ScriptedText fresh(std::move(fresh_engine));
  ASSIGN_OR_RETURN(Answering a, BuildAnswering(setup, row, &fresh, tag));
  std::vector<std::unique_ptr<tts::Synthesizer>> synths;
  for (int i = 0; i < calls; ++i) {
    ASSIGN_OR_RETURN(auto s, tts::CreateSynthesizer(tts::TtsConfig{}));
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
        auto spoken =
            Ask(setup, row, a.answerer(), *synths[size_t(i)], questions[k], Asking::kCaller);
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
  return point;
}

// Throughput: C askers over the same stream, on a fresh answer stack.
Status ThroughputPass(const Setup& setup, const RowSpec& row, ScriptedText& lm,
                      const std::vector<AskedQuestion>& questions, RowResult& res) {
  ASSIGN_OR_RETURN(Answering a, BuildAnswering(setup, row, &lm, "tput"));
  std::vector<std::unique_ptr<tts::Synthesizer>> synths;
  for (int i = 0; i < setup.concurrency; ++i) {
    ASSIGN_OR_RETURN(auto s, tts::CreateSynthesizer(tts::TtsConfig{}));
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
  return Status::Ok();
}

}  // namespace

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

  RETURN_IF_ERROR(LatencyPass(setup, row, lm, questions, res));
  if (progress) {
    std::cerr << "  " << row.name << ": latency pass done (P50 "
              << server::testing::Percentile(res.first_audio_ms, 50) << " ms)\n";
  }
  for (int calls : row.sweep ? setup.calls : std::vector<int>{}) {
    ASSIGN_OR_RETURN(SweepPoint point, SweepPass(setup, row, lc, questions, calls, res));
    if (progress) {
      std::cerr << "  " << row.name << ": " << calls << " callers (P50 "
                << server::testing::Percentile(point.first_audio_ms, 50) << " ms, P99 "
                << server::testing::Percentile(point.first_audio_ms, 99) << " ms)\n";
    }
    res.sweep.push_back(std::move(point));
  }
  RETURN_IF_ERROR(ThroughputPass(setup, row, lm, questions, res));
  const engine::SchedulerStats ss = lm.engine().scheduler_stats();
  res.kv_bytes = uint64_t(ss.kv_blocks_total) * KvBlockBytes(setup.info, lc.engine.kv_block_tokens);
  return res;
}

}  // namespace hotline::cli::ablation
