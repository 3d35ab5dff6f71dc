#include "app/doctor.h"

#include <gtest/gtest.h>

#include <string>

#include "common/metrics.h"

namespace hotline {
namespace {

bool Has(const DoctorReport& r, const std::string& trouble) {
  for (const auto& f : r.findings) {
    if (f.trouble == trouble) return true;
  }
  return false;
}

const Finding* Get(const DoctorReport& r, const std::string& trouble) {
  for (const auto& f : r.findings) {
    if (f.trouble == trouble) return &f;
  }
  return nullptr;
}

std::vector<double> Buckets() { return {0.1, 0.25, 0.5, 1.0, 2.0, 4.0}; }

TEST(Doctor, ParsesTheRegistrysOwnText) {
  MetricsRegistry reg;
  reg.GetCounter("x_total", "x", {{"tier", "l1"}}).Increment(3);
  reg.GetCounter("x_total", "x", {{"tier", "kb"}}).Increment(5);
  auto& h = reg.GetHistogram("h_seconds", "h", {0.1, 1.0});
  for (double v : {0.05, 0.05, 0.5, 2.0}) h.Observe(v);
  auto m = ParsePrometheusText(reg.ExposeText());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->Sum("x_total"), 8);
  EXPECT_EQ(m->Sum("x_total", {{"tier", "l1"}}), 3);
  auto hist = HistogramOf(*m, "h_seconds");
  ASSERT_TRUE(hist.has_value());
  EXPECT_EQ(hist->count, 4);
  EXPECT_NEAR(*hist->Quantile(0.5), 0.1, 1e-9);   // 2 of 4 at or below 0.1
  EXPECT_NEAR(*hist->Quantile(0.75), 1.0, 1e-9);  // the third in (0.1, 1]
  EXPECT_NEAR(*hist->Quantile(0.99), 1.0, 1e-9);  // +Inf bucket: the last finite bound
}

TEST(Doctor, RejectsMalformedText) {
  EXPECT_FALSE(ParsePrometheusText("good 1\n{oops} 2\n").ok());
  EXPECT_FALSE(ParsePrometheusText("m{a=\"unterminated} 1\n").ok());
  EXPECT_FALSE(ParsePrometheusText("m{a=b} 1\n").ok());
  auto s = ParsePrometheusText("m 1\nm notanumber\n");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("line 2"), std::string::npos);
  EXPECT_TRUE(
      ParsePrometheusText("# HELP m m\n# TYPE m counter\nm{a=\"x\\\"y\"} 1 1700000000\n").ok());
}

TEST(Doctor, HealthyServerHasNoFindings) {
  MetricsRegistry reg;
  auto& v2v = reg.GetHistogram("hotline_pipeline_voice_to_voice_seconds", "v", Buckets());
  for (int i = 0; i < 50; ++i) v2v.Observe(0.4 + 0.002 * i);
  reg.GetCounter("hotline_pipeline_answers_total", "a", {{"tier", "l1"}}).Increment(30);
  reg.GetCounter("hotline_pipeline_answers_total", "a", {{"tier", "kb"}}).Increment(20);
  auto m = ParsePrometheusText(reg.ExposeText());
  ASSERT_TRUE(m.ok());
  DoctorReport r = Diagnose(*m);
  EXPECT_TRUE(r.findings.empty()) << FormatDoctorReport(r);
  EXPECT_FALSE(r.figures.empty());
}

TEST(Doctor, NamesTheLongTailAndItsStage) {
  MetricsRegistry reg;
  auto& v2v = reg.GetHistogram("hotline_pipeline_voice_to_voice_seconds", "v", Buckets());
  auto& ep = reg.GetHistogram("hotline_pipeline_stage_seconds", "s", Buckets(),
                              {{"stage", "endpointing"}});
  auto& ans =
      reg.GetHistogram("hotline_pipeline_stage_seconds", "s", Buckets(), {{"stage", "answer"}});
  for (int i = 0; i < 40; ++i) {
    const bool tail = i % 10 == 0;
    v2v.Observe(tail ? 3.0 : 0.6);
    ans.Observe(tail ? 2.5 : 0.05);
    ep.Observe(0.3);
  }
  reg.GetCounter("hotline_llm_requests_total", "r").Increment(4);
  reg.GetCounter("hotline_llm_prompt_tokens_total", "p").Increment(4 * 1800);
  auto m = ParsePrometheusText(reg.ExposeText());
  ASSERT_TRUE(m.ok());
  DoctorReport r = Diagnose(*m);
  const Finding* f = Get(r, "long_tail_latency");
  ASSERT_NE(f, nullptr) << FormatDoctorReport(r);
  EXPECT_NE(f->settings.find("answer.kb.top_k"), std::string::npos) << f->settings;
  EXPECT_NE(f->settings.find("max_seq_len"), std::string::npos);
  EXPECT_NE(f->figures.find("1800 tokens"), std::string::npos) << f->figures;
  // Too few turns: not judged.
  DoctorOptions strict;
  strict.min_turns = 100;
  EXPECT_FALSE(Has(Diagnose(*m, strict), "long_tail_latency"));
}

TEST(Doctor, NamesEngineQueueingAndLowCacheHits) {
  MetricsRegistry reg;
  auto& q =
      reg.GetHistogram("hotline_llm_queue_seconds", "q",
                       {0.001, 0.01, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2}, {{"backend", "engine"}});
  for (int i = 0; i < 30; ++i) q.Observe(i % 5 == 0 ? 0.6 : 0.002);
  reg.GetCounter("hotline_pipeline_answers_total", "a", {{"tier", "kb"}}).Increment(40);
  reg.GetCounter("hotline_pipeline_answers_total", "a", {{"tier", "l3"}}).Increment(2);
  reg.GetCounter("hotline_audiosocket_over_capacity_total", "o").Increment(3);
  auto m = ParsePrometheusText(reg.ExposeText());
  ASSERT_TRUE(m.ok());
  DoctorReport r = Diagnose(*m);
  const Finding* queue = Get(r, "engine_queueing");
  ASSERT_NE(queue, nullptr) << FormatDoctorReport(r);
  EXPECT_NE(queue->settings.find("llm.engine.max_batch_size"), std::string::npos);
  EXPECT_NE(queue->settings.find("uneven"), std::string::npos);
  const Finding* cache = Get(r, "low_cache_hit_rate");
  ASSERT_NE(cache, nullptr);
  EXPECT_NE(cache->summary.find("5 %"), std::string::npos) << cache->summary;
  EXPECT_NE(cache->settings.find("answer.semantic_cache.similarity_threshold"), std::string::npos);
  EXPECT_TRUE(Has(r, "over_capacity"));
  EXPECT_NE(DoctorReportJson(r).find("\"engine_queueing\""), std::string::npos);
}

TEST(Doctor, NamesAnOpenCircuitToTheModelPool) {
  MetricsRegistry reg;
  const Labels openai = {{"backend", "openai"}};
  auto& open = reg.GetGauge("hotline_llm_breaker_open", "b", openai);
  auto& rejected = reg.GetCounter("hotline_llm_breaker_rejected_total", "r", openai);
  auto diagnose = [&] { return Diagnose(ParsePrometheusText(reg.ExposeText()).value()); };
  EXPECT_FALSE(Has(diagnose(), "model_circuit_open"));  // registered, never opened
  open.Set(1);
  rejected.Increment(7);
  DoctorReport r = diagnose();
  const Finding* f = Get(r, "model_circuit_open");
  ASSERT_NE(f, nullptr) << FormatDoctorReport(r);
  EXPECT_NE(f->summary.find("is open"), std::string::npos);
  EXPECT_NE(f->figures.find("requests failed at once 7"), std::string::npos) << f->figures;
  EXPECT_NE(f->settings.find("llm.openai.base_url"), std::string::npos);
  open.Set(0);
  f = Get(r = diagnose(), "model_circuit_open");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("closed again"), std::string::npos);
}

}  // namespace
}  // namespace hotline
