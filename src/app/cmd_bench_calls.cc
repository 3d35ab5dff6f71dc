// `hotline bench calls --url ws://HOST:PORT/twilio --concurrency N --duration S [--json] ...`
// A load generator that behaves like Twilio against a running `hotline serve`: N concurrent
// Media Streams calls, each asking synthesized questions in real time (8 kHz μ-law, 20 ms
// frames) and timing, from the caller's side, the end of each question to the first audible
// reply frame as Twilio would play it. Calls that end are replaced until S seconds have passed.
// Reports latency percentiles, calls that failed and why, answers per cache tier (from the
// server's /metrics before and after) and the server's CPU and memory (--server-pid on the same
// machine, or its /metrics), with a timeline of its resident memory for soak runs: first- and
// last-quartile means and the slope once the load is steady, against a bound.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/cli.h"
#include "app/doctor.h"
#include "common/metrics.h"
#include "net/http_client.h"
#include "server/testing/call_load.h"
#include "tts/synthesizer.h"

namespace hotline::cli {
namespace {

using Clock = std::chrono::steady_clock;
namespace testing = server::testing;

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

struct WsUrl {
  std::string host;
  int port = 80;
  std::string path = "/twilio";
};

Result<WsUrl> ParseWsUrl(const std::string& url) {
  if (url.rfind("wss://", 0) == 0) {
    return InvalidArgumentError("--url " + url +
                                ": wss:// is not supported; give the server's plain ws:// address");
  }
  if (url.rfind("ws://", 0) != 0) {
    return InvalidArgumentError("--url " + url + ": expected ws://HOST:PORT/twilio");
  }
  WsUrl out;
  std::string rest = url.substr(5);
  const size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) out.path = rest.substr(slash);
  if (authority.empty()) return InvalidArgumentError("--url " + url + ": no host");
  if (authority.front() == '[') {
    return InvalidArgumentError("--url " + url + ": IPv6 addresses are not supported");
  }
  const size_t colon = authority.rfind(':');
  if (colon != std::string::npos) {
    const std::string port = authority.substr(colon + 1);
    authority.resize(colon);
    if (port.empty() || port.size() > 5 ||
        port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) < 1 ||
        std::stoi(port) > 65535) {
      return InvalidArgumentError("--url " + url + ": port must be 1..65535");
    }
    out.port = std::stoi(port);
  }
  if (authority.empty() || authority.size() > 253 ||
      authority.find_first_of(" \t\r\n@?#") != std::string::npos) {
    return InvalidArgumentError("--url " + url + ": bad host");
  }
  if (out.path.find_first_of(" \t\r\n") != std::string::npos || out.path.size() > 1024) {
    return InvalidArgumentError("--url " + url + ": bad path");
  }
  out.host = authority;
  return out;
}

// The server's process figures (from /proc/PID on this machine, or from its /metrics).
struct ProcSample {
  double cpu_s = 0;  // user + system
  double rss_mb = 0;
  double rss_anon_mb = NAN;  // anonymous part of rss_mb (from /proc only)
};

// RssAnon of /proc/PID/status in MiB; NaN when absent or unreadable.
double ReadRssAnonMb(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  for (int i = 0; i < 200 && std::getline(in, line); ++i) {
    if (line.rfind("RssAnon:", 0) != 0) continue;
    char* end = nullptr;
    const double kb = std::strtod(line.c_str() + 8, &end);
    if (end == line.c_str() + 8 || !std::isfinite(kb) || kb < 0) return NAN;
    return kb / 1024.0;
  }
  return NAN;
}

std::optional<ProcSample> ReadProc(long pid) {
  std::optional<ProcessStats> p = ReadProcessStats("/proc/" + std::to_string(pid));
  if (!p) return std::nullopt;
  return ProcSample{p->cpu_seconds, p->resident_bytes / (1024.0 * 1024.0), ReadRssAnonMb(pid)};
}

// CPU seconds this process (the callers) has used.
double OwnCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double LoadAverage1m() {
  std::ifstream in("/proc/loadavg");
  double load = NAN;
  in >> load;
  return load;
}

// What the bench reads from the server's /metrics.
struct ServerMetrics {
  std::map<std::string, double> tiers;  // answers by tier
  std::optional<ProcSample> proc;       // the server's hotline_process_* gauges, when it has them
  // hotline_pipeline_after_endpoint_seconds by tier: end of the caller's turn -> first audio sent.
  std::map<std::string, HistogramData> after_endpoint;
};

// `after` minus `before` (the same histogram read twice); `after` alone when the bounds differ
// or `before` is absent (the tier had no turns yet).
HistogramData HistogramDelta(const HistogramData& after, const HistogramData* before) {
  if (before == nullptr || before->buckets.size() != after.buckets.size()) return after;
  HistogramData d = after;
  for (size_t i = 0; i < d.buckets.size(); ++i) {
    if (d.buckets[i].first != before->buckets[i].first) return after;
    d.buckets[i].second -= before->buckets[i].second;
  }
  d.count -= before->count;
  d.sum -= before->sum;
  return d;
}

// The server's /metrics; error when it cannot be read.
Result<ServerMetrics> ReadServerMetrics(net::HttpClient& http, const std::string& metrics_url) {
  auto response = http.Send(net::HttpRequest::Get(metrics_url));
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return UnavailableError("GET " + metrics_url + " answered " + std::to_string(response->status));
  }
  auto samples = ParsePrometheusText(response->body);
  if (!samples.ok()) return samples.status().WithContext(metrics_url);
  ServerMetrics m;
  for (const auto& tier : samples->LabelValues("hotline_pipeline_answers_total", "tier")) {
    m.tiers[tier] = samples->Sum("hotline_pipeline_answers_total", {{"tier", tier}});
  }
  for (const auto& tier :
       samples->LabelValues("hotline_pipeline_after_endpoint_seconds_bucket", "tier")) {
    auto h = HistogramOf(*samples, "hotline_pipeline_after_endpoint_seconds", {{"tier", tier}});
    if (h) m.after_endpoint[tier] = std::move(*h);
  }
  bool has_cpu = false, has_rss = false;
  for (const MetricSample& s : samples->samples) {
    has_cpu |= s.name == "hotline_process_cpu_seconds";
    has_rss |= s.name == "hotline_process_resident_memory_bytes";
  }
  if (has_cpu && has_rss) {
    ProcSample p;
    p.cpu_s = samples->Sum("hotline_process_cpu_seconds");
    p.rss_mb = samples->Sum("hotline_process_resident_memory_bytes") / (1024.0 * 1024.0);
    m.proc = p;
  }
  return m;
}

std::string Ms(double v) {
  if (std::isnan(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f ms", v);
  return buf;
}

nlohmann::json NumberOrNull(double v) {
  return std::isnan(v) ? nlohmann::json() : nlohmann::json(v);
}

int RunBenchCalls(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"--url", "--concurrency", "--duration", "--questions", "--voice",
                                 "--questions-per-call", "--ramp", "--server-pid", "--sample-s",
                                 "--warmup", "--rss-slope-max"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  const std::string url = args->GetOr("--url", "");
  const bool json = args->Has("--json");
  const std::string questions_arg = args->GetOr("--questions", "built-in");
  const std::string voice = args->GetOr("--voice", "cmu_us_rms");
  const bool has_concurrency = args->Has("--concurrency");
  const bool has_duration = args->Has("--duration");
  auto concurrency = args->GetInt("--concurrency", 1, 1, 512);
  auto duration = args->GetDouble("--duration", 1, 1, 86400);
  auto per_call = args->GetInt("--questions-per-call", 3, 1, 50);
  auto server_pid = args->GetInt("--server-pid", 0, 1, 4194304);
  auto ramp = args->GetDouble("--ramp", -1, 0, 86400);  // -1: not given
  auto sample_s = args->GetDouble("--sample-s", -1, 1, 600);  // -1: not given
  auto warmup = args->GetDouble("--warmup", -1, 0, 86400);    // -1: not given
  auto rss_slope_max = args->GetDouble("--rss-slope-max", 1.0, 0, 1e6);
  const bool enforce_rss_slope = args->Has("--rss-slope-max");
  for (const Status& s :
       {concurrency.status(), duration.status(), per_call.status(), server_pid.status(),
        ramp.status(), sample_s.status(), warmup.status(), rss_slope_max.status(),
        args->Finish()}) {
    if (!s.ok()) return UsageError(s.message(), kUsage);
  }
  if (!args->positional().empty()) return UsageError("unexpected argument", kUsage);
  if (url.empty()) return UsageError("--url is required", kUsage);
  if (!has_concurrency) return UsageError("--concurrency is required", kUsage);
  if (!has_duration) return UsageError("--duration is required", kUsage);
  if (*ramp < 0) *ramp = std::min(10.0, *duration / 4);
  if (*ramp > *duration) return UsageError("--ramp must not exceed --duration", kUsage);
  if (*sample_s < 0) *sample_s = std::max(1.0, *duration / 120);
  if (*warmup < 0) *warmup = *ramp + std::min(60.0, *duration / 10);
  if (*warmup >= *duration) return UsageError("--warmup must be below --duration", kUsage);
  auto target = ParseWsUrl(url);
  if (!target.ok()) return UsageError(target.status().message(), kUsage);
  const int n = static_cast<int>(*concurrency);
  const long pid = args->Has("--server-pid") ? static_cast<long>(*server_pid) : 0;

  std::optional<ProcSample> proc_before;
  if (pid != 0) {
    proc_before = ReadProc(pid);
    if (!proc_before) return Fail("--server-pid " + std::to_string(pid) + ": no such process here");
  }

  // The server must answer before anything else is spent: its /metrics doubles as the check.
  const std::string metrics_url =
      "http://" + target->host + ":" + std::to_string(target->port) + "/metrics";
  net::HttpClientConfig http_config;
  http_config.connect_timeout_ms = 3000;
  http_config.total_timeout_ms = 10000;
  net::HttpClient http(http_config);
  auto tiers_before = ReadServerMetrics(http, metrics_url);
  std::string tiers_note;
  if (!tiers_before.ok()) {
    if (tiers_before.status().code() == StatusCode::kUnavailable ||
        tiers_before.status().code() == StatusCode::kDeadlineExceeded) {
      // Reached nothing at all (refused, unresolvable, timed out) vs. no /metrics there.
      auto probe = http.Send(net::HttpRequest::Get("http://" + target->host + ":" +
                                                   std::to_string(target->port) + "/healthz"));
      if (!probe.ok()) {
        return Fail("cannot reach the server at " + target->host + ":" +
                    std::to_string(target->port) + ": " + probe.status().message());
      }
    }
    tiers_note = "per-tier counts unavailable: " + tiers_before.status().message();
  }
  // Without --server-pid the server's own gauges on /metrics give its CPU and memory (a server
  // on another machine too).
  const bool proc_from_metrics = pid == 0 && tiers_before.ok() && tiers_before->proc.has_value();
  if (proc_from_metrics) proc_before = tiers_before->proc;

  // Caller speech, synthesized once.
  std::vector<std::string> texts;
  if (questions_arg == "built-in") {
    texts = testing::BuiltInCallerQuestions();
  } else {
    auto read = testing::ReadCallerQuestions(questions_arg);
    if (!read.ok()) return Fail(read.status());
    texts = std::move(*read);
  }
  tts::TtsConfig tts_config;
  tts_config.flite.voice = voice;
  auto synth = tts::CreateSynthesizer(tts_config);
  if (!synth.ok()) return Fail(synth.status().WithContext("caller voice " + voice));
  std::vector<testing::CallerQuestion> questions;
  for (const auto& text : texts) {
    auto q = testing::SynthesizeCallerQuestion(**synth, text);
    if (!q.ok()) return Fail(q.status());
    questions.push_back(std::move(*q));
  }
  if (!json) {
    std::cerr << "hotline bench calls: " << n << " concurrent calls for " << *duration
              << " s against " << url << " (" << questions.size() << " questions, " << *per_call
              << " per call)\n";
  }

  struct Failure {
    int call = 0;
    std::string reason;
  };
  std::mutex mu;
  std::vector<double> latencies;
  std::vector<double> steady_latencies;  // questions that ended after the warm-up
  std::vector<Failure> failures;
  int calls_done = 0, connect_failures = 0, missing_replies = 0;
  std::atomic<int> next_call{0};
  std::atomic<int> active{0};
  int peak_active = 0;
  double peak_rss_mb = proc_before ? proc_before->rss_mb : 0;
  // The server's memory over time (guarded by mu); one sample per --sample-s.
  std::vector<testing::RssSample> rss_timeline;
  const auto sample_every =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*sample_s));
  Clock::time_point next_sample;  // guarded by mu; the first reading is taken at once
  const double load_start = LoadAverage1m();
  const double own_cpu_start = OwnCpuSeconds();

  const auto t0 = Clock::now();
  const auto warm_at =
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*warmup));
  const auto stop_at =
      t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(*duration));
  std::atomic<bool> sampling{true};
  // Called with mu held: notes the peak and, when due, a timeline sample.
  auto note_rss = [&](double rss_mb, double rss_anon_mb) {
    peak_rss_mb = std::max(peak_rss_mb, rss_mb);
    const auto now = Clock::now();
    if (now < next_sample) return;
    next_sample = next_sample == Clock::time_point{} || next_sample + sample_every <= now
                      ? now + sample_every
                      : next_sample + sample_every;
    rss_timeline.push_back({std::chrono::duration<double>(now - t0).count(), rss_mb, rss_anon_mb,
                            active.load()});
  };
  std::thread sampler([&] {
    while (sampling.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
      std::lock_guard<std::mutex> lock(mu);
      peak_active = std::max(peak_active, active.load());
      if (pid != 0) {
        if (auto s = ReadProc(pid)) note_rss(s->rss_mb, s->rss_anon_mb);
      }
    }
  });
  // Peak memory through /metrics: once a second, on a client of its own.
  std::thread metrics_sampler([&] {
    if (!proc_from_metrics) return;
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
  for (int slot = 0; slot < n; ++slot) {
    slots.emplace_back([&, slot] {
      // Stagger the first calls so their turns do not all end on the same frame.
      std::this_thread::sleep_for(std::chrono::duration<double>(*ramp * slot / n));
      while (Clock::now() < stop_at) {
        const int id = next_call.fetch_add(1);
        testing::CallScript script;
        script.host = target->host;
        script.port = target->port;
        script.path = target->path;
        script.call_sid = "CABENCH" + std::to_string(id);
        script.caller_number = "+1555" + std::to_string(1000000 + id % 1000000);
        script.questions = &questions;
        script.first_question = id;
        script.questions_per_call = static_cast<int>(*per_call);
        script.stop_asking_at = stop_at;
        ++active;
        testing::CallOutcome outcome = testing::RunScriptedCall(script);
        --active;
        {
          std::lock_guard<std::mutex> lock(mu);
          ++calls_done;
          for (const auto& t : outcome.turns) {
            latencies.push_back(t.latency_ms);
            if (t.spoken_end >= warm_at) steady_latencies.push_back(t.latency_ms);
          }
          missing_replies += outcome.missing_replies;
          if (!outcome.failure.empty()) failures.push_back({id, outcome.failure});
          if (!outcome.connected) ++connect_failures;
        }
        // Do not spin against a server that refuses: one attempt a second per slot.
        if (!outcome.connected) std::this_thread::sleep_for(std::chrono::seconds(1));
      }
    });
  }
  for (auto& t : slots) t.join();
  const double wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  sampling = false;
  sampler.join();
  metrics_sampler.join();
  const double load_end = LoadAverage1m();
  // The callers share the machine with a server on loopback: their own CPU is part of the load.
  const double own_cpu_cores = (OwnCpuSeconds() - own_cpu_start) / wall_s;

  std::map<std::string, double> tiers;
  std::map<std::string, HistogramData> after_endpoint;  // this run's turns, by tier
  std::optional<ProcSample> proc_after;
  std::string server_note;
  if (tiers_before.ok()) {
    auto after = ReadServerMetrics(http, metrics_url);
    if (after.ok() && proc_from_metrics) {
      proc_after = after->proc;
      if (proc_after) peak_rss_mb = std::max(peak_rss_mb, proc_after->rss_mb);
    }
    if (after.ok()) {
      for (const auto& [tier, count] : after->tiers) {
        const auto it = tiers_before->tiers.find(tier);
        tiers[tier] = count - (it == tiers_before->tiers.end() ? 0 : it->second);
      }
      for (const auto& [tier, hist] : after->after_endpoint) {
        const auto it = tiers_before->after_endpoint.find(tier);
        HistogramData d = HistogramDelta(
            hist, it == tiers_before->after_endpoint.end() ? nullptr : &it->second);
        if (d.count > 0) after_endpoint[tier] = std::move(d);
      }
    } else {
      tiers_note = "per-tier counts unavailable: " + after.status().message();
    }
  }
  if (pid != 0) {
    proc_after = ReadProc(pid);
    if (!proc_after) server_note = "the server process " + std::to_string(pid) + " went away";
  } else if (!proc_after) {
    server_note =
        "server CPU and memory not measured: its /metrics has no hotline_process_* figures; give "
        "--server-pid when the server runs on this machine";
  }

  const double p50 = testing::Percentile(latencies, 50);
  const double p90 = testing::Percentile(latencies, 90);
  const double p95 = testing::Percentile(latencies, 95);
  const double p99 = testing::Percentile(latencies, 99);
  const double max = testing::Percentile(latencies, 100);
  const int failed = static_cast<int>(failures.size());
  // The verdict is on anonymous memory when known (a leak grows it; mapped model and voice files
  // add pages per mapping as recognizers and synthesizers are created, bounded by the calls),
  // else on the whole resident set. Both trends are reported.
  const std::optional<testing::RssTrend> trend_rss =
      testing::AnalyzeRssTrend(rss_timeline, *warmup);
  std::optional<testing::RssTrend> trend_anon;
  if (!rss_timeline.empty() &&
      std::all_of(rss_timeline.begin(), rss_timeline.end(),
                  [](const testing::RssSample& r) { return std::isfinite(r.rss_anon_mb); })) {
    std::vector<testing::RssSample> anon = rss_timeline;
    for (auto& r : anon) r.rss_mb = r.rss_anon_mb;
    trend_anon = testing::AnalyzeRssTrend(anon, *warmup);
  }
  const std::optional<testing::RssTrend>& trend = trend_anon ? trend_anon : trend_rss;
  const char* trend_of = trend_anon ? "rss_anon" : "rss";
  const bool memory_flat = trend.has_value() && trend->slope_mb_per_min <= *rss_slope_max;
  nlohmann::json memory_json = {{"sample_s", *sample_s},
                                {"warmup_s", *warmup},
                                {"rss_slope_max_mb_per_min", *rss_slope_max}};
  nlohmann::json timeline_json = nlohmann::json::array();
  for (const auto& r : rss_timeline) {
    timeline_json.push_back({{"t_s", r.t_s},
                             {"rss_mb", r.rss_mb},
                             {"rss_anon_mb", NumberOrNull(r.rss_anon_mb)},
                             {"active_calls", r.active_calls}});
  }
  memory_json["timeline"] = timeline_json;
  auto trend_json = [](const std::optional<testing::RssTrend>& t) -> nlohmann::json {
    if (!t) return nullptr;
    return {{"samples", t->samples},
            {"window_start_s", t->window_start_s},
            {"window_end_s", t->window_end_s},
            {"first_quartile_mb", t->first_quartile_mb},
            {"last_quartile_mb", t->last_quartile_mb},
            {"growth_mb", t->growth_mb},
            {"slope_mb_per_min", t->slope_mb_per_min},
            {"late_slope_mb_per_min", t->late_slope_mb_per_min}};
  };
  memory_json["trend_rss"] = trend_json(trend_rss);
  memory_json["trend_rss_anon"] = trend_json(trend_anon);
  if (trend) {
    memory_json["trend"] = trend_json(trend);
    memory_json["trend_of"] = trend_of;
    memory_json["flat"] = memory_flat;
  } else {
    memory_json["trend"] = nullptr;
    memory_json["flat"] = nullptr;
    memory_json["note"] = rss_timeline.empty()
                              ? "no memory samples: the server's RSS is not readable (" +
                                    server_note + ")"
                              : "fewer than 4 memory samples after --warmup: run longer or lower "
                                "--sample-s";
  }
  if (json) {
    nlohmann::json out = {
        {"url", url},
        {"concurrency", n},
        {"duration_s", *duration},
        {"wall_s", wall_s},
        {"questions", questions.size()},
        {"questions_per_call", *per_call},
        {"calls",
         {{"started", calls_done},
          {"completed", calls_done - failed},
          {"failed", failed},
          {"connect_failed", connect_failures},
          {"peak_active", peak_active}}},
        {"turns", latencies.size()},
        {"missing_replies", missing_replies},
        {"latency_ms",
         {{"p50", NumberOrNull(p50)},
          {"p90", NumberOrNull(p90)},
          {"p95", NumberOrNull(p95)},
          {"p99", NumberOrNull(p99)},
          {"max", NumberOrNull(max)}}},
        {"latency_after_warmup_ms",
         {{"warmup_s", *warmup},
          {"turns", steady_latencies.size()},
          {"p50", NumberOrNull(testing::Percentile(steady_latencies, 50))},
          {"p90", NumberOrNull(testing::Percentile(steady_latencies, 90))},
          {"p99", NumberOrNull(testing::Percentile(steady_latencies, 99))}}},
        {"load_average_1m", {{"start", NumberOrNull(load_start)}, {"end", NumberOrNull(load_end)}}},
        {"generator_cpu_cores", own_cpu_cores},
    };
    nlohmann::json fail = nlohmann::json::array();
    for (const auto& f : failures) fail.push_back({{"call", f.call}, {"reason", f.reason}});
    out["failures"] = fail;
    if (tiers_note.empty()) {
      out["answers_by_tier"] = tiers;
      // The server's side: what answering added to endpointing, by tier (bucket-interpolated).
      nlohmann::json ae = nlohmann::json::object();
      for (const auto& [tier, h] : after_endpoint) {
        ae[tier] = {{"turns", h.count},
                    {"p50", NumberOrNull(1000 * h.Quantile(0.5).value_or(NAN))},
                    {"p99", NumberOrNull(1000 * h.Quantile(0.99).value_or(NAN))}};
      }
      out["after_endpoint_ms_by_tier"] = ae;
    } else {
      out["answers_by_tier"] = nullptr;
      out["answers_by_tier_note"] = tiers_note;
    }
    if (proc_before && proc_after) {
      const double cpu = (proc_after->cpu_s - proc_before->cpu_s) / wall_s;
      out["server"] = {{"pid", pid},
                       {"source", pid != 0 ? "proc" : "metrics"},
                       {"cpu_cores", cpu},
                       {"rss_mb_before", proc_before->rss_mb},
                       {"rss_mb_peak", peak_rss_mb},
                       {"rss_mb_after", proc_after->rss_mb},
                       {"rss_mb_per_call", (peak_rss_mb - proc_before->rss_mb) / n},
                       {"cpu_cores_per_call", cpu / n}};
    } else {
      out["server"] = nullptr;
      out["server_note"] = server_note;
    }
    out["memory"] = memory_json;
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf(
        "calls: %d placed, %d failed (%d could not connect), peak %d at once; wall %.0f s\n",
        calls_done, failed, connect_failures, peak_active, wall_s);
    std::printf("turns: %zu, missing replies %d\n", latencies.size(), missing_replies);
    std::printf(
        "voice-to-voice (end of speech -> first audible reply, as played): P50 %s  P90 %s  "
        "P95 %s  P99 %s  max %s\n",
        Ms(p50).c_str(), Ms(p90).c_str(), Ms(p95).c_str(), Ms(p99).c_str(), Ms(max).c_str());
    std::printf("  questions ending after the %.0f s warm-up (%zu turns): P50 %s  P90 %s  P99 %s\n",
                *warmup, steady_latencies.size(),
                Ms(testing::Percentile(steady_latencies, 50)).c_str(),
                Ms(testing::Percentile(steady_latencies, 90)).c_str(),
                Ms(testing::Percentile(steady_latencies, 99)).c_str());
    if (tiers_note.empty()) {
      std::printf("answers by tier (server /metrics delta):");
      for (const auto& [tier, count] : tiers) std::printf(" %s %.0f", tier.c_str(), count);
      std::printf("\n");
      if (!after_endpoint.empty()) {
        std::printf("end of turn -> first audio sent, server side by tier (P50 / P99):");
        for (const auto& [tier, h] : after_endpoint) {
          std::printf(" %s %s / %s (%.0f)", tier.c_str(),
                      Ms(1000 * h.Quantile(0.5).value_or(NAN)).c_str(),
                      Ms(1000 * h.Quantile(0.99).value_or(NAN)).c_str(), h.count);
        }
        std::printf("\n");
      }
    } else {
      std::printf("%s\n", tiers_note.c_str());
    }
    if (proc_before && proc_after) {
      const double cpu = (proc_after->cpu_s - proc_before->cpu_s) / wall_s;
      std::printf(
          "server (%s): CPU %.2f cores (%.3f per call); RSS %.0f MB before, %.0f MB "
          "peak, %.0f MB after (%.1f MB per concurrent call)\n",
          pid != 0 ? ("pid " + std::to_string(pid)).c_str() : "its /metrics", cpu, cpu / n, proc_before->rss_mb, peak_rss_mb, proc_after->rss_mb,
          (peak_rss_mb - proc_before->rss_mb) / n);
    } else {
      std::printf("%s\n", server_note.c_str());
    }
    if (trend) {
      std::printf(
          "memory (%s) after %.0f s (%d samples, %.0f..%.0f s): first quartile %.1f MB, last "
          "%.1f MB (%+.1f MB), slope %+.2f MB/min (later half %+.2f): %s (bound %.2f "
          "MB/min)\n",
          trend_of, *warmup, trend->samples, trend->window_start_s, trend->window_end_s,
          trend->first_quartile_mb, trend->last_quartile_mb, trend->growth_mb,
          trend->slope_mb_per_min, trend->late_slope_mb_per_min,
          memory_flat ? "flat" : "GROWING", *rss_slope_max);
    } else {
      std::printf("memory trend: %s\n", memory_json["note"].get<std::string>().c_str());
    }
    std::printf("load average (1 min): %.2f at start, %.2f at end; the callers used %.2f cores\n",
                load_start, load_end, own_cpu_cores);
    for (size_t i = 0; i < failures.size() && i < 20; ++i) {
      std::printf("  call %d failed: %s\n", failures[i].call, failures[i].reason.c_str());
    }
    if (failures.size() > 20) std::printf("  ... and %zu more\n", failures.size() - 20);
  }
  if (failed != 0) return 3;
  if (enforce_rss_slope && !memory_flat) return 4;
  return 0;
}

const CommandRegistrar kBenchCalls({"bench calls",
                                    "load a running server with concurrent Twilio calls", kUsage,
                                    RunBenchCalls});

}  // namespace
}  // namespace hotline::cli
