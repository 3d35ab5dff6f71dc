#include "common/metrics.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

namespace hotline {
namespace {

TEST(Metrics, ExposesPrometheusText) {
  MetricsRegistry r;
  r.GetCounter("hotline_calls_total", "Calls answered").Increment(3);
  r.GetCounter("hotline_cache_hits_total", "Answers served from cache", {{"tier", "l1"}})
      .Increment();
  r.GetCounter("hotline_cache_hits_total", "Answers served from cache", {{"tier", "l3"}})
      .Increment(2);
  r.GetGauge("hotline_active_calls", "Calls in progress").Set(7);
  Histogram& h = r.GetHistogram("hotline_voice_to_voice_seconds", "Speech end to first audio",
                                {0.1, 0.5, 1.0});
  h.Observe(0.05);
  h.Observe(0.3);
  h.Observe(2.0);
  std::string text = r.ExposeText();
  EXPECT_NE(text.find("# HELP hotline_calls_total Calls answered\n# TYPE hotline_calls_total "
                      "counter\nhotline_calls_total 3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("hotline_cache_hits_total{tier=\"l1\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("hotline_cache_hits_total{tier=\"l3\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("hotline_active_calls 7\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE hotline_voice_to_voice_seconds histogram\n"), std::string::npos);
  EXPECT_NE(text.find("hotline_voice_to_voice_seconds_bucket{le=\"0.1\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("hotline_voice_to_voice_seconds_bucket{le=\"0.5\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("hotline_voice_to_voice_seconds_bucket{le=\"1\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("hotline_voice_to_voice_seconds_bucket{le=\"+Inf\"} 3\n"), std::string::npos);
  EXPECT_NE(text.find("hotline_voice_to_voice_seconds_sum 2.35\n"), std::string::npos) << text;
  EXPECT_NE(text.find("hotline_voice_to_voice_seconds_count 3\n"), std::string::npos);
}

TEST(Metrics, EscapesLabelValues) {
  MetricsRegistry r;
  r.GetCounter("x_total", "x", {{"reason", "bad \"json\"\n\\"}}).Increment();
  EXPECT_NE(r.ExposeText().find("x_total{reason=\"bad \\\"json\\\"\\n\\\\\"} 1"), std::string::npos)
      << r.ExposeText();
}

TEST(Metrics, SameNameAndLabelsIsTheSameMetric) {
  MetricsRegistry r;
  Counter& a = r.GetCounter("c_total", "c", {{"k", "v"}});
  Counter& b = r.GetCounter("c_total", "c", {{"k", "v"}});
  EXPECT_EQ(&a, &b);
}

TEST(Metrics, ConcurrentIncrementsAreNotLost) {
  MetricsRegistry r;
  Counter& c = r.GetCounter("c_total", "c");
  Histogram& h = r.GetHistogram("h_seconds", "h", LatencyBucketsSeconds());
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.Increment();
        h.Observe(0.002);
      }
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(c.value(), 40000u);
  auto s = h.Snap();
  EXPECT_EQ(s.count, 40000u);
  EXPECT_NEAR(s.sum, 80.0, 1e-6);
}

TEST(Histogram, QuantileInterpolatesInsideBuckets) {
  Histogram h({1, 2, 4});
  for (int i = 0; i < 100; ++i) h.Observe(1.5);  // all in (1, 2]
  auto s = h.Snap();
  EXPECT_NEAR(s.Quantile(0.5), 1.5, 1e-9);
  EXPECT_NEAR(s.Quantile(1.0), 2.0, 1e-9);
  EXPECT_TRUE(std::isnan(Histogram({1}).Snap().Quantile(0.5)));
}

TEST(PercentileSummary, NearestRank) {
  PercentileSummary p;
  for (int i = 100; i >= 1; --i) p.Add(i);
  EXPECT_EQ(p.P50(), 50);
  EXPECT_EQ(p.P95(), 95);
  EXPECT_EQ(p.P99(), 99);
  EXPECT_EQ(p.Max(), 100);
  EXPECT_DOUBLE_EQ(p.Mean(), 50.5);
  p.Add(1000);
  EXPECT_EQ(p.Max(), 1000);
  EXPECT_TRUE(std::isnan(PercentileSummary().P50()));
}

TEST(ProcessMetrics, ReadsThisProcessFromProc) {
  MetricsRegistry r;
  RefreshProcessMetrics(r);
  EXPECT_GT(r.GetGauge("hotline_process_resident_memory_bytes", "").value(), 1e5);
  EXPECT_GE(r.GetGauge("hotline_process_threads", "").value(), 1.0);
  EXPECT_GE(r.GetGauge("hotline_process_open_fds", "").value(), 3.0);
  // Burning CPU shows up in the next refresh (clock ticks are 10 ms: burn well over that).
  const double before = r.GetGauge("hotline_process_cpu_seconds", "").value();
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
  volatile double x = 0;
  while (std::chrono::steady_clock::now() < until) x = x + 1.0;
  RefreshProcessMetrics(r);
  EXPECT_GT(r.GetGauge("hotline_process_cpu_seconds", "").value(), before);
}

TEST(ProcessMetrics, AMissingProcessHasNoFigures) {
  EXPECT_FALSE(ReadProcessStats("/proc/does-not-exist").has_value());
  auto self = ReadProcessStats("/proc/self");
  ASSERT_TRUE(self.has_value());
  EXPECT_GT(self->resident_bytes, 1e5);
}

}  // namespace
}  // namespace hotline

namespace hotline {
namespace {

TEST(Metrics, CollectReadsEverySeriesUnderAPrefix) {
  MetricsRegistry r;
  r.GetCounter("hotline_a_total", "a", {{"tier", "l1"}}).Increment(3);
  r.GetCounter("hotline_a_total", "a", {{"tier", "kb"}}).Increment(1);
  r.GetGauge("hotline_b", "b").Set(2.5);
  r.GetHistogram("hotline_c_seconds", "c", {0.1, 1.0}).Observe(0.5);
  r.GetGauge("other_d", "d").Set(7);

  auto all = r.Collect();
  EXPECT_EQ(all.size(), 5u);
  auto mine = r.Collect("hotline_");
  ASSERT_EQ(mine.size(), 4u);
  EXPECT_EQ(mine[0].name, "hotline_a_total");
  EXPECT_EQ(mine[0].kind, CollectedMetric::Kind::kCounter);
  EXPECT_EQ(mine[0].labels, (Labels{{"tier", "kb"}}));
  EXPECT_EQ(mine[0].value, 1);
  EXPECT_EQ(mine[1].value, 3);
  EXPECT_EQ(mine[2].kind, CollectedMetric::Kind::kGauge);
  EXPECT_EQ(mine[2].value, 2.5);
  EXPECT_EQ(mine[3].kind, CollectedMetric::Kind::kHistogram);
  EXPECT_EQ(mine[3].histogram.count, 1u);
  EXPECT_EQ(mine[3].histogram.cumulative_counts, (std::vector<uint64_t>{0, 1, 1}));
  EXPECT_TRUE(r.Collect("nothing_").empty());
}

}  // namespace
}  // namespace hotline
