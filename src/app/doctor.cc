#include "app/doctor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <set>

namespace hotline {

namespace {

constexpr size_t kMaxTextBytes = 8u << 20;
constexpr size_t kMaxSamples = 200000;

std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}
std::string Ms(double seconds) { return Fmt("%.0f ms", seconds * 1000.0); }
std::string Pct(double share) { return Fmt("%.0f %%", share * 100.0); }

bool Matches(const MetricSample& s, const std::map<std::string, std::string>& match) {
  for (const auto& [k, v] : match) {
    auto it = s.labels.find(k);
    if (it == s.labels.end() || it->second != v) return false;
  }
  return true;
}

Status LineError(size_t line, std::string_view what) {
  return InvalidArgumentError("metrics line " + std::to_string(line) + ": " + std::string(what));
}

double ParseValue(std::string_view v, bool* ok) {
  *ok = true;
  if (v == "+Inf" || v == "Inf") return INFINITY;
  if (v == "-Inf") return -INFINITY;
  if (v == "NaN") return NAN;
  std::string s(v);
  char* end = nullptr;
  double d = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != 0) *ok = false;
  return d;
}

}  // namespace

double MetricSamples::Sum(std::string_view name,
                          const std::map<std::string, std::string>& match) const {
  double total = 0;
  for (const auto& s : samples) {
    if (s.name == name && Matches(s, match) && std::isfinite(s.value)) total += s.value;
  }
  return total;
}

std::vector<std::string> MetricSamples::LabelValues(std::string_view name,
                                                    std::string_view label) const {
  std::set<std::string> out;
  for (const auto& s : samples) {
    if (s.name != name) continue;
    auto it = s.labels.find(std::string(label));
    if (it != s.labels.end()) out.insert(it->second);
  }
  return {out.begin(), out.end()};
}

Result<MetricSamples> ParsePrometheusText(std::string_view text) {
  if (text.size() > kMaxTextBytes) {
    return ResourceExhaustedError("metrics text of " + std::to_string(text.size()) +
                                  " bytes is over the 8 MiB limit");
  }
  MetricSamples out;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    MetricSample s;
    size_t i = 0;
    while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) ||
                               line[i] == '_' || line[i] == ':')) {
      ++i;
    }
    if (i == 0) return LineError(line_no, "no metric name");
    s.name = std::string(line.substr(0, i));
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (true) {
        while (i < line.size() && (line[i] == ' ' || line[i] == ',')) ++i;
        if (i < line.size() && line[i] == '}') {
          ++i;
          break;
        }
        const size_t eq = line.find('=', i);
        if (eq == std::string_view::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
          return LineError(line_no, "malformed label");
        }
        std::string key(line.substr(i, eq - i));
        std::string value;
        size_t j = eq + 2;
        bool closed = false;
        for (; j < line.size(); ++j) {
          if (line[j] == '\\' && j + 1 < line.size()) {
            const char c = line[++j];
            value.push_back(c == 'n' ? '\n' : c);
          } else if (line[j] == '"') {
            closed = true;
            break;
          } else {
            value.push_back(line[j]);
          }
        }
        if (!closed) return LineError(line_no, "unterminated label value");
        s.labels.emplace(std::move(key), std::move(value));
        i = j + 1;
      }
    }
    while (i < line.size() && line[i] == ' ') ++i;
    const size_t value_end = line.find(' ', i);  // a timestamp may follow
    bool ok = false;
    s.value = ParseValue(line.substr(i, value_end == std::string_view::npos ? std::string_view::npos
                                                                            : value_end - i),
                         &ok);
    if (!ok) return LineError(line_no, "value is not a number");
    if (out.samples.size() >= kMaxSamples) {
      return ResourceExhaustedError("more than 200000 metric samples");
    }
    out.samples.push_back(std::move(s));
  }
  return out;
}

std::optional<double> HistogramData::Quantile(double q) const {
  if (count <= 0 || buckets.empty()) return std::nullopt;
  const double rank = q * count;
  double prev_bound = 0, prev_count = 0;
  for (const auto& [bound, cumulative] : buckets) {
    if (cumulative >= rank) {
      if (std::isinf(bound)) return prev_bound;  // above the last finite bound: report it
      const double in_bucket = cumulative - prev_count;
      if (in_bucket <= 0) return bound;
      return prev_bound + (bound - prev_bound) * (rank - prev_count) / in_bucket;
    }
    prev_bound = bound;
    prev_count = cumulative;
  }
  return prev_bound;
}

std::optional<HistogramData> HistogramOf(const MetricSamples& m, std::string_view name,
                                         const std::map<std::string, std::string>& match) {
  const std::string bucket = std::string(name) + "_bucket";
  std::map<double, double> by_bound;
  bool any = false;
  for (const auto& s : m.samples) {
    if (s.name != bucket || !Matches(s, match)) continue;
    auto le = s.labels.find("le");
    if (le == s.labels.end()) continue;
    bool ok = false;
    const double bound = ParseValue(le->second, &ok);
    if (!ok) continue;
    by_bound[bound] += s.value;
    any = true;
  }
  if (!any) return std::nullopt;
  HistogramData h;
  h.buckets.assign(by_bound.begin(), by_bound.end());
  h.count = m.Sum(std::string(name) + "_count", match);
  h.sum = m.Sum(std::string(name) + "_sum", match);
  if (h.count <= 0 && !h.buckets.empty()) h.count = h.buckets.back().second;
  return h;
}

namespace {

// What to change when `stage` (a hotline_pipeline_stage_seconds label) holds the P99 tail.
std::string SettingsForSlowStage(const std::string& stage, double p99) {
  if (stage == "endpointing") {
    return "the tail is end-of-turn detection (" + Ms(p99) +
           " P99): lower speech_in.endpointer.trailing_silence_ms and "
           "speech_in.endpointer.complete_silence_ms (fewer ms of silence end a turn; "
           "too low cuts callers off mid-sentence)";
  }
  if (stage == "asr") {
    return "the tail is the recognizer's final result (" + Ms(p99) +
           " P99): narrow asr.pocketsphinx.beam and asr.pocketsphinx.word_beam (faster, "
           "somewhat less accurate), or serve fewer calls per process (calls.max_calls)";
  }
  if (stage == "answer") {
    return "the tail is answering (" + Ms(p99) +
           " P99), the language model's share grows with the prompt: lower "
           "answer.kb.top_k (fewer passages per prompt) and llm.engine.max_seq_len "
           "(long histories are truncated sooner); call.answer_timeout_ms caps the "
           "worst case";
  }
  if (stage == "tts_first_audio") {
    return "the tail is the first synthesized audio (" + Ms(p99) +
           " P99): keep the audio cache on, lower tts.flite.chunk_ms, or serve fewer "
           "calls per process (calls.max_calls)";
  }
  return "no stage histogram explains it: check CPU load; lower calls.max_calls";
}

// Latency: voice-to-voice, and the stage behind its tail.
void CheckLatency(const MetricSamples& m, const DoctorOptions& o, DoctorReport& r) {
  auto v2v = HistogramOf(m, "hotline_pipeline_voice_to_voice_seconds");
  if (v2v && v2v->count > 0) {
    const double p50 = *v2v->Quantile(0.5), p95 = *v2v->Quantile(0.95), p99 = *v2v->Quantile(0.99);
    r.figures.push_back("voice-to-voice over " + Fmt("%.0f", v2v->count) + " turns: P50 " +
                        Ms(p50) + ", P95 " + Ms(p95) + ", P99 " + Ms(p99));
    const bool slow = p99 > o.v2v_p99_target_s;
    const bool uneven = p50 > 0 && p99 > o.tail_ratio * p50;
    if (v2v->count >= o.min_turns && (slow || uneven)) {
      Finding f;
      f.trouble = "long_tail_latency";
      f.summary = slow ? "voice-to-voice P99 " + Ms(p99) + " is over the " +
                             Ms(o.v2v_p99_target_s) + " target"
                       : "voice-to-voice P99 " + Ms(p99) + " is " + Fmt("%.1f", p99 / p50) +
                             "x its P50 " + Ms(p50);
      f.figures = "P50 " + Ms(p50) + ", P95 " + Ms(p95) + ", P99 " + Ms(p99) + " over " +
                  Fmt("%.0f", v2v->count) + " turns";
      std::string worst;
      double worst_p99 = -1;
      for (const auto& stage : m.LabelValues("hotline_pipeline_stage_seconds_bucket", "stage")) {
        auto h = HistogramOf(m, "hotline_pipeline_stage_seconds", {{"stage", stage}});
        if (!h || h->count <= 0) continue;
        const double s99 = *h->Quantile(0.99);
        f.figures += "; " + stage + " P99 " + Ms(s99);
        if (s99 > worst_p99) {
          worst_p99 = s99;
          worst = stage;
        }
      }
      const double llm_requests = m.Sum("hotline_llm_requests_total");
      const double prompt_tokens = m.Sum("hotline_llm_prompt_tokens_total");
      if (llm_requests > 0) {
        f.figures += "; LLM prompts average " + Fmt("%.0f", prompt_tokens / llm_requests) +
                     " tokens over " + Fmt("%.0f", llm_requests) + " requests";
      }
      f.settings = SettingsForSlowStage(worst, worst_p99);
      r.findings.push_back(std::move(f));
    }
  }
}

// The embedded engine's queue: requests waiting while others do not.
void CheckEngineQueue(const MetricSamples& m, const DoctorOptions& o, DoctorReport& r) {
  auto queue = HistogramOf(m, "hotline_llm_queue_seconds");
  if (queue && queue->count > 0) {
    const double q50 = *queue->Quantile(0.5), q95 = *queue->Quantile(0.95);
    r.figures.push_back("engine queue wait over " + Fmt("%.0f", queue->count) + " requests: P50 " +
                        Ms(q50) + ", P95 " + Ms(q95));
    if (queue->count >= o.min_llm_requests && q95 > o.queue_p95_target_s) {
      Finding f;
      f.trouble = "engine_queueing";
      f.summary =
          "LLM requests wait for the engine: queue-wait P95 " + Ms(q95) + " (P50 " + Ms(q50) + ")";
      f.figures = "queue wait P50 " + Ms(q50) + ", P95 " + Ms(q95) + " over " +
                  Fmt("%.0f", queue->count) + " requests; mean " + Ms(queue->sum / queue->count);
      f.settings = q50 < q95 / 4
                       ? "bursts queue while the engine is otherwise idle (uneven utilization): "
                         "raise llm.engine.max_batch_size and llm.engine.max_num_batched_tokens "
                         "so a burst's requests share forward passes, and keep "
                         "llm.engine.max_queue short enough to shed load"
                       : "the engine is saturated: raise llm.engine.max_batch_size, give it "
                         "more llm.engine.threads, or move the model to a pool of servers "
                         "(llm.backend=openai, llm.openai.base_url at a vLLM pool)";
      r.findings.push_back(std::move(f));
    }
  }
}

// Cache tiers: how many answers they give.
void CheckCacheTiers(const MetricSamples& m, const DoctorOptions& o, DoctorReport& r) {
  const double answers = m.Sum("hotline_pipeline_answers_total");
  if (answers > 0) {
    std::string per_tier;
    for (const auto& tier : m.LabelValues("hotline_pipeline_answers_total", "tier")) {
      if (!per_tier.empty()) per_tier += ", ";
      per_tier +=
          tier + " " + Fmt("%.0f", m.Sum("hotline_pipeline_answers_total", {{"tier", tier}}));
    }
    const double l1 = m.Sum("hotline_pipeline_answers_total", {{"tier", "l1"}});
    const double l2 = m.Sum("hotline_pipeline_answers_total", {{"tier", "l2"}});
    const double l3 = m.Sum("hotline_pipeline_answers_total", {{"tier", "l3"}});
    const double hit = (l1 + l2 + l3) / answers;
    r.figures.push_back("answers " + Fmt("%.0f", answers) + " (" + per_tier + "): " + Pct(hit) +
                        " from the cache tiers");
    if (answers >= o.min_answers && hit < o.cache_hit_target) {
      Finding f;
      f.trouble = "low_cache_hit_rate";
      f.summary = "only " + Pct(hit) + " of answers come from the cache tiers (target " +
                  Pct(o.cache_hit_target) + ")";
      f.figures = "answers by tier: " + per_tier + "; L1 " + Pct(l1 / answers) + ", L2 " +
                  Pct(l2 / answers) + ", L3 " + Pct(l3 / answers);
      f.settings =
          "L1 (intent templates) rarely accepts: lower answer.intent.target_precision (accepts "
          "more intents, at some risk of wrong ones) or split coarse intents in the knowledge "
          "base; L2: lower answer.semantic_cache.similarity_threshold (or raise "
          "answer.semantic_cache.target_false_hit_rate); L3: raise answer.l3.ttl_ms so repeats "
          "outlive it";
      r.findings.push_back(std::move(f));
    }
  }
}

// Capacity: dropped audio, pacer stalls, calls turned away.
void CheckCapacity(const MetricSamples& m, DoctorReport& r) {
  const double dropped = m.Sum("hotline_pipeline_audio_dropped_total");
  if (dropped > 0) {
    r.findings.push_back({"inbound_audio_dropped",
                          Fmt("%.0f", dropped) + " inbound audio payloads were dropped",
                          "hotline_pipeline_audio_dropped_total " + Fmt("%.0f", dropped),
                          "the listen workers fall behind: lower calls.max_calls or run on more "
                          "cores; call.audio_queue_frames only hides it"});
  }
  const double stalls = m.Sum("hotline_audiosocket_pacer_resyncs_total");
  if (stalls > 0) {
    r.findings.push_back({"pacer_stalls",
                          "the AudioSocket pacer stalled over 200 ms " + Fmt("%.0f", stalls) +
                              " times (callers heard gaps)",
                          "hotline_audiosocket_pacer_resyncs_total " + Fmt("%.0f", stalls),
                          "the process is starved of CPU: lower calls.max_calls"});
  }
  const double busy = m.Sum("hotline_twilio_over_capacity_total") +
                      m.Sum("hotline_audiosocket_over_capacity_total");
  if (busy > 0) {
    r.findings.push_back({"over_capacity",
                          Fmt("%.0f", busy) + " calls were turned away at the call cap",
                          "over capacity " + Fmt("%.0f", busy) + " calls",
                          "raise calls.max_calls if latency allows (see the call benchmark), or "
                          "add processes"});
  }
}

// The openai backend's circuit breaker (llm.openai.breaker_*): open now, or opened at some time.
void CheckModelPool(const MetricSamples& m, DoctorReport& r) {
  const double open = m.Sum("hotline_llm_breaker_open");
  const double rejected = m.Sum("hotline_llm_breaker_rejected_total");
  if (open <= 0 && rejected <= 0) return;
  r.findings.push_back(
      {"model_circuit_open",
       open > 0 ? "the circuit breaker to the model pool is open: turns that need the model get "
                  "the fallback at once"
                : "the circuit breaker to the model pool has been open (it is closed again)",
       "breaker open " + Fmt("%.0f", open) + ", requests failed at once " + Fmt("%.0f", rejected) +
           ", model requests failed " + Fmt("%.0f", m.Sum("hotline_llm_errors_total")),
       "check the model servers behind llm.openai.base_url (their /readyz, queue and logs); if "
       "they are only slow, llm.openai.first_token_timeout_ms; llm.openai.breaker_failures and "
       "breaker_open_ms tune the breaker"});
}

}  // namespace

DoctorReport Diagnose(const MetricSamples& m, const DoctorOptions& o) {
  DoctorReport r;
  CheckLatency(m, o, r);
  CheckEngineQueue(m, o, r);
  CheckCacheTiers(m, o, r);
  CheckCapacity(m, r);
  CheckModelPool(m, r);
  return r;
}

std::string FormatDoctorReport(const DoctorReport& report) {
  std::string out;
  for (const auto& f : report.figures) out += "  " + f + "\n";
  if (report.findings.empty()) {
    out += "no trouble found\n";
    return out;
  }
  for (const auto& f : report.findings) {
    out += "\n" + f.trouble + ": " + f.summary + "\n";
    out += "  figures:  " + f.figures + "\n";
    out += "  change:   " + f.settings + "\n";
  }
  return out;
}

std::string DoctorReportJson(const DoctorReport& report) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : report.findings) {
    findings.push_back({{"trouble", f.trouble},
                        {"summary", f.summary},
                        {"figures", f.figures},
                        {"settings", f.settings}});
  }
  return nlohmann::json{{"findings", findings}, {"figures", report.figures}}.dump(2);
}

}  // namespace hotline
