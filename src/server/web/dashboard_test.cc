#include "server/web/dashboard.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "net/http_client.h"
#include "server/http_server.h"

namespace hotline::server {
namespace {

using json = nlohmann::json;

// A registry shaped like a serving process's: pipeline counters and histograms, one transport.
struct FakeProcess {
  MetricsRegistry r;
  Histogram& v2v =
      r.GetHistogram("hotline_pipeline_voice_to_voice_seconds", "v2v", LatencyBucketsSeconds());
  Histogram& asr = r.GetHistogram("hotline_pipeline_stage_seconds", "stage",
                                  LatencyBucketsSeconds(), {{"stage", "asr"}});
  Counter& turns = r.GetCounter("hotline_pipeline_turns_total", "turns");
  Counter& calls = r.GetCounter("hotline_pipeline_calls_total", "calls");
  Gauge& active = r.GetGauge("hotline_twilio_active_calls", "active");
  Counter& busy = r.GetCounter("hotline_twilio_over_capacity_total", "busy");
  Counter& Tier(const std::string& t) {
    return r.GetCounter("hotline_pipeline_answers_total", "tiers", {{"tier", t}});
  }
};

TEST(Dashboard, EmptyRegistryGivesNullFiguresNotErrors) {
  MetricsRegistry r;
  Dashboard d(r);
  auto doc = json::parse(d.Json());
  EXPECT_TRUE(doc["totals"].is_null());
  EXPECT_EQ(doc["series"]["t"].size(), 0u);
  d.Sample(1000);
  doc = json::parse(d.Json());
  EXPECT_EQ(doc["series"]["t"], json::array({1000}));
  EXPECT_TRUE(doc["series"]["v2v_p50_ms"][0].is_null());
  EXPECT_EQ(doc["series"]["active_calls"][0], 0);
  EXPECT_FALSE(doc["engine"].get<bool>());
  EXPECT_FALSE(doc["series"].contains("engine_queue_depth"));
  EXPECT_GT(doc["totals"]["rss_bytes"].get<double>(), 0);  // this process's, from /proc/self
}

TEST(Dashboard, PercentilesAndTiersDescribeTheWindowNotTheWholeLife) {
  FakeProcess p;
  DashboardOptions o;
  o.window_points = 3;
  Dashboard d(p.r, o);
  // Early turns were slow (3 s); they leave the window.
  for (int i = 0; i < 10; ++i) p.v2v.Observe(3.0);
  p.Tier("llm").Increment(10);
  d.Sample(1000);
  d.Sample(2000);
  d.Sample(3000);
  // Then fast turns (0.4 s), all from L1.
  for (int i = 0; i < 20; ++i) p.v2v.Observe(0.4);
  for (int i = 0; i < 20; ++i) p.asr.Observe(0.1);
  p.Tier("l1").Increment(20);
  p.r.GetCounter("hotline_answer_cache_rejects_total", "r",
                 {{"tier", "l2"}, {"reason", "meaning_guard"}})
      .Increment(2);
  p.r.GetCounter("hotline_answer_cache_rejects_total", "r",
                 {{"tier", "l1"}, {"reason", "low_confidence"}})
      .Increment(1);
  p.Tier("fallback").Increment(1);
  p.r.GetCounter("hotline_answer_llm_gated_total", "g", {{"reason", "low_intent_top_two"}})
      .Increment(1);
  p.turns.Increment(20);
  p.active.Set(3);
  p.busy.Increment(2);
  d.Sample(4000);

  auto doc = json::parse(d.Json());
  const auto& s = doc["series"];
  ASSERT_EQ(s["t"].size(), 4u);
  // The first point's window is itself: the slow turns.
  EXPECT_NEAR(s["v2v_p50_ms"][0].get<double>(), 3000, 600);
  // The last point's window starts at the first sample (3 points back): only the fast turns.
  EXPECT_LT(s["v2v_p99_ms"][3].get<double>(), 500);
  EXPECT_GT(s["v2v_p99_ms"][3].get<double>(), 300);
  EXPECT_NEAR(s["stage_asr_ms"][3].get<double>(), 100, 1e-6);
  EXPECT_TRUE(s["stage_answer_ms"][3].is_null());
  EXPECT_EQ(s["answers_l1"][3], 20);
  EXPECT_EQ(s["answers_llm"][3], 0);
  EXPECT_DOUBLE_EQ(s["cache_hit_rate"][3].get<double>(), 20.0 / 21.0);
  EXPECT_EQ(s["cache_rejects"][3], 3);
  EXPECT_EQ(s["cache_rejects"][2], 0);
  EXPECT_EQ(s["llm_gated"][3], 1);
  EXPECT_EQ(s["llm_gated"][2], 0);
  EXPECT_NEAR(s["turns_per_min"][3].get<double>(), 20 * 60000.0 / 3000, 1e-6);
  EXPECT_EQ(s["active_calls"][3], 3);
  // Totals are the whole life: 10 slow + 20 fast.
  const auto& t = doc["totals"];
  EXPECT_EQ(t["answers"]["l1"], 20);
  EXPECT_EQ(t["answers"]["llm"], 10);
  EXPECT_NEAR(t["cache_hit_rate"].get<double>(), 20.0 / 31.0, 1e-9);
  EXPECT_EQ(t["unanswered"], 1);
  EXPECT_EQ(t["rejects"]["l1"], 1);
  EXPECT_EQ(t["rejects"]["l2"], 2);
  EXPECT_EQ(t["llm_gated"], 1);
  EXPECT_GT(t["v2v_p99_ms"].get<double>(), 2000);
  EXPECT_EQ(t["over_capacity"], 2);
  EXPECT_EQ(t["turns"], 20);
  // Every column has one value per point.
  for (auto& [name, col] : s.items()) EXPECT_EQ(col.size(), 4u) << name;
}

TEST(Dashboard, SinceReturnsOnlyNewerPointsAndTheRingIsBounded) {
  FakeProcess p;
  DashboardOptions o;
  o.history_points = 5;
  Dashboard d(p.r, o, [] { return 7; });
  for (int i = 1; i <= 12; ++i) d.Sample(i * 1000);
  EXPECT_EQ(d.points(), 5u);
  auto all = json::parse(d.Json());
  EXPECT_EQ(all["series"]["t"], json::array({8000, 9000, 10000, 11000, 12000}));
  EXPECT_EQ(all["series"]["active_calls"][0], 7);  // from the callback, not the gauges
  auto newer = json::parse(d.Json(10000));
  EXPECT_EQ(newer["series"]["t"], json::array({11000, 12000}));
  EXPECT_EQ(newer["now_ms"], 12000);
  auto none = json::parse(d.Json(12000));
  EXPECT_EQ(none["series"]["t"].size(), 0u);
}

TEST(Dashboard, EngineFiguresAppearWhenAnEngineReportsThem) {
  FakeProcess p;
  p.r.GetGauge("hotline_engine_queue_depth", "q").Set(4);
  p.r.GetGauge("hotline_engine_running_sequences", "r").Set(6);
  p.r.GetGauge("hotline_engine_kv_blocks_in_use", "kv").Set(120);
  p.r.GetGauge("hotline_engine_kv_blocks_capacity", "kv").Set(512);
  Histogram& batch =
      p.r.GetHistogram("hotline_engine_batch_sequences", "b", PowersOfTwoBuckets(64));
  Dashboard d(p.r);
  d.Sample(1000);
  batch.Observe(4);
  batch.Observe(8);
  d.Sample(2000);
  auto doc = json::parse(d.Json());
  EXPECT_TRUE(doc["engine"].get<bool>());
  EXPECT_EQ(doc["series"]["engine_queue_depth"][1], 4);
  EXPECT_EQ(doc["series"]["engine_running"][1], 6);
  EXPECT_EQ(doc["series"]["engine_kv_blocks_in_use"][1], 120);
  EXPECT_DOUBLE_EQ(doc["series"]["engine_batch_mean"][1].get<double>(), 6.0);
  EXPECT_TRUE(doc["series"]["engine_batch_mean"][0].is_null());
  EXPECT_EQ(doc["totals"]["engine_kv_blocks_total"], 512);
}

TEST(Dashboard, ServedOverHttpWithSinceValidated) {
  FakeProcess p;
  Dashboard d(p.r);
  d.Sample(5000);
  d.Sample(6000);
  ServerConfig sc;
  sc.port = 0;
  auto server = HttpServer::Create(sc);
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE(d.Register(**server).ok());
  ASSERT_TRUE((*server)->Start().ok());
  net::HttpClient client;
  auto r = client.Send(net::HttpRequest::Get((*server)->Url("/api/dashboard?since=5000")));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(r->Header("Content-Type").find("application/json"), std::string::npos);
  EXPECT_EQ(r->Header("Cache-Control"), "no-store");
  EXPECT_EQ(json::parse(r->body)["series"]["t"], json::array({6000}));
  for (const char* bad : {"since=abc", "since=-1", "since=12x", "since=99999999999999999999"}) {
    auto b =
        client.Send(net::HttpRequest::Get((*server)->Url(std::string("/api/dashboard?") + bad)));
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->status, 400) << bad;
  }
  (*server)->Stop();
}

TEST(Dashboard, SamplerThreadFillsTheRing) {
  MetricsRegistry r;
  DashboardOptions o;
  o.interval_ms = 20;
  Dashboard d(r, o);
  d.Start();
  for (int i = 0; i < 200 && d.points() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  d.Stop();
  EXPECT_GE(d.points(), 3u);
  const size_t n = d.points();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(d.points(), n);  // stopped
}

}  // namespace
}  // namespace hotline::server
