#include "app/bench_calls_parts.h"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "common/metrics.h"


namespace hotline::cli::bench_calls {

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


namespace {

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

}  // namespace

std::optional<ProcSample> ReadProc(long pid) {
  std::optional<ProcessStats> p = ReadProcessStats("/proc/" + std::to_string(pid));
  if (!p) return std::nullopt;
  return ProcSample{p->cpu_seconds, p->resident_bytes / (1024.0 * 1024.0), ReadRssAnonMb(pid)};
}

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

MemoryVerdict JudgeMemory(const std::vector<testing::RssSample>& timeline, double sample_s,
                          double warmup_s, double slope_max, const std::string& server_note) {
  MemoryVerdict v;
  // The verdict is on anonymous memory when known (a leak grows it; mapped model and voice files
  // add pages per mapping as recognizers and synthesizers are created, bounded by the calls),
  // else on the whole resident set. Both trends are reported.
  const std::optional<testing::RssTrend> trend_rss = testing::AnalyzeRssTrend(timeline, warmup_s);
  std::optional<testing::RssTrend> trend_anon;
  if (!timeline.empty() &&
      std::all_of(timeline.begin(), timeline.end(),
                  [](const testing::RssSample& r) { return std::isfinite(r.rss_anon_mb); })) {
    std::vector<testing::RssSample> anon = timeline;
    for (auto& r : anon) r.rss_mb = r.rss_anon_mb;
    trend_anon = testing::AnalyzeRssTrend(anon, warmup_s);
  }
  v.trend = trend_anon ? trend_anon : trend_rss;
  v.trend_of = trend_anon ? "rss_anon" : "rss";
  v.flat = v.trend.has_value() && v.trend->slope_mb_per_min <= slope_max;
  nlohmann::json& m = v.json;
  m = {{"sample_s", sample_s}, {"warmup_s", warmup_s}, {"rss_slope_max_mb_per_min", slope_max}};
  nlohmann::json timeline_json = nlohmann::json::array();
  for (const auto& r : timeline) {
    timeline_json.push_back({{"t_s", r.t_s},
                             {"rss_mb", r.rss_mb},
                             {"rss_anon_mb", NumberOrNull(r.rss_anon_mb)},
                             {"active_calls", r.active_calls}});
  }
  m["timeline"] = timeline_json;
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
  m["trend_rss"] = trend_json(trend_rss);
  m["trend_rss_anon"] = trend_json(trend_anon);
  if (v.trend) {
    m["trend"] = trend_json(v.trend);
    m["trend_of"] = v.trend_of;
    m["flat"] = v.flat;
  } else {
    m["trend"] = nullptr;
    m["flat"] = nullptr;
    m["note"] = timeline.empty() ? "no memory samples: the server's RSS is not readable (" +
                                       server_note + ")"
                                 : "fewer than 4 memory samples after --warmup: run longer or "
                                   "lower --sample-s";
  }
  return v;
}

}  // namespace hotline::cli::bench_calls
