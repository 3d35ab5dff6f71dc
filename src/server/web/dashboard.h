// Dashboard: the live figures behind `/dashboard`, sampled from a MetricsRegistry once a second
// into a ring (10 minutes by default), served as JSON at `/api/dashboard`.
//
//   Dashboard dash(MetricsRegistry::Global(), {}, [registry] { return registry->active(); });
//   dash.Register(*server);   // GET /api/dashboard[?since=<unix ms>]
//   dash.Start();             // the sampler thread
//
// The ring is kept server-side so a page opened now shows the last ten minutes at once. Each point
// holds: calls in progress; voice-to-voice P50/P95/P99 and each stage's mean over the last
// `window_points` samples (from the histograms' bucket deltas, so a point describes recent turns,
// not the process's whole life); answers per tier over the same window and the share the caches
// (L1-L3) answered, and the candidates the caches refused as unsafe (the intent classifier under
// its threshold, the L2 meaning guard); the engine's batch size (mean sequences per forward pass), queue depth,
// running sequences and KV blocks in use when an engine reports them; the process's CPU cores and
// resident memory. "totals" has the process-lifetime figures for the big numbers.
//
// JSON (docs/operations.md#live-dashboard): {"interval_ms","window_s","now_ms","engine":bool,
// "totals":{...},"series":{"t":[unix ms...],"active_calls":[...],...}} — columns of equal length,
// oldest first; `since` returns only the points after that time (the page polls incrementally).
// Unknown figures are null.
//
// Thread-safety: Sample and Json may be called from any thread (one mutex, held while copying,
// never across I/O). Start/Stop from the owner's thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/metrics.h"
#include "common/status.h"

namespace hotline::server {

class HttpServer;

struct DashboardOptions {
  int interval_ms = 1000;    // sampling period
  int history_points = 600;  // ring size: 10 minutes at 1 s
  int window_points = 60;    // percentiles, means and tier counts over this many samples
};

class Dashboard {
 public:
  // `registry` must outlive the dashboard. `active_calls`: calls in progress (the CallRegistry's
  // count); null: the sum of the transports' *_active_calls gauges.
  Dashboard(MetricsRegistry& registry, DashboardOptions options = {},
            std::function<int()> active_calls = nullptr);
  ~Dashboard();
  Dashboard(const Dashboard&) = delete;
  Dashboard& operator=(const Dashboard&) = delete;

  // GET /api/dashboard on `server` (before its Start()). The dashboard must outlive the server's
  // handlers (stop the server first).
  Status Register(HttpServer& server);

  // Samples every interval_ms on a thread of its own until Stop().
  void Start();
  void Stop();

  // Takes one point stamped `unix_ms` now (the sampler's step; tests call it directly).
  void Sample(int64_t unix_ms);
  // The JSON document; points with t > since_unix_ms (<= 0: every point).
  std::string Json(int64_t since_unix_ms = 0) const;
  size_t points() const;

  // The fixed tier order of the JSON (answer::TierName values).
  static const std::vector<std::string>& Tiers();
  static const std::vector<std::string>& Stages();

  struct Raw;
  struct Point;

 private:
  MetricsRegistry& registry_;
  const DashboardOptions options_;
  std::function<int()> active_calls_;

  mutable std::mutex mu_;
  std::vector<Point> ring_;  // guarded by mu_; a circular buffer of history_points
  size_t ring_start_ = 0;    // guarded by mu_; the oldest point once the ring is full

  std::mutex run_mu_;
  std::condition_variable run_cv_;
  bool running_ = false;  // guarded by run_mu_
  std::thread sampler_;
};

}  // namespace hotline::server
