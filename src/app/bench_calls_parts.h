// `hotline bench calls` (cmd_bench_calls.cc): the target URL, the server's process and
// /metrics figures read before and after a run, and the server's memory over time. Internal to
// the command.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "app/doctor.h"
#include "common/status.h"
#include "net/http_client.h"
#include "server/testing/call_load.h"

namespace hotline::cli::bench_calls {

namespace testing = server::testing;

struct WsUrl {
  std::string host;
  int port = 80;
  std::string path = "/twilio";
};

// ws://HOST[:PORT][/PATH]; wss:// and IPv6 literals are refused with a message saying so.
Result<WsUrl> ParseWsUrl(const std::string& url);

// The server's process figures (from /proc/PID on this machine, or from its /metrics).
struct ProcSample {
  double cpu_s = 0;  // user + system
  double rss_mb = 0;
  double rss_anon_mb = NAN;  // anonymous part of rss_mb (from /proc only)
};

std::optional<ProcSample> ReadProc(long pid);
// CPU seconds this process (the callers) has used.
double OwnCpuSeconds();
double LoadAverage1m();

// What the bench reads from the server's /metrics.
struct ServerMetrics {
  std::map<std::string, double> tiers;  // answers by tier
  std::optional<ProcSample> proc;       // the server's hotline_process_* gauges, when it has them
  // hotline_pipeline_after_endpoint_seconds by tier: end of the caller's turn -> first audio sent.
  std::map<std::string, HistogramData> after_endpoint;
};

// `after` minus `before` (the same histogram read twice); `after` alone when the bounds differ
// or `before` is absent (the tier had no turns yet).
HistogramData HistogramDelta(const HistogramData& after, const HistogramData* before);

// The server's /metrics; error when it cannot be read.
Result<ServerMetrics> ReadServerMetrics(net::HttpClient& http, const std::string& metrics_url);

// What a run changed on the server: answers and after-endpoint times by tier (the /metrics
// difference), and its process figures at the end.
struct ServerDelta {
  std::map<std::string, double> tiers;
  std::map<std::string, HistogramData> after_endpoint;  // this run's turns, by tier
  std::optional<ProcSample> proc_after;
  std::string tiers_note;   // why the per-tier figures are missing; empty when present
  std::string server_note;  // why the process figures are missing
};

// The server's memory over the run (`timeline`, one sample per --sample-s) judged from
// `warmup_s` on: the trend of its anonymous memory when every sample has it, else of its
// resident set; flat when the slope is within `slope_max` MiB per minute.
struct MemoryVerdict {
  std::optional<testing::RssTrend> trend;  // the one judged (null: too few samples)
  const char* trend_of = "rss";
  bool flat = false;
  nlohmann::json json;  // the report's "memory" object
};
MemoryVerdict JudgeMemory(const std::vector<testing::RssSample>& timeline, double sample_s,
                          double warmup_s, double slope_max, const std::string& server_note);

std::string Ms(double v);  // "123 ms", "-" for NaN
nlohmann::json NumberOrNull(double v);

}  // namespace hotline::cli::bench_calls
