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
//      repeated and similar questions.
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
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "answer/answer_stack.h"
#include "answer/answerer.h"
#include "answer/kb/kb_csv.h"
#include "answer/understand/understanding.h"
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

using Clock = std::chrono::steady_clock;

constexpr char kUsage[] =
    "usage: hotline bench ablation [--json] [--questions N] [--shape tiny|0.5b|1b]\n"
    "                              [--arch qwen2|llama] [--unquantized f32|f16]\n"
    "                              [--quantized q4_0|q8_0] [--answer-tokens T]\n"
    "                              [--concurrency C] [--threads T] [--bitext FILE] [--kb FILE]\n"
    "                              [--passages K] [--seed S]\n"
    "  The headline table on this machine: (1) unquantized model + plain attention, whole answer\n"
    "  then synthesis; (2) quantized + fused attention; (3) + streaming sentences to the\n"
    "  synthesizer; (4) + answer caches (L1/L2/L3). Columns: first-audio latency P50/P99 (final\n"
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
    "  --seed S             question sampling seed (default 1)\n";

struct AskedQuestion {
  std::string text;
  std::string intent;
  std::string script;  // words spoken in place of the model's text (the intent's article)
};

// The question stream: `n` questions, the first half distinct (one per intent while intents
// last), the second half asking them again: even positions word for word (L3), odd ones in other
// words of the same intent (L1/L2).
Result<std::vector<AskedQuestion>> BuildQuestionStream(
    const std::map<std::string, std::vector<std::string>>& by_intent,
    const std::map<std::string, std::string>& scripts, int n, uint64_t seed) {
  std::vector<std::string> intents;
  for (const auto& [intent, questions] : by_intent) {
    if (scripts.count(intent) && !questions.empty()) intents.push_back(intent);
  }
  if (intents.empty()) {
    return InvalidArgumentError("no question has an intent the knowledge base answers");
  }
  std::mt19937_64 rng(seed);
  std::shuffle(intents.begin(), intents.end(), rng);
  const int distinct = (n + 1) / 2;
  std::vector<AskedQuestion> out;
  for (int i = 0; i < distinct; ++i) {
    const std::string& intent = intents[size_t(i) % intents.size()];
    const auto& qs = by_intent.at(intent);
    out.push_back({qs[rng() % qs.size()], intent, scripts.at(intent)});
  }
  for (int j = 0; static_cast<int>(out.size()) < n; ++j) {
    AskedQuestion again = out[size_t(j % distinct)];
    if (j % 2 == 1) {
      const auto& qs = by_intent.at(again.intent);
      for (int tries = 0; tries < 8; ++tries) {
        const std::string& other = qs[rng() % qs.size()];
        if (other != again.text) {
          again.text = other;
          break;
        }
      }
    }
    out.push_back(std::move(again));
  }
  return out;
}

// Bitext corpus rows -> questions by intent. Bounded: the file at most 64 MiB.
Result<std::map<std::string, std::vector<std::string>>> ReadBitextQuestions(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("--bitext " + path + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.size() > (64u << 20)) return InvalidArgumentError("--bitext " + path + ": over 64 MiB");
  answer::CsvReader reader(text);
  answer::CsvRecord rec;
  ASSIGN_OR_RETURN(bool has_header, reader.Next(rec));
  if (!has_header) return InvalidArgumentError("--bitext " + path + ": empty");
  int q_col = -1, intent_col = -1;
  for (size_t c = 0; c < rec.fields.size(); ++c) {
    if (rec.fields[c] == "instruction") q_col = static_cast<int>(c);
    if (rec.fields[c] == "intent") intent_col = static_cast<int>(c);
  }
  if (q_col < 0 || intent_col < 0) {
    return InvalidArgumentError("--bitext " + path +
                                ": expected a header with instruction and intent columns");
  }
  std::map<std::string, std::vector<std::string>> out;
  while (true) {
    auto more = reader.Next(rec);
    if (!more.ok()) return more.status().WithContext("--bitext " + path);
    if (!*more) break;
    if (rec.fields.size() <= size_t(std::max(q_col, intent_col))) continue;
    const std::string& q = rec.fields[size_t(q_col)];
    if (q.empty() || q.size() > 300) continue;
    out[rec.fields[size_t(intent_col)]].push_back(q);
  }
  return out;
}

// Stands in for the model's text: every delta the engine produces becomes the next word of the
// question's script (the thread's current script; Generate runs on the asking thread). Timing,
// token counts and cancellation are the engine's own.
class ScriptedText final : public llm::LanguageModel {
 public:
  explicit ScriptedText(std::unique_ptr<llm::EngineLanguageModel> engine)
      : engine_(std::move(engine)) {}

  static void SetScript(const std::string* script) { script_ = script; }

  Result<llm::GenerateStats> Generate(const llm::GenerateRequest& request,
                                      const llm::TextCallback& on_text) override {
    std::vector<std::string> words;
    if (script_ != nullptr) {
      std::istringstream ws(*script_);
      for (std::string w; ws >> w;) words.push_back(w);
    }
    if (words.empty()) words.push_back("okay.");
    size_t next = 0;
    return engine_->Generate(request, [&](std::string_view) {
      std::string word = (next == 0 ? "" : " ") + words[next % words.size()];
      ++next;
      return on_text(word);
    });
  }
  Status Prefetch(const std::vector<llm::Message>& messages, int max_tokens) override {
    return engine_->Prefetch(messages, max_tokens);
  }
  int CountTokens(std::string_view text) const override { return engine_->CountTokens(text); }
  std::string name() const override { return engine_->name(); }
  llm::EngineLanguageModel& engine() { return *engine_; }

 private:
  static thread_local const std::string* script_;
  std::unique_ptr<llm::EngineLanguageModel> engine_;
};
thread_local const std::string* ScriptedText::script_ = nullptr;

struct RowSpec {
  std::string name;
  std::string weights;  // type name
  bool flash_attention = true;
  bool streaming = false;
  bool caches = false;
};

struct RowResult {
  RowSpec spec;
  std::vector<double> first_audio_ms;
  std::map<std::string, int> tiers;
  double generated_tokens_mean = 0;  // over the model's answers in the latency pass
  double qps = 0;
  double throughput_wall_s = 0;
  int failures = 0;
  std::string first_error;
  uint64_t model_bytes = 0, kv_bytes = 0, cache_bytes = 0;
};

// One question answered and spoken: first-audio latency, tier, tokens generated.
struct Spoken {
  double first_audio_ms = -1;
  std::string tier;
  int generated_tokens = 0;
};

// Answers `q` with `answerer` and synthesizes it: whole (answer, then the whole text) or
// streaming (each sentence to a speaker thread as soon as it is final).
Result<Spoken> AnswerAndSpeak(answer::Answerer& answerer, tts::Synthesizer& synth,
                              const AskedQuestion& q, bool streaming) {
  answer::CallerSession caller("+15550100");
  ScriptedText::SetScript(&q.script);
  Spoken out;
  const auto t0 = Clock::now();
  std::optional<Clock::time_point> first_chunk;
  auto on_chunk = [&](std::span<const int16_t> samples) -> Status {
    if (!first_chunk && !samples.empty()) first_chunk = Clock::now();
    return Status::Ok();
  };
  Result<answer::AnswerResult> r = answer::AnswerResult{};
  if (!streaming) {
    r = answerer.Answer(q.text, caller);
    ScriptedText::SetScript(nullptr);
    if (!r.ok()) return r.status();
    RETURN_IF_ERROR(synth.Synthesize(r->text, on_chunk));
  } else {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::string> queue;
    bool done = false;
    Status speak_status;
    std::thread speaker([&] {
      while (true) {
        std::string sentence;
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return done || !queue.empty(); });
          if (queue.empty()) return;
          sentence = std::move(queue.front());
          queue.pop_front();
        }
        Status s = synth.Synthesize(sentence, on_chunk);
        if (!s.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          if (speak_status.ok()) speak_status = s;
        }
      }
    });
    answer::AnswerOptions options;
    options.on_sentence = [&](std::string_view sentence) {
      {
        std::lock_guard<std::mutex> lock(mu);
        queue.emplace_back(sentence);
      }
      cv.notify_one();
      return true;
    };
    r = answerer.Answer(q.text, caller, {}, options);
    ScriptedText::SetScript(nullptr);
    {
      std::lock_guard<std::mutex> lock(mu);
      done = true;
    }
    cv.notify_one();
    speaker.join();
    if (!r.ok()) return r.status();
    RETURN_IF_ERROR(speak_status);
  }
  if (!first_chunk) return InternalError("the answer produced no audio: '" + r->text + "'");
  out.first_audio_ms = std::chrono::duration<double, std::milli>(*first_chunk - t0).count();
  out.tier = std::string(answer::TierName(r->tier));
  out.generated_tokens = r->llm ? r->llm->generated_tokens : 0;
  return out;
}

struct Setup {
  std::string kb_csv;
  std::string scratch;  // temporary folder
  int answer_tokens = 32;
  int passages = 1;
  int concurrency = 2;
  int threads = 2;
  std::string chat_template;
  engine::RandomModelInfo info;
};

// The answer stack of one pass: its own knowledge-base file (so passes never share caches),
// answer caches on or off.
struct Answering {
  std::unique_ptr<answer::AnswerStack> stack;
  std::unique_ptr<answer::Answerer> plain;  // no caches
  answer::Answerer& answerer() { return plain ? *plain : stack->answerer(); }
};

Result<Answering> BuildAnswering(const Setup& setup, const RowSpec& row, llm::LanguageModel* lm,
                                 const std::string& tag) {
  answer::AnswererConfig cfg;
  cfg.use_intent_cache = row.caches;
  cfg.use_semantic_cache = row.caches;
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
  if (!row.caches) {
    answer::AnswererParts parts;
    const answer::IntentClassifier* classifier = a.stack->classifier();
    parts.understand = [classifier](std::string_view turn) -> Result<answer::Question> {
      return answer::QuestionFromUnderstanding(answer::Understand(turn, classifier),
                                               answer::CurrentYearMonth());
    };
    parts.kb = &a.stack->kb();
    parts.llm = lm;
    ASSIGN_OR_RETURN(a.plain, answer::Answerer::Create(cfg, std::move(parts)));
  }
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
  lc.engine.max_batch_size = std::max(2, setup.concurrency);
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
      auto spoken = AnswerAndSpeak(a.answerer(), *synth, q, row.streaming);
      if (!spoken.ok()) {
        if (res.failures++ == 0) res.first_error = spoken.status().ToString();
        continue;
      }
      res.first_audio_ms.push_back(spoken->first_audio_ms);
      ++res.tiers[spoken->tier];
      if (spoken->tier == "llm") {
        tokens += spoken->generated_tokens;
        ++model_answers;
      }
    }
    res.generated_tokens_mean = model_answers > 0 ? tokens / model_answers : 0;
    std::filesystem::remove(setup.scratch + "/kb-lat.sqlite");
  }
  if (progress) {
    std::cerr << "  " << row.name << ": latency pass done (P50 "
              << server::testing::Percentile(res.first_audio_ms, 50) << " ms)\n";
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
              AnswerAndSpeak(a.answerer(), *synths[size_t(i)], questions[k], row.streaming);
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

nlohmann::json NumberOrNull(double v) {
  return std::isnan(v) ? nlohmann::json() : nlohmann::json(v);
}

int RunBenchAblation(std::span<const std::string> argv) {
  auto args = Args::Parse(
      argv, {"--questions", "--shape", "--arch", "--unquantized", "--quantized", "--answer-tokens",
             "--concurrency", "--threads", "--bitext", "--kb", "--seed", "--passages"});
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
  const std::string shape = args->GetOr("--shape", "0.5b");
  const std::string arch = args->GetOr("--arch", "qwen2");
  const std::string unq = args->GetOr("--unquantized", "f32");
  const std::string quant = args->GetOr("--quantized", "q4_0");
  const std::string bitext = args->GetOr("--bitext", "");
  const std::string kb_csv =
      args->GetOr("--kb", std::string(HOTLINE_ASSETS_DIR) + "/kb/bitext_kb.csv");
  for (const Status& s : {n.status(), passages.status(), answer_tokens.status(),
                          concurrency.status(), threads.status(), seed.status(), args->Finish()}) {
    if (!s.ok()) return UsageError(s.message(), kUsage);
  }
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
  std::string kb_text;
  {
    std::ifstream in(kb_csv, std::ios::binary);
    if (!in) return Fail("--kb " + kb_csv + ": cannot open");
    std::ostringstream ss;
    ss << in.rdbuf();
    kb_text = ss.str();
    if (kb_text.size() > (64u << 20)) return Fail("--kb " + kb_csv + ": over 64 MiB");
  }
  std::map<std::string, std::string> scripts;
  std::map<std::string, std::vector<std::string>> by_intent;
  {
    answer::CsvReader reader(kb_text);
    answer::CsvRecord rec;
    auto header = reader.Next(rec);
    if (!header.ok() || !*header) return Fail("--kb " + kb_csv + ": no header");
    int body_col = -1, intent_col = -1, questions_col = -1;
    for (size_t c = 0; c < rec.fields.size(); ++c) {
      if (rec.fields[c] == "body") body_col = static_cast<int>(c);
      if (rec.fields[c] == "intent") intent_col = static_cast<int>(c);
      if (rec.fields[c] == "questions") questions_col = static_cast<int>(c);
    }
    if (body_col < 0 || intent_col < 0 || questions_col < 0) {
      return Fail("--kb " + kb_csv + ": expected body, intent and questions columns");
    }
    while (true) {
      auto more = reader.Next(rec);
      if (!more.ok()) return Fail(more.status().WithContext("--kb " + kb_csv));
      if (!*more) break;
      const size_t need = size_t(std::max({body_col, intent_col, questions_col}));
      if (rec.fields.size() <= need) continue;
      const std::string& intent = rec.fields[size_t(intent_col)];
      if (intent.empty() || scripts.count(intent)) continue;
      std::string body = rec.fields[size_t(body_col)];
      if (body.empty()) continue;
      if (body.back() != '.' && body.back() != '!' && body.back() != '?') body += '.';
      scripts[intent] = body;
      for (auto& q : answer::SplitQuestions(rec.fields[size_t(questions_col)])) {
        by_intent[intent].push_back(std::move(q));
      }
    }
  }
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

  // The two models.
  const std::string unq_path = setup.scratch + "/model-" + unq + ".gguf";
  const std::string quant_path = setup.scratch + "/model-" + quant + ".gguf";
  {
    engine::ComputePool pool(setup.threads);
    for (const auto& [type, path] : {std::pair{unq, unq_path}, std::pair{quant, quant_path}}) {
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
      {"+ streaming pipeline", quant, true, true, false},
      {"+ answer cache (L1/L2/L3)", quant, true, true, true},
  };
  if (!json) {
    std::cerr << "hotline bench ablation: " << arch << " " << shape << " (" << unq << " / " << quant
              << "), " << questions->size() << " questions, " << *answer_tokens
              << " tokens per model answer, throughput with " << *concurrency << " askers\n";
  }
  const double load_start = LoadAverage1m();
  const auto t_start = Clock::now();
  std::vector<RowResult> rows;
  for (const RowSpec& spec : specs) {
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
          {"failures", r.failures},
          {"vs_row1",
           {{"p50", NumberOrNull(base_p50 / p50)},
            {"questions_per_s",
             base_qps > 0 ? nlohmann::json(r.qps / base_qps) : nlohmann::json()}}}};
      if (!r.first_error.empty()) row["first_error"] = r.first_error;
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
      if (r.failures > 0) std::printf("; %d failed (%s)", r.failures, r.first_error.c_str());
      std::printf("\n");
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
