// Metrics: counters, gauges and fixed-bucket histograms with Prometheus text exposition, plus a
// percentile summary for benchmarks.
//
// Registration (GetCounter/GetGauge/GetHistogram) takes a lock and is meant for start-up or
// per-call set-up; the returned reference stays valid for the registry's lifetime. Updates
// (Increment/Set/Observe) are lock-free atomics, safe from any thread, and never allocate — so
// they may sit on hot paths (per frame, per token).
//
// Names follow Prometheus conventions: `hotline_<component>_<what>_<unit>`, counters end in
// `_total`, latencies are histograms in seconds.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hotline {

// Label pairs, e.g. {{"tier", "l1"}}. Order is kept as given; use the same order everywhere.
using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void Increment(uint64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  void Add(double d);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Histogram {
 public:
  // `upper_bounds` must be strictly increasing; +Inf is implicit.
  explicit Histogram(std::vector<double> upper_bounds);

  void Observe(double v);

  struct Snapshot {
    std::vector<double> upper_bounds;
    std::vector<uint64_t> cumulative_counts;  // one per bound, then +Inf
    double sum = 0;
    uint64_t count = 0;
    // Estimated quantile (0..1) by linear interpolation inside the bucket, like
    // Prometheus' histogram_quantile(). NaN when empty.
    double Quantile(double q) const;
  };
  Snapshot Snap() const;
  const std::vector<double>& upper_bounds() const { return bounds_; }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // bounds_.size() + 1 (last = +Inf)
  std::atomic<double> sum_{0.0};
  std::atomic<uint64_t> count_{0};
};

// Latency buckets in seconds from 1 ms to 10 s, dense where voice latencies live.
std::vector<double> LatencyBucketsSeconds();

// Buckets 1, 2, 4, ... up to `max` (batch sizes, queue depths).
std::vector<double> PowersOfTwoBuckets(double max);

// One series of a registry as Collect() reads it: a counter's or gauge's value, or a histogram's
// snapshot. For in-process readers (the dashboard) that would otherwise parse the text exposition.
struct CollectedMetric {
  enum class Kind { kCounter, kGauge, kHistogram };
  std::string name;
  Kind kind = Kind::kCounter;
  Labels labels;
  double value = 0;               // counters and gauges
  Histogram::Snapshot histogram;  // histograms
};

class MetricsRegistry {
 public:
  // The process-wide registry served at /metrics.
  static MetricsRegistry& Global();

  Counter& GetCounter(std::string_view name, std::string_view help, const Labels& labels = {});
  Gauge& GetGauge(std::string_view name, std::string_view help, const Labels& labels = {});
  // The buckets of the first registration of `name` win.
  Histogram& GetHistogram(std::string_view name, std::string_view help, std::vector<double> bounds,
                          const Labels& labels = {});

  // Prometheus text exposition format 0.0.4, families sorted by name.
  std::string ExposeText() const;

  // Every series of the families whose name starts with `prefix` ("" = all), families sorted by
  // name. Takes the registration lock for the copy; updates continue meanwhile.
  std::vector<CollectedMetric> Collect(std::string_view prefix = "") const;

 private:
  enum class Kind { kCounter, kGauge, kHistogram };
  struct Family {
    Kind kind;
    std::string help;
    std::vector<double> bounds;
    std::map<Labels, std::unique_ptr<Counter>> counters;
    std::map<Labels, std::unique_ptr<Gauge>> gauges;
    std::map<Labels, std::unique_ptr<Histogram>> histograms;
  };
  Family& FamilyFor(std::string_view name, std::string_view help, Kind kind);

  mutable std::mutex mu_;
  std::map<std::string, Family, std::less<>> families_;
};

// Exact percentiles over a set of samples, for benchmarks and reports (not for hot paths: it
// keeps every sample).
class PercentileSummary {
 public:
  void Add(double v) { samples_.push_back(v); }
  size_t count() const { return samples_.size(); }
  // Nearest-rank percentile, p in [0, 100]. NaN when empty.
  double Percentile(double p) const;
  double P50() const { return Percentile(50); }
  double P95() const { return Percentile(95); }
  double P99() const { return Percentile(99); }
  double Max() const { return Percentile(100); }
  double Mean() const;
  // "n=… p50=… p95=… p99=… max=… <unit>"
  std::string ToString(std::string_view unit) const;

 private:
  mutable std::vector<double> samples_;
  mutable bool sorted_ = false;
  mutable size_t sorted_size_ = 0;
};

// A process's figures from `proc_dir` ("/proc/self" or "/proc/<pid>"; Linux). nullopt when the
// process does not exist or the files do not parse.
struct ProcessStats {
  double cpu_seconds = 0;  // user + system
  double resident_bytes = 0;
  double threads = 0;
};
std::optional<ProcessStats> ReadProcessStats(const std::string& proc_dir);

// Sets this process's figures in `registry` from /proc/self (Linux; elsewhere nothing):
// hotline_process_cpu_seconds (user + system), hotline_process_resident_memory_bytes,
// hotline_process_threads, hotline_process_open_fds. Called by /metrics before each exposition.
void RefreshProcessMetrics(MetricsRegistry& registry);

}  // namespace hotline
