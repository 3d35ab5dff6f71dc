// llm_deadline_bench: just-in-time generation on the embedded backend. Sixteen callers (--calls)
// hold conversations with the model at once: each asks a question (the end of its turn), hears
// the answer sentence by sentence as the model produces it, listens to the end, pauses, and asks
// again. A "sentence" is --sentence-tokens tokens and plays for --token-audio-ms per token (a
// real model's English is about 0.75 words per token, spoken at 2.5-3 words per second), so
// generation has to keep ahead of playback, not finish early.
//
// The run is made twice on the same model, in alternation over --rounds:
//   without  every request as the pipeline sent them before: priority 0, no deadline;
//   with     the call's policy (llm::GenerationSchedule, set as the call session's PaceModel
//            does): urgent until the first sentence is ready, then due when the queued audio
//            ends less the time the last sentence took to arrive (the engine lets requests with
//            more than llm.engine.defer_horizon_ms of slack sit out passes for callers still
//            waiting).
//
// Reported: first audio (end of the caller's turn -> first sentence complete; the synthesis time,
// the same in both runs, left out) P50/P90/P99, the ratio with / without, and the gaps (a later
// sentence complete after the audio before it ran out), so a gain that stutters shows.
//
//   llm_deadline_bench [-m MODEL.gguf] [--calls 16] [--turns 4] [--rounds 1] [--threads 2]
//       [--answer-tokens 36] [--sentence-tokens 12] [--token-audio-ms 250] [--think-ms 1500]
//       [--questions FILE.csv] [--horizon-ms 1000]
// Without -m, a 0.5B-shaped Q4_0 qwen2 model with random weights is written to a temporary file
// (engine::WriteRandomModel, as `hotline engine gen-random --shape 0.5b --type q4_0`). The
// questions are the first column of a CSV (default: Banking77's test split in the shared data;
// the model is random, so only their lengths matter).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/log.h"
#include "common/build_paths.h"
#include "engine/quant_model.h"
#include "llm/engine/engine_language_model.h"

using namespace hotline;

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string model;
  std::string questions = std::string(HOTLINE_SHARED_DATA_DIR) + "/intent/banking77/test.csv";
  int calls = 16;
  int turns = 4;
  int rounds = 1;
  int threads = 2;
  int answer_tokens = 36;
  int sentence_tokens = 12;
  int token_audio_ms = 250;
  int think_ms = 1500;
  int horizon_ms = 1000;
};

struct TurnResult {
  double first_audio_ms = 0;
  double gap_ms = 0;  // silence between sentences because the next one was late
  int gaps = 0;
  int tokens = 0;
};

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = static_cast<size_t>(std::min<double>(v.size() - 1, p / 100.0 * v.size()));
  return v[i];
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "llm_deadline_bench: %s\n", what.c_str());
  std::exit(1);
}

std::vector<std::string> ReadQuestions(const std::string& path) {
  std::ifstream in(path);
  if (!in) Die("cannot read " + path + " (pass --questions FILE.csv)");
  std::vector<std::string> out;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line) && out.size() < 4096) {
    std::string q;
    if (!line.empty() && line[0] == '"') {
      const size_t end = line.find('"', 1);
      q = line.substr(1, end == std::string::npos ? std::string::npos : end - 1);
    } else {
      q = line.substr(0, line.find(','));
    }
    if (!q.empty()) out.push_back(q);
  }
  if (out.empty()) Die("no questions in " + path);
  return out;
}

// One caller's conversation; results appended under `mu`.
void Caller(llm::LanguageModel& lm, const Options& o, const std::vector<std::string>& questions,
            int caller, int round, bool deadlines, std::mutex& mu,
            std::vector<TurnResult>& results) {
  std::mt19937 rng(static_cast<uint32_t>(caller * 7919 + round * 104729));
  const auto sentence_audio = std::chrono::milliseconds(o.sentence_tokens * o.token_audio_ms);
  // Callers start spread over one answer's length, so their turns do not line up.
  const int answer_ms = o.answer_tokens * o.token_audio_ms;
  std::this_thread::sleep_for(std::chrono::milliseconds(
      std::uniform_int_distribution<int>(0, answer_ms + o.think_ms)(rng)));
  for (int t = 0; t < o.turns; ++t) {
    const std::string& q =
        questions[static_cast<size_t>(caller * o.turns + t + round * 997) % questions.size()];
    llm::GenerateRequest req;
    req.messages = {{"system",
                     "You are the support agent of a bank on a phone call. Answer in one or two "
                     "short spoken sentences, politely, without lists or markup."},
                    {"user", q}};
    req.max_tokens = o.answer_tokens;
    llm::GenerationSchedule schedule;
    const Clock::time_point start = Clock::now();
    schedule.Waiting(start);
    if (deadlines) req.schedule = &schedule;
    TurnResult r;
    Clock::time_point playout_end{};
    Clock::time_point last_ready = start;
    bool heard = false;
    auto sentence_ready = [&] {
      const Clock::time_point now = Clock::now();
      if (!heard) {
        heard = true;
        r.first_audio_ms = Ms(now - start);
        playout_end = now + sentence_audio;
      } else {
        if (now > playout_end) {
          r.gap_ms += Ms(now - playout_end);
          ++r.gaps;
          playout_end = now;
        }
        playout_end += sentence_audio;
      }
      // The call's policy (pipeline/call_session_speak.cc, PaceModel): the next sentence is due
      // when the queued audio ends, less the time the last one took to arrive.
      schedule.Playing(playout_end - (now - last_ready), now);
      last_ready = now;
    };
    auto stats = lm.Generate(req, [&](std::string_view) {
      if (++r.tokens % o.sentence_tokens == 0) sentence_ready();
      return true;
    });
    if (!stats.ok()) Die("generate: " + stats.status().ToString());
    if (r.tokens % o.sentence_tokens != 0 || !heard) sentence_ready();
    {
      std::lock_guard<std::mutex> lock(mu);
      results.push_back(r);
    }
    // The caller listens to the end of the answer, then thinks and asks again.
    std::this_thread::sleep_until(playout_end);
    std::this_thread::sleep_for(std::chrono::milliseconds(
        o.think_ms / 2 + std::uniform_int_distribution<int>(0, o.think_ms)(rng)));
  }
}

std::vector<TurnResult> Run(llm::LanguageModel& lm, const Options& o,
                            const std::vector<std::string>& questions, int round, bool deadlines) {
  std::mutex mu;
  std::vector<TurnResult> results;
  std::vector<std::thread> callers;
  for (int c = 0; c < o.calls; ++c) {
    callers.emplace_back([&, c] { Caller(lm, o, questions, c, round, deadlines, mu, results); });
  }
  for (auto& t : callers) t.join();
  return results;
}

struct Summary {
  std::vector<double> first_audio;
  double gap_ms = 0;
  int gaps = 0;
  int turns = 0;
  int64_t tokens = 0;
};

void Add(Summary& s, const std::vector<TurnResult>& rs) {
  for (const TurnResult& r : rs) {
    s.first_audio.push_back(r.first_audio_ms);
    s.gap_ms += r.gap_ms;
    s.gaps += r.gaps;
    s.tokens += r.tokens;
    ++s.turns;
  }
}

void Print(const char* name, const Summary& s) {
  std::printf(
      "%-9s turns %3d  first audio P50 %7.0f  P90 %7.0f  P99 %7.0f ms  "
      "late sentences %3d (%.0f ms of gaps in all)  tokens/turn %.1f\n",
      name, s.turns, Pct(s.first_audio, 50), Pct(s.first_audio, 90), Pct(s.first_audio, 99), s.gaps,
      s.gap_ms, s.turns ? static_cast<double>(s.tokens) / s.turns : 0.0);
}

double LoadAverage() {
  double l[1] = {0};
  return getloadavg(l, 1) == 1 ? l[0] : -1;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die("missing value after " + a);
      return argv[++i];
    };
    if (a == "-m" || a == "--model") {
      o.model = next();
    } else if (a == "--questions") {
      o.questions = next();
    } else if (a == "--calls") {
      o.calls = std::atoi(next().c_str());
    } else if (a == "--turns") {
      o.turns = std::atoi(next().c_str());
    } else if (a == "--rounds") {
      o.rounds = std::atoi(next().c_str());
    } else if (a == "--threads") {
      o.threads = std::atoi(next().c_str());
    } else if (a == "--answer-tokens") {
      o.answer_tokens = std::atoi(next().c_str());
    } else if (a == "--sentence-tokens") {
      o.sentence_tokens = std::atoi(next().c_str());
    } else if (a == "--token-audio-ms") {
      o.token_audio_ms = std::atoi(next().c_str());
    } else if (a == "--think-ms") {
      o.think_ms = std::atoi(next().c_str());
    } else if (a == "--horizon-ms") {
      o.horizon_ms = std::atoi(next().c_str());
    } else {
      Die("unknown argument " + a +
          " (usage: llm_deadline_bench [-m MODEL.gguf] [--calls N] [--turns N] [--rounds N] "
          "[--threads N] [--answer-tokens N] [--sentence-tokens N] [--token-audio-ms MS] "
          "[--think-ms MS] [--questions FILE.csv] [--horizon-ms MS])");
    }
  }
  if (o.calls < 1 || o.calls > 256 || o.turns < 1 || o.rounds < 1 || o.threads < 1 ||
      o.answer_tokens < 1 || o.sentence_tokens < 1 || o.token_audio_ms < 1 || o.think_ms < 0) {
    Die("--calls 1..256; --turns, --rounds, --threads, --answer-tokens, --sentence-tokens and "
        "--token-audio-ms >= 1; --think-ms >= 0");
  }
  InitLogging("warn");
  const std::vector<std::string> questions = ReadQuestions(o.questions);

  std::string scratch;
  if (o.model.empty()) {
    scratch = (std::filesystem::temp_directory_path() /
               ("hotline-deadline-bench-" + std::to_string(getpid()) + ".gguf"))
                  .string();
    engine::RandomModelSpec spec;
    spec.arch = "qwen2";
    spec.shape = "0.5b";
    spec.type = engine::GgmlType::Q4_0;
    engine::ComputePool pool(o.threads);
    auto info = engine::WriteRandomModel(spec, scratch, pool);
    if (!info.ok()) Die("writing the random model: " + info.status().ToString());
    o.model = scratch;
  }
  struct Cleanup {
    std::string path;
    ~Cleanup() {
      if (!path.empty()) std::filesystem::remove(path);
    }
  } cleanup{scratch};

  llm::LlmEngineConfig c;
  c.engine.model_path = o.model;
  c.engine.threads = o.threads;
  c.engine.max_seq_len = 512;
  c.engine.max_batch_size = 16;
  c.defer_horizon_ms = o.horizon_ms;
  c.chat_template = "chatml";
  c.max_queue = 256;
  auto lm = llm::EngineLanguageModel::Create(c);
  if (!lm.ok()) Die("model: " + lm.status().ToString());

  std::printf(
      "%d callers x %d turns, %d-token answers in %d-token sentences of %d ms audio, "
      "think %d ms, %d threads, horizon %d ms, model %s\n",
      o.calls, o.turns, o.answer_tokens, o.sentence_tokens, o.sentence_tokens * o.token_audio_ms,
      o.think_ms, o.threads, o.horizon_ms,
      scratch.empty() ? o.model.c_str() : "random 0.5b-shaped qwen2, Q4_0");
  // Warm-up: the shared system prompt into the prefix cache, the pages of the weights in memory.
  {
    Options w = o;
    w.calls = 1;
    w.turns = 1;
    w.think_ms = 0;
    (void)Run(**lm, w, questions, 1000, false);
  }
  const double load_start = LoadAverage();
  Summary without, with;
  uint64_t deferred = 0;
  for (int round = 0; round < o.rounds; ++round) {
    Add(without, Run(**lm, o, questions, round, false));
    const uint64_t before = (*lm)->scheduler_stats().deferred;
    Add(with, Run(**lm, o, questions, round, true));
    deferred += (*lm)->scheduler_stats().deferred - before;
  }
  Print("without", without);
  Print("with", with);
  const double p99_without = Pct(without.first_audio, 99);
  const double p99_with = Pct(with.first_audio, 99);
  std::printf("ratio with / without: first audio P50 %.2fx  P99 %.2fx  (passes sat out: %llu)\n",
              Pct(with.first_audio, 50) / std::max(1.0, Pct(without.first_audio, 50)),
              p99_with / std::max(1.0, p99_without), static_cast<unsigned long long>(deferred));
  std::printf("load average (1 min): %.2f at start, %.2f at end\n", load_start, LoadAverage());
  return 0;
}
