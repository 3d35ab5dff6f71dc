#include "common/metrics.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace hotline {

namespace {

void AtomicAdd(std::atomic<double>& a, double d) {
  double cur = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(cur, cur + d, std::memory_order_relaxed)) {
  }
}

std::string FormatNumber(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  // Shorter form when it round-trips.
  char shorter[64];
  std::snprintf(shorter, sizeof shorter, "%g", v);
  if (std::strtod(shorter, nullptr) == v) return shorter;
  return buf;
}

std::string EscapeLabelValue(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string EscapeHelp(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string LabelText(const Labels& labels, const std::pair<std::string, std::string>* extra) {
  if (labels.empty() && extra == nullptr) return "";
  std::string out = "{";
  bool first = true;
  auto add = [&](const std::string& k, const std::string& v) {
    if (!first) out += ",";
    first = false;
    out += k + "=\"" + EscapeLabelValue(v) + "\"";
  };
  for (const auto& [k, v] : labels) add(k, v);
  if (extra) add(extra->first, extra->second);
  out += "}";
  return out;
}

}  // namespace

void Gauge::Add(double d) { AtomicAdd(value_, d); }

Histogram::Histogram(std::vector<double> upper_bounds) : bounds_(std::move(upper_bounds)) {
  std::sort(bounds_.begin(), bounds_.end());
  bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
  buckets_ = std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1);
  for (size_t i = 0; i <= bounds_.size(); ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

void Histogram::Observe(double v) {
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(sum_, v);
  count_.fetch_add(1, std::memory_order_relaxed);
}

Histogram::Snapshot Histogram::Snap() const {
  Snapshot s;
  s.upper_bounds = bounds_;
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative_counts.push_back(running);
  }
  s.sum = sum_.load(std::memory_order_relaxed);
  s.count = running;  // consistent with the buckets even while others observe
  return s;
}

double Histogram::Snapshot::Quantile(double q) const {
  if (count == 0 || cumulative_counts.empty()) return std::numeric_limits<double>::quiet_NaN();
  double rank = q * static_cast<double>(count);
  for (size_t i = 0; i < cumulative_counts.size(); ++i) {
    if (static_cast<double>(cumulative_counts[i]) >= rank) {
      if (i == upper_bounds.size()) {  // +Inf bucket: best we can say is the last bound
        return upper_bounds.empty() ? std::numeric_limits<double>::quiet_NaN() : upper_bounds.back();
      }
      double lo = i == 0 ? 0.0 : upper_bounds[i - 1];
      double hi = upper_bounds[i];
      uint64_t below = i == 0 ? 0 : cumulative_counts[i - 1];
      uint64_t in_bucket = cumulative_counts[i] - below;
      if (in_bucket == 0) return hi;
      return lo + (hi - lo) * (rank - static_cast<double>(below)) / static_cast<double>(in_bucket);
    }
  }
  return upper_bounds.empty() ? std::numeric_limits<double>::quiet_NaN() : upper_bounds.back();
}

std::vector<double> LatencyBucketsSeconds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4,
          0.5,   0.75,   1.0,   1.5,  2.0,   3.0,  5.0,   10.0};
}

std::vector<double> PowersOfTwoBuckets(double max) {
  std::vector<double> out;
  for (double b = 1; b <= max; b *= 2) out.push_back(b);
  return out;
}

MetricsRegistry& MetricsRegistry::Global() {
  static MetricsRegistry* r = new MetricsRegistry();
  return *r;
}

MetricsRegistry::Family& MetricsRegistry::FamilyFor(std::string_view name, std::string_view help,
                                                    Kind kind) {
  auto it = families_.find(name);
  if (it == families_.end()) {
    Family f;
    f.kind = kind;
    f.help = std::string(help);
    it = families_.emplace(std::string(name), std::move(f)).first;
  }
  return it->second;
}

Counter& MetricsRegistry::GetCounter(std::string_view name, std::string_view help,
                                     const Labels& labels) {
  std::lock_guard lock(mu_);
  Family& f = FamilyFor(name, help, Kind::kCounter);
  auto& slot = f.counters[labels];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Gauge& MetricsRegistry::GetGauge(std::string_view name, std::string_view help,
                                 const Labels& labels) {
  std::lock_guard lock(mu_);
  Family& f = FamilyFor(name, help, Kind::kGauge);
  auto& slot = f.gauges[labels];
  if (!slot) slot = std::make_unique<Gauge>();
  return *slot;
}

Histogram& MetricsRegistry::GetHistogram(std::string_view name, std::string_view help,
                                         std::vector<double> bounds, const Labels& labels) {
  std::lock_guard lock(mu_);
  Family& f = FamilyFor(name, help, Kind::kHistogram);
  if (f.bounds.empty()) f.bounds = std::move(bounds);
  auto& slot = f.histograms[labels];
  if (!slot) slot = std::make_unique<Histogram>(f.bounds);
  return *slot;
}

std::string MetricsRegistry::ExposeText() const {
  std::lock_guard lock(mu_);
  std::ostringstream out;
  for (const auto& [name, f] : families_) {
    out << "# HELP " << name << " " << EscapeHelp(f.help) << "\n";
    switch (f.kind) {
      case Kind::kCounter:
        out << "# TYPE " << name << " counter\n";
        for (const auto& [labels, c] : f.counters) {
          out << name << LabelText(labels, nullptr) << " " << c->value() << "\n";
        }
        break;
      case Kind::kGauge:
        out << "# TYPE " << name << " gauge\n";
        for (const auto& [labels, g] : f.gauges) {
          out << name << LabelText(labels, nullptr) << " " << FormatNumber(g->value()) << "\n";
        }
        break;
      case Kind::kHistogram:
        out << "# TYPE " << name << " histogram\n";
        for (const auto& [labels, h] : f.histograms) {
          Histogram::Snapshot s = h->Snap();
          for (size_t i = 0; i <= s.upper_bounds.size(); ++i) {
            std::pair<std::string, std::string> le{
                "le", i == s.upper_bounds.size() ? "+Inf" : FormatNumber(s.upper_bounds[i])};
            out << name << "_bucket" << LabelText(labels, &le) << " " << s.cumulative_counts[i]
                << "\n";
          }
          out << name << "_sum" << LabelText(labels, nullptr) << " " << FormatNumber(s.sum) << "\n";
          out << name << "_count" << LabelText(labels, nullptr) << " " << s.count << "\n";
        }
        break;
    }
  }
  return out.str();
}

std::vector<CollectedMetric> MetricsRegistry::Collect(std::string_view prefix) const {
  std::vector<CollectedMetric> out;
  std::lock_guard lock(mu_);
  for (auto it = families_.lower_bound(prefix);
       it != families_.end() && std::string_view(it->first).substr(0, prefix.size()) == prefix;
       ++it) {
    // Not a structured binding: clang 14 cannot capture one in the lambda below.
    const std::string& name = it->first;
    const auto& f = it->second;
    auto add = [&](CollectedMetric::Kind kind, const Labels& labels) -> CollectedMetric& {
      CollectedMetric& s = out.emplace_back();
      s.name = name;
      s.kind = kind;
      s.labels = labels;
      return s;
    };
    switch (f.kind) {
      case Kind::kCounter:
        for (const auto& [labels, c] : f.counters) {
          add(CollectedMetric::Kind::kCounter, labels).value = static_cast<double>(c->value());
        }
        break;
      case Kind::kGauge:
        for (const auto& [labels, g] : f.gauges) {
          add(CollectedMetric::Kind::kGauge, labels).value = g->value();
        }
        break;
      case Kind::kHistogram:
        for (const auto& [labels, h] : f.histograms) {
          add(CollectedMetric::Kind::kHistogram, labels).histogram = h->Snap();
        }
        break;
    }
  }
  return out;
}

double PercentileSummary::Percentile(double p) const {
  if (samples_.empty()) return std::numeric_limits<double>::quiet_NaN();
  if (!sorted_ || sorted_size_ != samples_.size()) {
    std::sort(samples_.begin(), samples_.end());
    sorted_ = true;
    sorted_size_ = samples_.size();
  }
  p = std::clamp(p, 0.0, 100.0);
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(samples_.size())));
  if (rank == 0) rank = 1;
  return samples_[rank - 1];
}

double PercentileSummary::Mean() const {
  if (samples_.empty()) return std::numeric_limits<double>::quiet_NaN();
  return std::accumulate(samples_.begin(), samples_.end(), 0.0) /
         static_cast<double>(samples_.size());
}

std::string PercentileSummary::ToString(std::string_view unit) const {
  char buf[256];
  std::snprintf(buf, sizeof buf, "n=%zu p50=%.3f p95=%.3f p99=%.3f max=%.3f %.*s", count(), P50(),
                P95(), P99(), Max(), static_cast<int>(unit.size()), unit.data());
  return buf;
}

std::optional<ProcessStats> ReadProcessStats(const std::string& proc_dir) {
  // <dir>/stat: "pid (comm) state ..."; the name may hold spaces, so fields are counted after
  // the last ')': utime and stime are the 12th and 13th, num_threads the 18th (clock ticks).
  std::ifstream stat(proc_dir + "/stat");
  std::string line;
  if (!stat || !std::getline(stat, line)) return std::nullopt;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 1));
  std::vector<std::string> f;
  for (std::string x; f.size() < 18 && fields >> x;) f.push_back(x);
  if (f.size() < 18) return std::nullopt;
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  std::ifstream statm(proc_dir + "/statm");
  double size_pages = 0, resident_pages = 0;
  if (ticks <= 0 || !(statm >> size_pages >> resident_pages)) return std::nullopt;
  ProcessStats p;
  p.cpu_seconds = (std::strtod(f[11].c_str(), nullptr) + std::strtod(f[12].c_str(), nullptr)) / ticks;
  p.threads = std::strtod(f[17].c_str(), nullptr);
  p.resident_bytes = resident_pages * static_cast<double>(::sysconf(_SC_PAGESIZE));
  return p;
}

void RefreshProcessMetrics(MetricsRegistry& registry) {
  if (std::optional<ProcessStats> p = ReadProcessStats("/proc/self")) {
    registry.GetGauge("hotline_process_cpu_seconds", "CPU time used by this process (user + system), seconds")
        .Set(p->cpu_seconds);
    registry.GetGauge("hotline_process_threads", "Threads of this process").Set(p->threads);
    registry.GetGauge("hotline_process_resident_memory_bytes", "Resident memory of this process, bytes")
        .Set(p->resident_bytes);
  }
  std::error_code ec;
  size_t fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++fds;
  }
  if (!ec) registry.GetGauge("hotline_process_open_fds", "Open file descriptors of this process").Set(double(fds));
}

}  // namespace hotline
