// Call benchmark: N concurrent Twilio Media Streams calls against `/twilio` on a loopback
// HttpServer backed by the embedded call stack (the defaults of `hotline serve`), each caller
// asking questions in real time (flite voice, 8 kHz μ-law), measured from the caller's side:
// from the end of its speech to the first audible frame of the reply. Each call asks its
// questions twice (the second round is answerable from the caches), and the whole run is
// repeated with one call as the baseline, so the figures print as ratios against it.
//
// usage: bench_calls [--calls N] [--questions K] [--no-baseline] [--cmn-per-stream]
// [--no-lead-trim]
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "app/hotline_config.h"
#include "common/build_paths.h"
#include "common/metrics.h"
#include "pipeline/call_stack.h"
#include "server/calls/twilio_endpoint.h"
#include "server/http_server.h"
#include "server/testing/call_load.h"
#include "tts/synthesizer.h"

using namespace hotline;

namespace {

void Die(const std::string& what, const Status& s) {
  std::fprintf(stderr, "bench_calls: %s: %s\n", what.c_str(), s.ToString().c_str());
  std::exit(1);
}

long RssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}

struct Sample {
  double ms;
  bool repeat;  // second round: the same question again
};

struct RunResult {
  std::vector<Sample> samples;
  int failed_calls = 0;
  int missing_replies = 0;
  double rss_per_call_mb = 0;
  double wall_s = 0;
};

RunResult Run(pipeline::CallStack& stack, int calls,
              const std::vector<server::testing::CallerQuestion>& questions, int per_call) {
  server::ServerConfig sc;
  sc.port = 0;
  auto srv = server::HttpServer::Create(sc);
  if (!srv.ok()) Die("server", srv.status());
  MetricsRegistry metrics;
  auto registry = std::make_shared<server::CallRegistry>(std::max(calls, 1));
  auto twilio =
      server::TwilioEndpoint::Create(stack.resources(), server::TwilioConfig{}, &metrics, registry);
  if (!twilio.ok()) Die("twilio endpoint", twilio.status());
  if (Status s = (*srv)->HandleWebSocket("/twilio", (*twilio)->Factory()); !s.ok()) Die("route", s);
  if (Status s = (*srv)->Start(); !s.ok()) Die("start", s);

  RunResult result;
  std::mutex mu;
  const long rss_before = RssKb();
  long rss_peak = rss_before;
  std::atomic<bool> sampling{true};
  std::thread sampler([&] {
    while (sampling.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      std::lock_guard<std::mutex> lock(mu);
      rss_peak = std::max(rss_peak, RssKb());
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < calls; ++c) {
    threads.emplace_back([&, c] {
      // Stagger the calls so their turns do not all end on the same frame.
      std::this_thread::sleep_for(std::chrono::milliseconds(c * 370));
      server::testing::CallScript script;
      script.port = (*srv)->port();
      script.call_sid = "CA" + std::to_string(c);
      script.caller_number = "+1555010" + std::to_string(c % 10);
      script.questions = &questions;
      script.first_question = c;
      script.questions_per_call = per_call;
      script.rounds = 2;
      server::testing::CallOutcome outcome = server::testing::RunScriptedCall(script);
      std::lock_guard<std::mutex> lock(mu);
      if (!outcome.failure.empty()) {
        std::printf("  call %d ended early: %s\n", c, outcome.failure.c_str());
        ++result.failed_calls;
      }
      for (const auto& t : outcome.turns) result.samples.push_back({t.latency_ms, t.round == 1});
      result.missing_replies += outcome.missing_replies;
    });
  }
  for (auto& t : threads) t.join();
  sampling = false;
  sampler.join();
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  result.rss_per_call_mb = (rss_peak - rss_before) / 1024.0 / std::max(calls, 1);
  (*srv)->Stop();
  return result;
}

double Pct(std::vector<double> v, double p) { return server::testing::Percentile(std::move(v), p); }

void Report(const char* name, const RunResult& r, int endpointing_ms) {
  std::vector<double> all, first, repeat;
  for (const auto& s : r.samples) {
    all.push_back(s.ms);
    (s.repeat ? repeat : first).push_back(s.ms);
  }
  std::printf(
      "%-10s turns %3zu  failed calls %d  missing replies %d  wall %.0f s  RSS/call %.1f MB\n",
      name, all.size(), r.failed_calls, r.missing_replies, r.wall_s, r.rss_per_call_mb);
  auto row = [&](const char* what, const std::vector<double>& v) {
    std::printf(
        "  %-22s n=%3zu  P50 %6.0f ms  P95 %6.0f ms  P99 %6.0f ms  max %6.0f ms  "
        "(P99 - endpointing %+.0f ms)\n",
        what, v.size(), Pct(v, 50), Pct(v, 95), Pct(v, 99), Pct(v, 100),
        Pct(v, 99) - endpointing_ms);
  };
  row("all turns", all);
  row("first asks", first);
  row("repeats (cacheable)", repeat);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  int calls = 8, per_call = 3;
  bool baseline = true, cmn_per_stream = false, lead_trim = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--calls") && i + 1 < argc)
      calls = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--questions") && i + 1 < argc)
      per_call = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--no-baseline"))
      baseline = false;
    else if (!std::strcmp(argv[i], "--cmn-per-stream"))
      cmn_per_stream = true;
    else if (!std::strcmp(argv[i], "--no-lead-trim"))
      lead_trim = false;
    else {
      std::fprintf(stderr,
                   "usage: bench_calls [--calls N] [--questions K] [--no-baseline] "
                   "[--cmn-per-stream] [--no-lead-trim]\n");
      return 2;
    }
  }
  if (calls < 1 || calls > 256 || per_call < 1 || per_call > 50) {
    std::fprintf(stderr, "bench_calls: --calls 1..256, --questions 1..50\n");
    return 2;
  }
  spdlog::set_level(spdlog::level::warn);

  // The embedded defaults: the pipeline's, with the answerer and the language model (the shipped
  // demo model) of Hotline's root configuration.
  auto root = LoadHotlineConfig("", {});
  if (!root.ok()) Die("embedded defaults", root.status());
  pipeline::CallStackOptions o;
  o.answer = root->answer;
  o.llm = root->llm;
  o.kb_db = "/tmp/bench_calls_" + std::to_string(getpid()) + ".kb.sqlite";
  o.kb_csv = std::string(HOTLINE_SOURCE_DIR) + "/assets/kb/bitext_kb.csv";
  o.call.reprompt_after_ms = 60000;
  o.asr.pocketsphinx.cmn_per_stream = cmn_per_stream;
  if (!lead_trim) o.call.lead_trim_max_ms = 0;
  const long rss0 = RssKb();
  auto stack = pipeline::CallStack::Build(o);
  if (!stack.ok()) Die("call stack", stack.status());
  std::printf("call stack: %.0f MB resident after build\n", (RssKb() - rss0) / 1024.0);

  tts::TtsConfig tc;
  tc.flite.voice = "cmu_us_rms";
  auto synth = tts::CreateSynthesizer(tc);
  if (!synth.ok()) Die("caller voice", synth.status());
  std::vector<server::testing::CallerQuestion> questions;
  for (const auto& text : server::testing::BuiltInCallerQuestions()) {
    auto q = server::testing::SynthesizeCallerQuestion(**synth, text);
    if (!q.ok()) Die("caller question", q.status());
    questions.push_back(std::move(*q));
  }
  // Endpointing by design: the VAD's hangover after the last speech frame, then the endpointer's
  // trailing silence (turns whose partial already reads as complete end sooner).
  const int endpointing_ms = o.vad.hangover_ms + o.endpointer.trailing_silence_ms;
  std::printf(
      "%d calls x %d questions x 2 rounds, real time; latency = caller's end of speech -> "
      "first audible reply frame (endpointing alone: %d ms = VAD hangover + trailing silence)\n",
      calls, per_call, endpointing_ms);
  RunResult one;
  if (baseline) {
    one = Run(**stack, 1, questions, per_call);
    Report("1 call", one, endpointing_ms);
  }
  RunResult many = Run(**stack, calls, questions, per_call);
  char name[32];
  std::snprintf(name, sizeof name, "%d calls", calls);
  Report(name, many, endpointing_ms);
  if (baseline && !one.samples.empty() && !many.samples.empty()) {
    std::vector<double> a, b;
    for (const auto& s : one.samples) a.push_back(s.ms);
    for (const auto& s : many.samples) b.push_back(s.ms);
    std::printf("ratio %d calls / 1 call: P50 %.2fx  P99 %.2fx\n", calls, Pct(b, 50) / Pct(a, 50),
                Pct(b, 99) / Pct(a, 99));
  }
  // How the turns were answered (whole run): pre-work, speculative starts, prefetches.
  const std::string text = MetricsRegistry::Global().ExposeText();
  for (const char* name :
       {"hotline_pipeline_prework_hits_total", "hotline_pipeline_speculation_hits_total",
        "hotline_pipeline_speculation_misses_total", "hotline_pipeline_prefetches_total",
        "hotline_pipeline_barge_in_pauses_total", "hotline_pipeline_transfers_total"}) {
    const size_t at = text.find(std::string("\n") + name + " ");
    if (at != std::string::npos) {
      std::printf("%s\n", text.substr(at + 1, text.find('\n', at + 1) - at - 1).c_str());
    }
  }
  // The server's side of each answered turn (whole run): end of turn -> first audio sent, by
  // tier, from the pipeline's histogram (quantiles interpolated within its buckets). On a cache
  // hit this is what answering adds to endpointing.
  auto& registry = MetricsRegistry::Global();
  auto print_hist = [](const char* what, const Histogram& h) {
    const Histogram::Snapshot s = h.Snap();
    if (s.count == 0) return;
    std::printf("  %-34s n=%3llu  P50 %5.0f ms  P99 %5.0f ms\n", what,
                static_cast<unsigned long long>(s.count), 1000 * s.Quantile(0.5),
                1000 * s.Quantile(0.99));
  };
  std::printf("server side, whole run:\n");
  print_hist("endpointing (speech end -> turn end)",
             registry.GetHistogram("hotline_pipeline_stage_seconds", "Latency per stage",
                                   LatencyBucketsSeconds(), {{"stage", "endpointing"}}));
  for (const char* tier : {"l1", "l2", "l3", "kb", "llm", "fallback"}) {
    const std::string what = std::string("turn end -> first audio, ") + tier;
    print_hist(what.c_str(),
               registry.GetHistogram("hotline_pipeline_after_endpoint_seconds",
                                     "End of the caller's turn to the first audio sent, by answering tier",
                                     LatencyBucketsSeconds(), {{"tier", tier}}));
  }
  std::remove(o.kb_db.c_str());
  return many.failed_calls == 0 ? 0 : 1;
}
