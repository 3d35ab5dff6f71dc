// `hotline bench calls --url ws://HOST:PORT/twilio --concurrency N --duration S [--json] ...`
// A load generator that behaves like Twilio against a running `hotline serve`: N concurrent
// Media Streams calls, each asking synthesized questions in real time (8 kHz μ-law, 20 ms
// frames) and timing, from the caller's side, the end of each question to the first audible
// reply frame as Twilio would play it. Calls that end are replaced until S seconds have passed.
// Reports latency percentiles, calls that failed and why, answers per cache tier (from the
// server's /metrics before and after) and the server's CPU and memory (--server-pid on the same
// machine, or its /metrics), with a timeline of its resident memory for soak runs: first- and
// last-quartile means and the slope once the load is steady, against a bound.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/bench_calls_parts.h"
#include "app/cli.h"
#include "net/http_client.h"
#include "server/testing/call_load.h"
#include "tts/synthesizer.h"

namespace hotline::cli {
namespace {

using Clock = std::chrono::steady_clock;
namespace testing = server::testing;
using namespace bench_calls;  // NOLINT: the command's own parts

constexpr char kUsage[] =
    "usage: hotline bench calls --url ws://HOST:PORT/twilio --concurrency N --duration S [--json]\n"
    "                           [--questions FILE|built-in] [--voice NAME]\n"
    "                           [--questions-per-call K] [--ramp S] [--server-pid PID]\n"
    "                           [--sample-s S] [--warmup S] [--rss-slope-max MB]\n"
    "  Places N concurrent Twilio Media Streams calls against a running `hotline serve`, each\n"
    "  asking synthesized questions in real time (8 kHz mu-law, 20 ms frames) and replaced when "
    "it\n"
    "  ends, for S seconds. Latency is the caller's: end of a question -> first audible reply "
    "frame\n"
    "  as Twilio plays it (queued audio plays in real time).\n"
    "  --url URL               the server's Twilio endpoint (ws:// only)\n"
    "  --concurrency N         calls kept running at once, 1..512\n"
    "  --duration S            seconds during which questions are asked, 1..86400 (turns in\n"
    "                          progress then finish and the calls hang up)\n"
    "  --json                  the report as one JSON object\n"
    "  --questions FILE        questions, one per line ('#' comments); default built-in\n"
    "  --voice NAME            flite voice of the callers (default cmu_us_rms)\n"
    "  --questions-per-call K  questions before a call hangs up, 1..50 (default 3)\n"
    "  --ramp S                spread the first N call starts over S seconds (default\n"
    "                          min(10, duration/4))\n"
    "  --server-pid PID        the server's process on this machine: report its CPU and memory\n"
    "  --sample-s S            seconds between memory timeline samples, 1..600 (default\n"
    "                          duration/120, at least 1)\n"
    "  --warmup S              memory trend, and a second latency figure, measured from S\n"
    "                          seconds on (default the ramp plus 10% of the duration, at most\n"
    "                          60 s more): the first calls' questions meet cold caches\n"
    "  --rss-slope-max MB      flat-memory bound: the slope of the server's memory over the\n"
    "                          steady window in MiB per minute (default 1.0); given, exceeding\n"
    "                          it exits 4. Anonymous memory (RssAnon) with --server-pid, else\n"
    "                          the resident set; both are reported\n"
    "  Exit status: 0 all calls went as scripted, 3 some failed, 4 memory grew past\n"
    "  --rss-slope-max, 1 error, 2 usage.\n";

// The command line, checked.
struct Options {
  std::string url;
  WsUrl target;
  bool json = false;
  std::string questions = "built-in";
  std::string voice = "cmu_us_rms";
  int calls = 1;  // concurrent
  double duration_s = 1;
  int per_call = 3;
  long pid = 0;  // the server's, 0 when not given
  double ramp_s = 0;
  double sample_s = 1;
  double warmup_s = 0;
  double rss_slope_max = 1.0;
  bool enforce_rss_slope = false;
};

// Options, or a usage error's message; `help` is set for --help.
Result<Options> ParseOptions(std::span<const std::string> argv, bool& help) {
  auto args = Args::Parse(argv, {"--url", "--concurrency", "--duration", "--questions", "--voice",
                                 "--questions-per-call", "--ramp", "--server-pid", "--sample-s",
                                 "--warmup", "--rss-slope-max"});
  if (!args.ok()) return args.status();
  help = args->Has("--help") || args->Has("-h");
  if (help) return Options{};
  Options o;
  o.url = args->GetOr("--url", "");
  o.json = args->Has("--json");
  o.questions = args->GetOr("--questions", "built-in");
  o.voice = args->GetOr("--voice", "cmu_us_rms");
  const bool has_concurrency = args->Has("--concurrency");
  const bool has_duration = args->Has("--duration");
  const bool has_pid = args->Has("--server-pid");
  auto concurrency = args->GetInt("--concurrency", 1, 1, 512);
  auto duration = args->GetDouble("--duration", 1, 1, 86400);
  auto per_call = args->GetInt("--questions-per-call", 3, 1, 50);
  auto server_pid = args->GetInt("--server-pid", 0, 1, 4194304);
  auto ramp = args->GetDouble("--ramp", -1, 0, 86400);        // -1: not given
  auto sample_s = args->GetDouble("--sample-s", -1, 1, 600);  // -1: not given
  auto warmup = args->GetDouble("--warmup", -1, 0, 86400);    // -1: not given
  auto rss_slope_max = args->GetDouble("--rss-slope-max", 1.0, 0, 1e6);
  o.enforce_rss_slope = args->Has("--rss-slope-max");
  for (const Status& st :
       {concurrency.status(), duration.status(), per_call.status(), server_pid.status(),
        ramp.status(), sample_s.status(), warmup.status(), rss_slope_max.status(),
        args->Finish()}) {
    RETURN_IF_ERROR(st);
  }
  if (!args->positional().empty()) return InvalidArgumentError("unexpected argument");
  if (o.url.empty()) return InvalidArgumentError("--url is required");
  if (!has_concurrency) return InvalidArgumentError("--concurrency is required");
  if (!has_duration) return InvalidArgumentError("--duration is required");
  o.calls = static_cast<int>(*concurrency);
  o.duration_s = *duration;
  o.per_call = static_cast<int>(*per_call);
  o.pid = has_pid ? static_cast<long>(*server_pid) : 0;
  o.rss_slope_max = *rss_slope_max;
  o.ramp_s = *ramp >= 0 ? *ramp : std::min(10.0, o.duration_s / 4);
  if (o.ramp_s > o.duration_s) return InvalidArgumentError("--ramp must not exceed --duration");
  o.sample_s = *sample_s >= 0 ? *sample_s : std::max(1.0, o.duration_s / 120);
  o.warmup_s = *warmup >= 0 ? *warmup : o.ramp_s + std::min(60.0, o.duration_s / 10);
  if (o.warmup_s >= o.duration_s) return InvalidArgumentError("--warmup must be below --duration");
  ASSIGN_OR_RETURN(o.target, ParseWsUrl(o.url));
  return o;
}

// The callers' questions, each synthesized once.
Result<std::vector<testing::CallerQuestion>> CallerSpeech(const Options& o) {
  std::vector<std::string> texts;
  if (o.questions == "built-in") {
    texts = testing::BuiltInCallerQuestions();
  } else {
    ASSIGN_OR_RETURN(texts, testing::ReadCallerQuestions(o.questions));
  }
  tts::TtsConfig tts_config;
  tts_config.flite.voice = o.voice;
  auto synth = tts::CreateSynthesizer(tts_config);
  if (!synth.ok()) return synth.status().WithContext("caller voice " + o.voice);
  std::vector<testing::CallerQuestion> questions;
  for (const auto& text : texts) {
    ASSIGN_OR_RETURN(testing::CallerQuestion q, testing::SynthesizeCallerQuestion(**synth, text));
    questions.push_back(std::move(q));
  }
  return questions;
}

// What the calls did, from the callers' side, and the server's memory meanwhile.
struct CallerSide {
  struct Failure {
    int call = 0;
    std::string reason;
  };
  std::vector<double> latencies;
  std::vector<double> steady_latencies;  // questions that ended after the warm-up
  std::vector<Failure> failures;
  int calls_done = 0, connect_failures = 0, missing_replies = 0, peak_active = 0;
  double peak_rss_mb = 0;
  std::vector<testing::RssSample> rss_timeline;  // one sample per --sample-s
  double wall_s = 0;
  double own_cpu_cores = 0;  // the callers share the machine with a server on loopback
  double load_start = NAN, load_end = NAN;
};

// Places the calls: o.calls slots, each calling again until the duration has passed, while two
// samplers note the server's memory (from /proc, or from its /metrics when `metrics_url` is set).
CallerSide PlaceCalls(const Options& o, const std::vector<testing::CallerQuestion>& questions,
                      double rss_before_mb, const net::HttpClientConfig& http_config,
                      const std::string& metrics_url) {
  CallerSide r;
  r.peak_rss_mb = rss_before_mb;
  std::mutex mu;
  std::atomic<int> next_call{0};
  std::atomic<int> active{0};
  const auto sample_every =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.sample_s));
  Clock::time_point next_sample;  // guarded by mu; the first reading is taken at once
  r.load_start = LoadAverage1m();
  const double own_cpu_start = OwnCpuSeconds();
  const auto t0 = Clock::now();
  const auto at = [t0](double s) {
    return t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
  };
  const auto warm_at = at(o.warmup_s);
  const auto stop_at = at(o.duration_s);
  std::atomic<bool> sampling{true};
  // Called with mu held: notes the peak and, when due, a timeline sample.
  auto note_rss = [&](double rss_mb, double rss_anon_mb) {
    r.peak_rss_mb = std::max(r.peak_rss_mb, rss_mb);
    const auto now = Clock::now();
    if (now < next_sample) return;
    next_sample = next_sample == Clock::time_point{} || next_sample + sample_every <= now
                      ? now + sample_every
                      : next_sample + sample_every;
    r.rss_timeline.push_back({std::chrono::duration<double>(now - t0).count(), rss_mb,
                              rss_anon_mb, active.load()});
  };
  std::thread sampler([&] {
    while (sampling.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      std::lock_guard<std::mutex> lock(mu);
      r.peak_active = std::max(r.peak_active, active.load());
      if (o.pid != 0) {
        if (auto p = ReadProc(o.pid)) note_rss(p->rss_mb, p->rss_anon_mb);
      }
    }
  });
  // Peak memory through /metrics: once a second, on a client of its own.
  std::thread metrics_sampler([&] {
    if (metrics_url.empty()) return;
    net::HttpClient sampler_http(http_config);
    for (int tick = 0; sampling.load(); ++tick) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      if (tick % 4 != 3) continue;
      auto m = ReadServerMetrics(sampler_http, metrics_url);
      if (m.ok() && m->proc) {
        std::lock_guard<std::mutex> lock(mu);
        note_rss(m->proc->rss_mb, NAN);
      }
    }
  });
  std::vector<std::thread> slots;
  for (int slot = 0; slot < o.calls; ++slot) {
    slots.emplace_back([&, slot] {
      // Stagger the first calls so their turns do not all end on the same frame.
      std::this_thread::sleep_for(std::chrono::duration<double>(o.ramp_s * slot / o.calls));
      while (Clock::now() < stop_at) {
        const int id = next_call.fetch_add(1);
        testing::CallScript script;
        script.host = o.target.host;
        script.port = o.target.port;
        script.path = o.target.path;
        script.call_sid = "CABENCH" + std::to_string(id);
        script.caller_number = "+1555" + std::to_string(1000000 + id % 1000000);
        script.questions = &questions;
        script.first_question = id;
        script.questions_per_call = o.per_call;
        script.stop_asking_at = stop_at;
        ++active;
        testing::CallOutcome outcome = testing::RunScriptedCall(script);
        --active;
        {
          std::lock_guard<std::mutex> lock(mu);
          ++r.calls_done;
          for (const auto& t : outcome.turns) {
            r.latencies.push_back(t.latency_ms);
            if (t.spoken_end >= warm_at) r.steady_latencies.push_back(t.latency_ms);
          }
          r.missing_replies += outcome.missing_replies;
          if (!outcome.failure.empty()) r.failures.push_back({id, outcome.failure});
          if (!outcome.connected) ++r.connect_failures;
        }
        // Do not spin against a server that refuses: one attempt a second per slot.
        if (!outcome.connected) std::this_thread::sleep_for(std::chrono::seconds(1));
      }
    });
  }
  for (auto& t : slots) t.join();
  r.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  sampling = false;
  sampler.join();
  metrics_sampler.join();
  r.load_end = LoadAverage1m();
  r.own_cpu_cores = (OwnCpuSeconds() - own_cpu_start) / r.wall_s;
  return r;
}

// The server's side of the run: /metrics now against `before`, and its process figures.
ServerDelta ServerSide(const Options& o, net::HttpClient& http, const std::string& metrics_url,
                       const Result<ServerMetrics>& before, bool proc_from_metrics) {
  ServerDelta d;
  if (!before.ok()) d.tiers_note = "per-tier counts unavailable: " + before.status().message();
  if (before.ok()) {
    auto after = ReadServerMetrics(http, metrics_url);
    if (after.ok() && proc_from_metrics) d.proc_after = after->proc;
    if (after.ok()) {
      for (const auto& [tier, count] : after->tiers) {
        const auto it = before->tiers.find(tier);
        d.tiers[tier] = count - (it == before->tiers.end() ? 0 : it->second);
      }
      for (const auto& [tier, hist] : after->after_endpoint) {
        const auto it = before->after_endpoint.find(tier);
        HistogramData h =
            HistogramDelta(hist, it == before->after_endpoint.end() ? nullptr : &it->second);
        if (h.count > 0) d.after_endpoint[tier] = std::move(h);
      }
    } else {
      d.tiers_note = "per-tier counts unavailable: " + after.status().message();
    }
  }
  if (o.pid != 0) {
    d.proc_after = ReadProc(o.pid);
    if (!d.proc_after) d.server_note = "the server process " + std::to_string(o.pid) + " went away";
  } else if (!d.proc_after) {
    d.server_note =
        "server CPU and memory not measured: its /metrics has no hotline_process_* figures; give "
        "--server-pid when the server runs on this machine";
  }
  return d;
}

// Everything one run measured.
struct Report {
  const Options& o;
  size_t questions = 0;
  const CallerSide& callers;
  const ServerDelta& server;
  const std::optional<ProcSample>& proc_before;
  const MemoryVerdict& memory;
  double peak_rss_mb() const {
    return std::max(callers.peak_rss_mb, server.proc_after ? server.proc_after->rss_mb : 0.0);
  }
};

nlohmann::json LatencyJson(const std::vector<double>& v) {
  return {{"p50", NumberOrNull(testing::Percentile(v, 50))},
          {"p90", NumberOrNull(testing::Percentile(v, 90))},
          {"p95", NumberOrNull(testing::Percentile(v, 95))},
          {"p99", NumberOrNull(testing::Percentile(v, 99))},
          {"max", NumberOrNull(testing::Percentile(v, 100))}};
}

void PrintJson(const Report& r) {
  const CallerSide& c = r.callers;
  const int failed = static_cast<int>(c.failures.size());
  nlohmann::json steady = LatencyJson(c.steady_latencies);
  steady.erase("p95");
  steady.erase("max");
  steady["warmup_s"] = r.o.warmup_s;
  steady["turns"] = c.steady_latencies.size();
  nlohmann::json out = {
      {"url", r.o.url},
      {"concurrency", r.o.calls},
      {"duration_s", r.o.duration_s},
      {"wall_s", c.wall_s},
      {"questions", r.questions},
      {"questions_per_call", r.o.per_call},
      {"calls",
       {{"started", c.calls_done},
        {"completed", c.calls_done - failed},
        {"failed", failed},
        {"connect_failed", c.connect_failures},
        {"peak_active", c.peak_active}}},
      {"turns", c.latencies.size()},
      {"missing_replies", c.missing_replies},
      {"latency_ms", LatencyJson(c.latencies)},
      {"latency_after_warmup_ms", steady},
      {"load_average_1m",
       {{"start", NumberOrNull(c.load_start)}, {"end", NumberOrNull(c.load_end)}}},
      {"generator_cpu_cores", c.own_cpu_cores},
  };
  nlohmann::json fail = nlohmann::json::array();
  for (const auto& f : c.failures) fail.push_back({{"call", f.call}, {"reason", f.reason}});
  out["failures"] = fail;
  if (r.server.tiers_note.empty()) {
    out["answers_by_tier"] = r.server.tiers;
    // The server's side: what answering added to endpointing, by tier (bucket-interpolated).
    nlohmann::json ae = nlohmann::json::object();
    for (const auto& [tier, h] : r.server.after_endpoint) {
      ae[tier] = {{"turns", h.count},
                  {"p50", NumberOrNull(1000 * h.Quantile(0.5).value_or(NAN))},
                  {"p99", NumberOrNull(1000 * h.Quantile(0.99).value_or(NAN))}};
    }
    out["after_endpoint_ms_by_tier"] = ae;
  } else {
    out["answers_by_tier"] = nullptr;
    out["answers_by_tier_note"] = r.server.tiers_note;
  }
  if (r.proc_before && r.server.proc_after) {
    const double cpu = (r.server.proc_after->cpu_s - r.proc_before->cpu_s) / c.wall_s;
    out["server"] = {{"pid", r.o.pid},
                     {"source", r.o.pid != 0 ? "proc" : "metrics"},
                     {"cpu_cores", cpu},
                     {"rss_mb_before", r.proc_before->rss_mb},
                     {"rss_mb_peak", r.peak_rss_mb()},
                     {"rss_mb_after", r.server.proc_after->rss_mb},
                     {"rss_mb_per_call", (r.peak_rss_mb() - r.proc_before->rss_mb) / r.o.calls},
                     {"cpu_cores_per_call", cpu / r.o.calls}};
  } else {
    out["server"] = nullptr;
    out["server_note"] = r.server.server_note;
  }
  out["memory"] = r.memory.json;
  std::cout << out.dump(2) << "\n";
}

void PrintText(const Report& r) {
  const CallerSide& c = r.callers;
  const auto pct = [](const std::vector<double>& v, double p) {
    return Ms(testing::Percentile(v, p));
  };
  std::printf("calls: %d placed, %zu failed (%d could not connect), peak %d at once; wall %.0f s\n",
              c.calls_done, c.failures.size(), c.connect_failures, c.peak_active, c.wall_s);
  std::printf("turns: %zu, missing replies %d\n", c.latencies.size(), c.missing_replies);
  std::printf(
      "voice-to-voice (end of speech -> first audible reply, as played): P50 %s  P90 %s  "
      "P95 %s  P99 %s  max %s\n",
      pct(c.latencies, 50).c_str(), pct(c.latencies, 90).c_str(), pct(c.latencies, 95).c_str(),
      pct(c.latencies, 99).c_str(), pct(c.latencies, 100).c_str());
  std::printf("  questions ending after the %.0f s warm-up (%zu turns): P50 %s  P90 %s  P99 %s\n",
              r.o.warmup_s, c.steady_latencies.size(), pct(c.steady_latencies, 50).c_str(),
              pct(c.steady_latencies, 90).c_str(), pct(c.steady_latencies, 99).c_str());
  if (r.server.tiers_note.empty()) {
    std::printf("answers by tier (server /metrics delta):");
    for (const auto& [tier, count] : r.server.tiers) std::printf(" %s %.0f", tier.c_str(), count);
    std::printf("\n");
    if (!r.server.after_endpoint.empty()) {
      std::printf("end of turn -> first audio sent, server side by tier (P50 / P99):");
      for (const auto& [tier, h] : r.server.after_endpoint) {
        std::printf(" %s %s / %s (%.0f)", tier.c_str(),
                    Ms(1000 * h.Quantile(0.5).value_or(NAN)).c_str(),
                    Ms(1000 * h.Quantile(0.99).value_or(NAN)).c_str(), h.count);
      }
      std::printf("\n");
    }
  } else {
    std::printf("%s\n", r.server.tiers_note.c_str());
  }
  if (r.proc_before && r.server.proc_after) {
    const double cpu = (r.server.proc_after->cpu_s - r.proc_before->cpu_s) / c.wall_s;
    const std::string source = r.o.pid != 0 ? "pid " + std::to_string(r.o.pid) : "its /metrics";
    std::printf(
        "server (%s): CPU %.2f cores (%.3f per call); RSS %.0f MB before, %.0f MB peak, %.0f MB "
        "after (%.1f MB per concurrent call)\n",
        source.c_str(), cpu, cpu / r.o.calls, r.proc_before->rss_mb, r.peak_rss_mb(),
        r.server.proc_after->rss_mb, (r.peak_rss_mb() - r.proc_before->rss_mb) / r.o.calls);
  } else {
    std::printf("%s\n", r.server.server_note.c_str());
  }
  if (const auto& t = r.memory.trend) {
    std::printf(
        "memory (%s) after %.0f s (%d samples, %.0f..%.0f s): first quartile %.1f MB, last "
        "%.1f MB (%+.1f MB), slope %+.2f MB/min (later half %+.2f): %s (bound %.2f MB/min)\n",
        r.memory.trend_of, r.o.warmup_s, t->samples, t->window_start_s, t->window_end_s,
        t->first_quartile_mb, t->last_quartile_mb, t->growth_mb, t->slope_mb_per_min,
        t->late_slope_mb_per_min, r.memory.flat ? "flat" : "GROWING", r.o.rss_slope_max);
  } else {
    std::printf("memory trend: %s\n", r.memory.json["note"].get<std::string>().c_str());
  }
  std::printf("load average (1 min): %.2f at start, %.2f at end; the callers used %.2f cores\n",
              c.load_start, c.load_end, c.own_cpu_cores);
  for (size_t i = 0; i < c.failures.size() && i < 20; ++i) {
    std::printf("  call %d failed: %s\n", c.failures[i].call, c.failures[i].reason.c_str());
  }
  if (c.failures.size() > 20) std::printf("  ... and %zu more\n", c.failures.size() - 20);
}

int RunBenchCalls(std::span<const std::string> argv) {
  bool help = false;
  auto parsed = ParseOptions(argv, help);
  if (!parsed.ok()) return UsageError(parsed.status().message(), kUsage);
  if (help) {
    std::cout << kUsage;
    return 0;
  }
  const Options& o = *parsed;
  std::optional<ProcSample> proc_before;
  if (o.pid != 0) {
    proc_before = ReadProc(o.pid);
    if (!proc_before) {
      return Fail("--server-pid " + std::to_string(o.pid) + ": no such process here");
    }
  }

  // The server must answer before anything else is spent: its /metrics doubles as the check.
  const std::string base = "http://" + o.target.host + ":" + std::to_string(o.target.port);
  const std::string metrics_url = base + "/metrics";
  net::HttpClientConfig http_config;
  http_config.connect_timeout_ms = 3000;
  http_config.total_timeout_ms = 10000;
  net::HttpClient http(http_config);
  auto before = ReadServerMetrics(http, metrics_url);
  if (!before.ok() && (before.status().code() == StatusCode::kUnavailable ||
                       before.status().code() == StatusCode::kDeadlineExceeded)) {
    // Reached nothing at all (refused, unresolvable, timed out) vs. no /metrics there.
    auto probe = http.Send(net::HttpRequest::Get(base + "/healthz"));
    if (!probe.ok()) {
      return Fail("cannot reach the server at " + o.target.host + ":" +
                  std::to_string(o.target.port) + ": " + probe.status().message());
    }
  }
  // Without --server-pid the server's own gauges on /metrics give its CPU and memory (a server
  // on another machine too).
  const bool proc_from_metrics = o.pid == 0 && before.ok() && before->proc.has_value();
  if (proc_from_metrics) proc_before = before->proc;

  auto questions = CallerSpeech(o);
  if (!questions.ok()) return Fail(questions.status());
  if (!o.json) {
    std::cerr << "hotline bench calls: " << o.calls << " concurrent calls for " << o.duration_s
              << " s against " << o.url << " (" << questions->size() << " questions, "
              << o.per_call << " per call)\n";
  }
  const CallerSide callers =
      PlaceCalls(o, *questions, proc_before ? proc_before->rss_mb : 0, http_config,
                 proc_from_metrics ? metrics_url : std::string());
  const ServerDelta server = ServerSide(o, http, metrics_url, before, proc_from_metrics);
  const MemoryVerdict memory = JudgeMemory(callers.rss_timeline, o.sample_s, o.warmup_s,
                                           o.rss_slope_max, server.server_note);
  const Report report{o, questions->size(), callers, server, proc_before, memory};
  if (o.json) {
    PrintJson(report);
  } else {
    PrintText(report);
  }
  if (!callers.failures.empty()) return 3;
  if (o.enforce_rss_slope && !memory.flat) return 4;
  return 0;
}

const CommandRegistrar kBenchCalls({"bench calls",
                                    "load a running server with concurrent Twilio calls", kUsage,
                                    RunBenchCalls});

}  // namespace
}  // namespace hotline::cli
