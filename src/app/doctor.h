// Doctor: reads a running server's Prometheus text (/metrics) and names the usual troubles with
// the figures behind them and the setting to change. Used by `hotline doctor --url`.
//
//   ASSIGN_OR_RETURN(MetricSamples m, ParsePrometheusText(text));
//   DoctorReport r = Diagnose(m, DoctorOptions{});
//
// Troubles looked for (each needs enough samples to be more than noise, see DoctorOptions):
//   long_tail_latency    voice-to-voice P99 over the target, or P99 many times P50; names the
//                        stage whose P99 is largest and that stage's setting (endpointing: the
//                        endpointer's silences; answer: prompt length and max_seq_len; ...)
//   engine_queueing      LLM requests wait for the embedded engine (queue-wait P95) while most do
//                        not: uneven utilization; batching limits and the queue
//   low_cache_hit_rate   answers from the cache tiers (L1-L3) over all answers below the target;
//                        per-tier counts; thresholds and intent granularity
//   inbound_audio_dropped, pacer_stalls, over_capacity: the machine or the call cap is short
//   model_circuit_open   the openai backend's circuit breaker to the model pool is (or was) open
//
// Quantiles come from histogram buckets with linear interpolation inside a bucket (as
// Prometheus's histogram_quantile), so they are as coarse as the buckets.
//
// Thread-safety: pure functions over values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace hotline {

struct MetricSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct MetricSamples {
  std::vector<MetricSample> samples;

  // Sum of the samples named `name` whose labels include every pair of `match`.
  double Sum(std::string_view name, const std::map<std::string, std::string>& match = {}) const;
  // Values of label `label` among samples named `name` (sorted, unique).
  std::vector<std::string> LabelValues(std::string_view name, std::string_view label) const;
};

// Parses the Prometheus text format (what MetricsRegistry::ExposeText writes: `# HELP`/`# TYPE`
// lines, `name{k="v",...} value`). Bounded: at most 8 MiB and 200,000 samples; a malformed line
// is an InvalidArgument naming its number.
Result<MetricSamples> ParsePrometheusText(std::string_view text);

struct HistogramData {
  std::vector<std::pair<double, double>> buckets;  // (upper bound, cumulative count), +Inf last
  double count = 0;
  double sum = 0;
  // The q-quantile (0..1) in the histogram's unit; nullopt without observations.
  std::optional<double> Quantile(double q) const;
};
// The histogram `name` (its _bucket/_sum/_count series) over the samples whose labels include
// `match` (several label sets are added together); nullopt when absent.
std::optional<HistogramData> HistogramOf(const MetricSamples& m, std::string_view name,
                                         const std::map<std::string, std::string>& match = {});

struct DoctorOptions {
  double v2v_p99_target_s = 1.5;    // voice-to-voice P99 above this is a long tail
  double tail_ratio = 4.0;          // ... or P99 above this many times P50
  int min_turns = 20;               // turns before latency is judged
  double queue_p95_target_s = 0.1;  // engine queue wait P95 above this is queueing
  int min_llm_requests = 20;
  double cache_hit_target = 0.3;  // share of answers from L1-L3 below this is low
  int min_answers = 20;
};

struct Finding {
  std::string trouble;   // long_tail_latency, engine_queueing, low_cache_hit_rate, ...
  std::string summary;   // one line: what is wrong
  std::string figures;   // the numbers behind it
  std::string settings;  // what to change, and which way
};

struct DoctorReport {
  std::vector<Finding> findings;
  std::vector<std::string> figures;  // key figures whatever was found ("turns 42", ...)
};

DoctorReport Diagnose(const MetricSamples& m, const DoctorOptions& options = {});

// Human-readable report; JSON report ({"findings": [...], "figures": [...]}).
std::string FormatDoctorReport(const DoctorReport& report);
std::string DoctorReportJson(const DoctorReport& report);

}  // namespace hotline
