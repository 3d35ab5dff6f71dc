// llm_speculative_bench: what speculative decoding (llm.engine.speculative_tokens) gives model
// answers, against the same backend without it, in the same process.
//
// The questions are a held-out list (default: the demo model's, questions it was never trained
// on), sent as the call's LLM tier sends them (train::CallPrompt: the answerer's system prompt and
// the question), answered greedily. For each concurrency C (default 1 and 16), C threads share
// the questions, for each mode (drafts off, drafts on) on a fresh backend:
//   - warm-up: questions [limit, limit + warmup) are answered first and not measured; the answer
//     n-gram cache learns from them as a deployment's learns from its earlier calls;
//   - measured: questions [0, limit).
// Modes alternate (off, on, off, on, ...) for --repeats rounds; the medians are printed:
//   decode tok/s     generated tokens after each answer's first / the time after its first token
//                    (the per-stream speed a caller hears), summed over answers;
//   aggregate tok/s  all generated tokens / the measured phase's wall time;
//   acceptance       drafts the model agreed with / drafts fed (process metrics);
//   same answers     answers identical to the drafts-off run's (greedy: all of them).
//
//   llm_speculative_bench [-m MODEL.gguf] [--heldout FILE.tsv] [--limit 100] [--warmup 100]
//     [--concurrency 1,16] [--draft 4] [--repeats 3] [--threads 2] [--max-tokens 64]
//     [--adaptive 1|0]   (0: draft in every pass that allows it, as speculative_adaptive: false)
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/build_paths.h"
#include "common/log.h"
#include "common/metrics.h"
#include "llm/engine/engine_language_model.h"
#include "train/model_eval.h"
#include "train/support_data.h"

using namespace hotline;

namespace {

struct Options {
  std::string model = std::string(HOTLINE_SOURCE_DIR) + "/assets/models/demo-agent.q8_0.gguf";
  std::string heldout = std::string(HOTLINE_SOURCE_DIR) + "/assets/models/demo-agent.heldout.tsv";
  size_t limit = 100, warmup = 100;
  std::vector<int> concurrency = {1, 16};
  int draft = 4, repeats = 3, threads = 2, max_tokens = 64;
  bool adaptive = true;
};

struct RunFigures {
  double decode_tps = 0, aggregate_tps = 0, acceptance = 0;
  std::vector<std::string> answers;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

uint64_t CounterValue(const char* name) {
  return MetricsRegistry::Global().GetCounter(name, "").value();
}

// Answers questions[first, last) with `concurrency` threads; per answer its text, and the
// summed decode figures.
bool Answer(llm::LanguageModel& lm, const std::vector<train::SupportExample>& questions,
            size_t first, size_t last, int concurrency, int max_tokens,
            std::vector<std::string>* answers, double* decode_tokens, double* decode_ms) {
  answers->assign(last - first, "");
  std::vector<double> tokens(last - first, 0), ms(last - first, 0);
  std::atomic<size_t> next{first};
  std::atomic<bool> failed{false};
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < last;) {
      auto prompt = train::CallPrompt(questions[i].question);
      if (!prompt.ok()) {
        failed = true;
        return;
      }
      llm::GenerateRequest req;
      for (const auto& m : *prompt) req.messages.push_back({m.role, m.content});
      req.max_tokens = max_tokens;
      std::string& text = (*answers)[i - first];
      auto r = lm.Generate(req, [&](std::string_view d) {
        text.append(d);
        return true;
      });
      if (!r.ok()) {
        std::fprintf(stderr, "generate: %s\n", r.status().ToString().c_str());
        failed = true;
        return;
      }
      tokens[i - first] = std::max(r->generated_tokens - 1, 0);
      ms[i - first] = r->total_ms - r->first_token_ms;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < concurrency; ++t) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  *decode_tokens = 0;
  *decode_ms = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    *decode_tokens += tokens[i];
    *decode_ms += ms[i];
  }
  return !failed;
}

bool RunOnce(const Options& o, const std::vector<train::SupportExample>& questions, int c,
             int draft, RunFigures* out) {
  llm::LlmEngineConfig cfg;
  cfg.engine.model_path = o.model;
  cfg.engine.threads = o.threads;
  cfg.engine.speculative_tokens = draft;
  cfg.engine.speculative_adaptive = o.adaptive;
  auto lm = llm::EngineLanguageModel::Create(cfg);
  if (!lm.ok()) {
    std::fprintf(stderr, "%s\n", lm.status().ToString().c_str());
    return false;
  }
  const size_t limit = std::min(o.limit, questions.size());
  const size_t warm_end = std::min(limit + o.warmup, questions.size());
  std::vector<std::string> unused;
  double tok = 0, ms = 0;
  if (!Answer(**lm, questions, limit, warm_end, c, o.max_tokens, &unused, &tok, &ms)) return false;
  const uint64_t drafted0 = CounterValue("hotline_engine_draft_tokens_total");
  const uint64_t accepted0 = CounterValue("hotline_engine_draft_accepted_tokens_total");
  const uint64_t generated0 = CounterValue("hotline_engine_generated_tokens_total");
  const auto start = std::chrono::steady_clock::now();
  if (!Answer(**lm, questions, 0, limit, c, o.max_tokens, &out->answers, &tok, &ms)) return false;
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The scheduler publishes its counters after each step; the last step is in by now.
  const uint64_t drafted = CounterValue("hotline_engine_draft_tokens_total") - drafted0;
  const uint64_t accepted = CounterValue("hotline_engine_draft_accepted_tokens_total") - accepted0;
  const uint64_t generated = CounterValue("hotline_engine_generated_tokens_total") - generated0;
  out->decode_tps = ms > 0 ? tok * 1000.0 / ms : 0;
  out->aggregate_tps = wall_s > 0 ? double(generated) / wall_s : 0;
  out->acceptance = drafted > 0 ? double(accepted) / double(drafted) : 0;
  return true;
}

bool ParseInts(const std::string& s, std::vector<int>* out) {
  out->clear();
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const int v = std::atoi(item.c_str());
    if (v < 1 || v > 256) return false;
    out->push_back(v);
  }
  return !out->empty();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    bool ok = true;
    const int n = std::atoi(v.c_str());
    if (a == "-m") {
      o.model = v;
    } else if (a == "--heldout") {
      o.heldout = v;
    } else if (a == "--limit") {
      o.limit = size_t(std::max(n, 0));
    } else if (a == "--warmup") {
      o.warmup = size_t(std::max(n, 0));
    } else if (a == "--concurrency") {
      ok = ParseInts(v, &o.concurrency);
    } else if (a == "--draft") {
      o.draft = n;
    } else if (a == "--repeats") {
      o.repeats = n;
    } else if (a == "--threads") {
      o.threads = n;
    } else if (a == "--max-tokens") {
      o.max_tokens = n;
    } else if (a == "--adaptive") {
      o.adaptive = n != 0;
    } else {
      ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "llm_speculative_bench: bad option %s %s (see the file's header)\n",
                   a.c_str(), v.c_str());
      return 2;
    }
  }
  if (o.limit < 1 || o.repeats < 1 || o.draft < 1 || o.max_tokens < 1) {
    std::fprintf(stderr, "llm_speculative_bench: --limit, --repeats, --draft, --max-tokens >= 1\n");
    return 2;
  }
  InitLogging("warn");
  auto text = train::ReadTextFile(o.heldout, 64u << 20);
  if (!text.ok()) {
    std::fprintf(stderr, "%s\n", text.status().ToString().c_str());
    return 1;
  }
  auto questions = train::ParseHeldOutTsv(*text);
  if (!questions.ok()) {
    std::fprintf(stderr, "%s: %s\n", o.heldout.c_str(), questions.status().ToString().c_str());
    return 1;
  }
  std::printf(
      "model %s\nquestions %s: %zu measured after %zu warm-up, max %d tokens, greedy, "
      "%d threads, drafts of up to %d tokens, median of %d rounds\n",
      o.model.c_str(), o.heldout.c_str(), std::min(o.limit, questions->size()),
      std::min(o.warmup, questions->size() - std::min(o.limit, questions->size())), o.max_tokens,
      o.threads, o.draft, o.repeats);
  std::printf("%-5s %-10s %14s %16s %11s %13s\n", "calls", "drafts", "decode tok/s",
              "aggregate tok/s", "acceptance", "same answers");
  for (int c : o.concurrency) {
    std::vector<double> dec[2], agg[2], acc[2];
    std::vector<std::string> reference;
    size_t same = 0, compared = 0;
    for (int r = 0; r < o.repeats; ++r) {
      for (int mode = 0; mode < 2; ++mode) {
        RunFigures f;
        if (!RunOnce(o, *questions, c, mode == 0 ? 0 : o.draft, &f)) return 1;
        dec[mode].push_back(f.decode_tps);
        agg[mode].push_back(f.aggregate_tps);
        acc[mode].push_back(f.acceptance);
        if (mode == 0) {
          reference = f.answers;
        } else {
          for (size_t i = 0; i < f.answers.size(); ++i) same += f.answers[i] == reference[i];
          compared += f.answers.size();
        }
      }
    }
    const double d0 = Median(dec[0]), d1 = Median(dec[1]);
    const double a0 = Median(agg[0]), a1 = Median(agg[1]);
    std::printf("%-5d %-10s %14.0f %16.0f %11s %13s\n", c, "off", d0, a0, "-", "-");
    std::printf("%-5d %-10s %14.0f %16.0f %10.0f%% %6zu/%-6zu\n", c, "on", d1, a1,
                100 * Median(acc[1]), same, compared);
    std::printf("%-5d %-10s %13.2fx %15.2fx\n", c, "ratio", d0 > 0 ? d1 / d0 : 0,
                a0 > 0 ? a1 / a0 : 0);
  }
  return 0;
}
