#include "server/web/dashboard.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "server/http_server.h"

namespace hotline::server {

namespace {

using json = nlohmann::json;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const char* const kStageNames[] = {"endpointing", "asr", "answer", "tts_first_audio"};
constexpr size_t kStageCount = 4;

double ValueOr(double v) { return std::isfinite(v) ? v : kNaN; }

}  // namespace

const std::vector<std::string>& Dashboard::Tiers() {
  static const std::vector<std::string> tiers = {"l1",   "l2",       "l3",       "kb",     "llm",
                                                 "tool", "identify", "fallback", "clarify"};
  return tiers;
}

namespace {

// Position of `name` in Dashboard::Tiers().
size_t TierIndex(std::string_view name) {
  const auto& tiers = Dashboard::Tiers();
  return static_cast<size_t>(std::find(tiers.begin(), tiers.end(), name) - tiers.begin());
}

}  // namespace

const std::vector<std::string>& Dashboard::Stages() {
  static const std::vector<std::string> stages(std::begin(kStageNames), std::end(kStageNames));
  return stages;
}

// What one sample read from the registry (cumulative figures; deltas give the window's).
struct Dashboard::Raw {
  int64_t t_ms = 0;
  double active_calls = 0;
  double calls = 0, turns = 0, barge_ins = 0, errors = 0, over_capacity = 0, transfers = 0;
  Histogram::Snapshot v2v;
  std::array<double, kStageCount> stage_sum{};
  std::array<uint64_t, kStageCount> stage_count{};
  std::vector<double> tiers;              // per Tiers()
  double rejects_l1 = 0, rejects_l2 = 0;  // cache candidates refused as unsafe
  double llm_gated = 0;                   // turns the LLM gate sent to the fallback
  bool engine = false;
  double queue_depth = kNaN, running = kNaN, kv_in_use = kNaN, kv_total = kNaN;
  double batch_sum = 0;
  uint64_t batch_count = 0;
  double cpu_seconds = kNaN, rss_bytes = kNaN;
};

// One point as served: Raw plus what is derived against the window's first sample.
struct Dashboard::Point {
  Raw raw;
  double v2v_p50 = kNaN, v2v_p95 = kNaN, v2v_p99 = kNaN;  // ms, over the window
  std::array<double, kStageCount> stage_mean_ms{};
  std::vector<double> tier_window;  // answers per tier in the window
  double rejects_window = kNaN;     // L1 + L2 refusals in the window
  double gated_window = kNaN;       // LLM gate blocks in the window
  double cache_hit_rate = kNaN;     // L1-L3 share of the window's answers
  double turns_per_min = kNaN;
  double batch_mean = kNaN;
  double cpu_cores = kNaN;
};

namespace {

// `now - before` per bucket, as a snapshot Quantile() can read. Empty when the buckets differ.
Histogram::Snapshot Delta(const Histogram::Snapshot& now, const Histogram::Snapshot* before) {
  Histogram::Snapshot d = now;
  if (before == nullptr) return d;
  if (before->upper_bounds != now.upper_bounds ||
      before->cumulative_counts.size() != now.cumulative_counts.size()) {
    return d;
  }
  for (size_t i = 0; i < d.cumulative_counts.size(); ++i) {
    d.cumulative_counts[i] -= std::min(d.cumulative_counts[i], before->cumulative_counts[i]);
  }
  d.count -= std::min(d.count, before->count);
  d.sum -= before->sum;
  return d;
}

const std::string* Label(const Labels& labels, std::string_view key) {
  for (const auto& [k, v] : labels) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Adds one collected metric to the sample; the transports' active-call gauges to
// `transport_active`.
void Accumulate(const CollectedMetric& s, Dashboard::Raw& r, double& transport_active) {
  const std::string& n = s.name;
  if (n == "hotline_pipeline_calls_total") {
    r.calls += s.value;
  } else if (n == "hotline_pipeline_turns_total") {
    r.turns += s.value;
  } else if (n == "hotline_pipeline_barge_ins_total") {
    r.barge_ins += s.value;
  } else if (n == "hotline_pipeline_errors_total") {
    r.errors += s.value;
  } else if (n == "hotline_pipeline_transfers_total") {
    r.transfers += s.value;
  } else if (EndsWith(n, "_over_capacity_total")) {
    r.over_capacity += s.value;
  } else if (EndsWith(n, "_active_calls") && s.kind == CollectedMetric::Kind::kGauge) {
    transport_active += s.value;
  } else if (n == "hotline_pipeline_voice_to_voice_seconds") {
    r.v2v = s.histogram;
  } else if (n == "hotline_pipeline_stage_seconds") {
    const std::string* stage = Label(s.labels, "stage");
    for (size_t i = 0; stage != nullptr && i < kStageCount; ++i) {
      if (*stage == kStageNames[i]) {
        r.stage_sum[i] = s.histogram.sum;
        r.stage_count[i] = s.histogram.count;
      }
    }
  } else if (n == "hotline_pipeline_answers_total") {
    const std::string* tier = Label(s.labels, "tier");
    const auto& tiers = Dashboard::Tiers();
    auto it = tier != nullptr ? std::find(tiers.begin(), tiers.end(), *tier) : tiers.end();
    if (it != tiers.end()) r.tiers[static_cast<size_t>(it - tiers.begin())] += s.value;
  } else if (n == "hotline_answer_cache_rejects_total") {
    const std::string* tier = Label(s.labels, "tier");
    if (tier != nullptr && *tier == "l1") r.rejects_l1 += s.value;
    if (tier != nullptr && *tier == "l2") r.rejects_l2 += s.value;
  } else if (n == "hotline_answer_llm_gated_total") {
    r.llm_gated += s.value;  // every reason
  } else if (n == "hotline_engine_queue_depth") {
    r.engine = true;
    r.queue_depth = s.value;
  } else if (n == "hotline_engine_running_sequences") {
    r.engine = true;
    r.running = s.value;
  } else if (n == "hotline_engine_kv_blocks_in_use") {
    r.engine = true;
    r.kv_in_use = s.value;
  } else if (n == "hotline_engine_kv_blocks_capacity") {
    r.engine = true;
    r.kv_total = s.value;
  } else if (n == "hotline_engine_batch_sequences") {
    r.engine = true;
    r.batch_sum = s.histogram.sum;
    r.batch_count = s.histogram.count;
  }
}

// The chart point of sample `r`: the window's figures against its first sample `base`, the CPU
// use against the sample before (`prev`); either may be null (no history yet).
Dashboard::Point PointOf(Dashboard::Raw r, const Dashboard::Raw* base, const Dashboard::Raw* prev) {
  Dashboard::Point p;
  Histogram::Snapshot v2v = Delta(r.v2v, base ? &base->v2v : nullptr);
  if (v2v.count > 0) {
    p.v2v_p50 = v2v.Quantile(0.50) * 1000;
    p.v2v_p95 = v2v.Quantile(0.95) * 1000;
    p.v2v_p99 = v2v.Quantile(0.99) * 1000;
  }
  for (size_t i = 0; i < kStageCount; ++i) {
    const uint64_t c =
        r.stage_count[i] - (base ? std::min(r.stage_count[i], base->stage_count[i]) : 0);
    const double s = r.stage_sum[i] - (base ? base->stage_sum[i] : 0);
    p.stage_mean_ms[i] = c > 0 ? s / static_cast<double>(c) * 1000 : kNaN;
  }
  p.tier_window.resize(r.tiers.size());
  double answers = 0, cached = 0;
  const size_t clarify = TierIndex("clarify");
  for (size_t i = 0; i < r.tiers.size(); ++i) {
    p.tier_window[i] = std::max(0.0, r.tiers[i] - (base ? base->tiers[i] : 0));
    if (i != clarify) answers += p.tier_window[i];  // a question back is no answer
    if (i < 3) cached += p.tier_window[i];          // l1, l2, l3
  }
  if (answers > 0) p.cache_hit_rate = cached / answers;
  p.rejects_window =
      std::max(0.0, r.rejects_l1 + r.rejects_l2 - (base ? base->rejects_l1 + base->rejects_l2 : 0));
  p.gated_window = std::max(0.0, r.llm_gated - (base ? base->llm_gated : 0));
  if (base != nullptr && r.t_ms > base->t_ms) {
    p.turns_per_min = (r.turns - base->turns) * 60000.0 / static_cast<double>(r.t_ms - base->t_ms);
  }
  const uint64_t steps = r.batch_count - (base ? std::min(r.batch_count, base->batch_count) : 0);
  if (steps > 0) {
    p.batch_mean = (r.batch_sum - (base ? base->batch_sum : 0)) / static_cast<double>(steps);
  }
  if (prev != nullptr && r.t_ms > prev->t_ms && std::isfinite(r.cpu_seconds) &&
      std::isfinite(prev->cpu_seconds)) {
    p.cpu_cores =
        (r.cpu_seconds - prev->cpu_seconds) * 1000.0 / static_cast<double>(r.t_ms - prev->t_ms);
  }
  p.raw = std::move(r);
  return p;
}

}  // namespace

Dashboard::Dashboard(MetricsRegistry& registry, DashboardOptions options,
                     std::function<int()> active_calls)
    : registry_(registry), options_(options), active_calls_(std::move(active_calls)) {}

Dashboard::~Dashboard() { Stop(); }

void Dashboard::Sample(int64_t unix_ms) {
  Raw r;
  r.t_ms = unix_ms;
  r.tiers.assign(Tiers().size(), 0);
  double transport_active = 0;
  for (const CollectedMetric& s : registry_.Collect("hotline_")) {
    Accumulate(s, r, transport_active);
  }
  r.active_calls = active_calls_ ? active_calls_() : transport_active;
  if (auto ps = ReadProcessStats("/proc/self")) {
    r.cpu_seconds = ps->cpu_seconds;
    r.rss_bytes = ps->resident_bytes;
  }

  std::lock_guard lock(mu_);
  const size_t cap = static_cast<size_t>(std::max(2, options_.history_points));
  const size_t n = ring_.size();
  auto at = [&](size_t i) -> const Point& { return ring_[(ring_start_ + i) % ring_.size()]; };
  // The window's first sample: window_points back (or the oldest there is).
  const size_t back = static_cast<size_t>(std::max(1, options_.window_points));
  const Raw* base = n == 0 ? nullptr : &at(n >= back ? n - back : 0).raw;
  const Raw* prev = n == 0 ? nullptr : &at(n - 1).raw;
  Point p = PointOf(std::move(r), base, prev);
  if (ring_.size() < cap) {
    ring_.push_back(std::move(p));
  } else {
    ring_[ring_start_] = std::move(p);
    ring_start_ = (ring_start_ + 1) % ring_.size();
  }
}

size_t Dashboard::points() const {
  std::lock_guard lock(mu_);
  return ring_.size();
}

std::string Dashboard::Json(int64_t since_unix_ms) const {
  std::vector<Point> pts;
  {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < ring_.size(); ++i) {
      const Point& p = ring_[(ring_start_ + i) % ring_.size()];
      if (p.raw.t_ms > since_unix_ms) pts.push_back(p);
    }
  }
  json doc;
  doc["interval_ms"] = options_.interval_ms;
  doc["window_s"] = options_.window_points * options_.interval_ms / 1000.0;
  doc["history_s"] = options_.history_points * options_.interval_ms / 1000.0;
  doc["now_ms"] = pts.empty() ? since_unix_ms : pts.back().raw.t_ms;
  doc["tiers"] = Tiers();
  doc["stages"] = Stages();

  // Totals: the latest point's process-lifetime figures (recomputed when `since` filtered all
  // points out would cost a sample; the page keeps the last totals it saw instead).
  bool engine = false;
  for (const Point& p : pts) engine = engine || p.raw.engine;
  doc["engine"] = engine;
  if (!pts.empty()) {
    const Raw& r = pts.back().raw;
    json totals;
    totals["active_calls"] = r.active_calls;
    totals["calls"] = r.calls;
    totals["turns"] = r.turns;
    totals["barge_ins"] = r.barge_ins;
    totals["errors"] = r.errors;
    totals["transfers"] = r.transfers;
    totals["over_capacity"] = r.over_capacity;
    totals["v2v_p50_ms"] = r.v2v.count > 0 ? r.v2v.Quantile(0.50) * 1000 : kNaN;
    totals["v2v_p95_ms"] = r.v2v.count > 0 ? r.v2v.Quantile(0.95) * 1000 : kNaN;
    totals["v2v_p99_ms"] = r.v2v.count > 0 ? r.v2v.Quantile(0.99) * 1000 : kNaN;
    json tiers = json::object();
    double answers = 0, cached = 0;
    const size_t clarify = TierIndex("clarify");
    for (size_t i = 0; i < Tiers().size(); ++i) {
      tiers[Tiers()[i]] = r.tiers[i];
      if (i != clarify) answers += r.tiers[i];
      if (i < 3) cached += r.tiers[i];
    }
    totals["answers"] = tiers;
    totals["unanswered"] = r.tiers[TierIndex("fallback")];  // no tier could answer
    totals["rejects"] = {{"l1", r.rejects_l1}, {"l2", r.rejects_l2}};
    totals["llm_gated"] = r.llm_gated;
    totals["cache_hit_rate"] = answers > 0 ? cached / answers : kNaN;
    totals["rss_bytes"] = ValueOr(r.rss_bytes);
    if (engine) {
      totals["engine_kv_blocks_total"] = ValueOr(r.kv_total);
    }
    doc["totals"] = std::move(totals);
  } else {
    doc["totals"] = nullptr;
  }

  json series = json::object();
  auto column = [&](const char* name, auto get) {
    json col = json::array();
    for (const Point& p : pts) col.push_back(ValueOr(static_cast<double>(get(p))));
    series[name] = std::move(col);
  };
  {
    json t = json::array();
    for (const Point& p : pts) t.push_back(p.raw.t_ms);
    series["t"] = std::move(t);
  }
  column("active_calls", [](const Point& p) { return p.raw.active_calls; });
  column("v2v_p50_ms", [](const Point& p) { return p.v2v_p50; });
  column("v2v_p95_ms", [](const Point& p) { return p.v2v_p95; });
  column("v2v_p99_ms", [](const Point& p) { return p.v2v_p99; });
  for (size_t i = 0; i < kStageCount; ++i) {
    const std::string name = std::string("stage_") + kStageNames[i] + "_ms";
    column(name.c_str(), [i](const Point& p) { return p.stage_mean_ms[i]; });
  }
  for (size_t i = 0; i < Tiers().size(); ++i) {
    const std::string name = "answers_" + Tiers()[i];
    column(name.c_str(), [i](const Point& p) { return p.tier_window[i]; });
  }
  column("cache_hit_rate", [](const Point& p) { return p.cache_hit_rate; });
  column("cache_rejects", [](const Point& p) { return p.rejects_window; });
  column("llm_gated", [](const Point& p) { return p.gated_window; });
  column("turns_per_min", [](const Point& p) { return p.turns_per_min; });
  column("cpu_cores", [](const Point& p) { return p.cpu_cores; });
  column("rss_mb", [](const Point& p) { return p.raw.rss_bytes / (1024.0 * 1024.0); });
  if (engine) {
    column("engine_batch_mean", [](const Point& p) { return p.batch_mean; });
    column("engine_queue_depth", [](const Point& p) { return p.raw.queue_depth; });
    column("engine_running", [](const Point& p) { return p.raw.running; });
    column("engine_kv_blocks_in_use", [](const Point& p) { return p.raw.kv_in_use; });
  }
  doc["series"] = std::move(series);
  return doc.dump();
}

Status Dashboard::Register(HttpServer& server) {
  return server.Handle("GET", "/api/dashboard", [this](const Request& req, const CancelToken&) {
    int64_t since = 0;
    // The query is untrusted: only `since=<digits>` is read; anything else is a 400.
    std::string_view q = req.query;
    while (!q.empty()) {
      const size_t amp = q.find('&');
      std::string_view kv = q.substr(0, amp);
      q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
      if (kv.substr(0, 6) != "since=") continue;
      std::string_view v = kv.substr(6);
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), since);
      if (ec != std::errc() || end != v.data() + v.size() || v.size() > 16 || since < 0) {
        return Response::Json(
            400, R"json({"error":"since must be a non-negative integer (unix milliseconds)"})json");
      }
    }
    Response r = Response::Json(200, Json(since));
    r.headers.push_back({"Cache-Control", "no-store"});
    r.headers.push_back({"X-Content-Type-Options", "nosniff"});
    return r;
  });
}

void Dashboard::Start() {
  {
    std::lock_guard lock(run_mu_);
    if (running_) return;
    running_ = true;
  }
  sampler_ = std::thread([this] {
    using namespace std::chrono;
    const auto period = milliseconds(std::max(10, options_.interval_ms));
    auto next = steady_clock::now();
    std::unique_lock lock(run_mu_);
    while (running_) {
      lock.unlock();
      Sample(duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count());
      lock.lock();
      next += period;
      // A long stall (suspended process) restarts the schedule rather than catching up.
      if (next < steady_clock::now()) next = steady_clock::now() + period;
      run_cv_.wait_until(lock, next, [this] { return !running_; });
    }
  });
}

void Dashboard::Stop() {
  {
    std::lock_guard lock(run_mu_);
    running_ = false;
  }
  run_cv_.notify_all();
  if (sampler_.joinable()) sampler_.join();
}

}  // namespace hotline::server
