// `hotline eval turns`, its second half (eval_turns_report.h): the end-of-turn policies compared,
// the detector's tuning grid, and the JSON and text reports.
#include "app/eval_turns_report.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace hotline::cli::eval_turns {
namespace {

nlohmann::json Summarize(const std::vector<const Item*>& items,
                         const std::vector<asr::TurnOutcome>& outcomes) {
  std::map<int, asr::TurnStats> by_pause;
  for (size_t i = 0; i < items.size(); ++i) {
    asr::TurnStats& s = by_pause[items[i]->utt.pause_ms];
    ++s.n;
    if (outcomes[i].cut_off) ++s.cut_offs;
    if (!outcomes[i].cut_off) s.delays_ms.push_back(outcomes[i].delay_ms);
  }
  nlohmann::json j = nlohmann::json::object();
  for (auto& [pause, s] : by_pause) {
    nlohmann::json r = {{"n", s.n}, {"cut_offs", s.cut_offs}, {"cut_off_rate", s.cut_off_rate()}};
    if (pause == 0) {
      r["delay_p50_ms"] = s.DelayPercentile(0.5);
      r["delay_p90_ms"] = s.DelayPercentile(0.9);
    }
    j[pause == 0 ? "complete" : std::to_string(pause)] = r;
  }
  return j;
}

nlohmann::json Breakdown(const std::vector<Item>& items, const std::vector<asr::TurnOutcome>& out,
                         const std::function<std::string(const Item&)>& key,
                         const std::string& group) {
  std::map<std::string, std::pair<std::vector<const Item*>, std::vector<asr::TurnOutcome>>> parts;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].group != group) continue;
    auto& p = parts[key(items[i])];
    p.first.push_back(&items[i]);
    p.second.push_back(out[i]);
  }
  nlohmann::json j = nlohmann::json::object();
  for (auto& [k, p] : parts) j[k] = Summarize(p.first, p.second);
  return j;
}

// The complete-question items of `kind` paused ones get their kind's complete twin: a kind
// breakdown reports only paused items (delays belong to complete questions).
nlohmann::json Report(const std::vector<Item>& items, const std::vector<asr::TurnOutcome>& out) {
  nlohmann::json j;
  for (const char* group : {"tuning", "report", "real"}) {
    auto all = Breakdown(
        items, out, [](const Item&) { return std::string("all"); }, group);
    if (all.empty()) continue;
    j[group]["all"] = all["all"];
    j[group]["by_voice"] = Breakdown(
        items, out, [](const Item& it) { return it.voice; }, group);
    j[group]["by_set"] = Breakdown(
        items, out, [](const Item& it) { return it.set; }, group);
    j[group]["by_kind"] = Breakdown(
        items, out, [](const Item& it) { return it.kind.empty() ? "complete" : it.kind; }, group);
  }
  return j;
}

double Get(const nlohmann::json& j, const std::string& group, const std::string& row,
           const char* field) {
  if (!j.contains(group) || !j[group]["all"].contains(row)) return -1;
  const auto& r = j[group]["all"][row];
  return r.contains(field) ? r[field].get<double>() : -1;
}

}  // namespace

std::vector<asr::TurnOutcome> ReplayAll(const std::vector<Item>& items, const asr::TurnPolicy& p) {
  std::vector<asr::TurnOutcome> out;
  out.reserve(items.size());
  for (const Item& it : items) out.push_back(asr::ReplayPolicy(it.utt, it.trace, p));
  return out;
}

std::vector<asr::TurnPolicy> StandardPolicies(const audio::EndpointerConfig& ep,
                                              const asr::TurnDetectorConfig& det) {
  std::vector<asr::TurnPolicy> policies;
  for (int s : {300, 500, 700, 1000, 1300, 1600}) {
    asr::TurnPolicy p;
    p.name = "silence " + std::to_string(s) + " ms";
    p.endpointer = ep;
    p.endpointer.trailing_silence_ms = s;
    p.endpointer.complete_silence_ms = std::min(ep.complete_silence_ms, s);
    policies.push_back(p);
  }
  {
    asr::TurnPolicy p;
    p.name = "old rule (silence " + std::to_string(ep.trailing_silence_ms) + " ms, " +
             std::to_string(ep.complete_silence_ms) + " ms with the hint)";
    p.endpointer = ep;
    p.use_hint = true;
    policies.push_back(p);
  }
  {
    asr::TurnPolicy p;
    p.name = "detector (asr.turn)";
    p.endpointer = ep;
    p.use_detector = true;
    p.detector = det;
    policies.push_back(p);
    for (int c : {300, 400, 650, 800}) {
      asr::TurnPolicy q = p;
      q.detector.center_wait_ms = std::clamp(c, det.min_wait_ms, det.max_wait_ms);
      q.name = "detector, center " + std::to_string(q.detector.center_wait_ms) + " ms";
      policies.push_back(q);
    }
  }
  return policies;
}

asr::TurnPolicy TuneDetector(const std::vector<Item>& items, const audio::EndpointerConfig& ep,
                             const asr::TurnDetectorConfig& det, nlohmann::json* summary) {
  // Grid search on the tuning voices only: the configuration with the lowest P50 + P90 delay on
  // complete questions among those with cut-offs at 600 ms <= 2.5 % and at 1,000 ms <= 10 %
  // (half the targets' room: the report voices are other voices).
  std::vector<Item> tuning;
  for (const Item& it : items) {
    if (it.group == "tuning") tuning.push_back(it);
  }
  double best_cost = 1e18;
  asr::TurnDetectorConfig best = det;
  int tried = 0;
  for (int center : {350, 420, 500, 580, 660, 740}) {
    for (double slope : {60.0, 90.0, 120.0, 160.0, 220.0}) {
      for (double open : {0.0, -1.0, -2.0}) {
        for (double lexical : {0.5, 0.75, 1.0}) {
          for (double pitch : {0.0, 0.15}) {
            for (double energy : {0.0, 0.05}) {
              for (int min_wait : {60, 100}) {
                asr::TurnPolicy p;
                p.endpointer = ep;
                p.use_detector = true;
                p.detector = det;
                p.detector.center_wait_ms = center;
                p.detector.ms_per_logit = slope;
                p.detector.open_word_logit = open;
                p.detector.pitch_fall_weight = pitch;
                p.detector.energy_drop_weight = energy;
                p.detector.min_wait_ms = min_wait;
                p.detector.lexical_weight = lexical;
                if (!p.detector.Validate().ok()) continue;
                ++tried;
                const auto out = ReplayAll(tuning, p);
                std::vector<const Item*> ptrs;
                for (const Item& it : tuning) ptrs.push_back(&it);
                const nlohmann::json s = Summarize(ptrs, out);
                const double c600 =
                    s.contains("600") ? s["600"]["cut_off_rate"].get<double>() : 0;
                const double c1000 =
                    s.contains("1000") ? s["1000"]["cut_off_rate"].get<double>() : 0;
                if (c600 > 0.025 || c1000 > 0.10 || !s.contains("complete")) continue;
                const double cost = s["complete"]["delay_p50_ms"].get<double>() +
                                    s["complete"]["delay_p90_ms"].get<double>();
                if (cost < best_cost) {
                  best_cost = cost;
                  best = p.detector;
                }
              }
            }
          }
        }
      }
    }
  }
  *summary = {{"tried", tried},
                {"found", best_cost < 1e18},
                {"center_wait_ms", best.center_wait_ms},
                {"ms_per_logit", best.ms_per_logit},
                {"open_word_logit", best.open_word_logit},
                {"pitch_fall_weight", best.pitch_fall_weight},
                {"energy_drop_weight", best.energy_drop_weight},
                {"min_wait_ms", best.min_wait_ms},
                {"lexical_weight", best.lexical_weight}};
  asr::TurnPolicy p;
  p.name = "detector, tuned";
  p.endpointer = ep;
  p.use_detector = true;
  p.detector = best;
  return p;
}

void AddPolicyReports(const std::vector<Item>& items, const std::vector<asr::TurnPolicy>& policies,
                      const audio::EndpointerConfig& ep, const asr::TurnDetectorConfig& det,
                      nlohmann::json& js) {
  for (const asr::TurnPolicy& p : policies) {
    nlohmann::json r = Report(items, ReplayAll(items, p));
    r["name"] = p.name;
    if (p.use_detector) {
      nlohmann::json d;
      d["center_wait_ms"] = p.detector.center_wait_ms;
      d["ms_per_logit"] = p.detector.ms_per_logit;
      d["min_wait_ms"] = p.detector.min_wait_ms;
      d["max_wait_ms"] = p.detector.max_wait_ms;
      r["detector"] = d;
    }
    js["policies"].push_back(r);
  }
  // Examples the default detector cut off, for reading.
  {
    asr::TurnPolicy p;
    p.endpointer = ep;
    p.use_detector = true;
    p.detector = det;
    const auto out = ReplayAll(items, p);
    nlohmann::json cut = nlohmann::json::array();
    for (size_t i = 0; i < items.size() && cut.size() < 40; ++i) {
      if (!out[i].cut_off || items[i].group == "tuning") continue;
      cut.push_back({{"voice", items[i].voice},
                     {"pause_ms", items[i].utt.pause_ms},
                     {"kind", items[i].kind},
                     {"text", items[i].text},
                     {"heard", items[i].trace.final_partial}});
    }
    js["detector_cut_examples"] = cut;
    nlohmann::json slow = nlohmann::json::array();
    for (size_t i = 0; i < items.size() && slow.size() < 40; ++i) {
      if (items[i].utt.pause_ms != 0 || out[i].delay_ms <= 450 || items[i].group == "tuning")
        continue;
      const asr::TurnFrame& last = items[i].trace.frames.back();
      slow.push_back({{"voice", items[i].voice},
                      {"text", items[i].text},
                      {"heard", items[i].trace.final_partial},
                      {"delay_ms", out[i].delay_ms},
                      {"end_probability", last.lexical_p}});
    }
    js["detector_slow_examples"] = slow;
  }
}

void PrintTurnsReport(const nlohmann::json& js) {
  const std::vector<int> pauses = js["pauses_ms"].get<std::vector<int>>();
  std::printf("turn-taking: %zu utterances; pauses", js["utterances"].get<size_t>());
  for (int p : pauses) std::printf(" %d", p);
  std::printf(" ms; tuning voices (train-split questions):");
  for (const auto& v : js.value("tuning_voices", nlohmann::json::array())) {
    std::printf(" %s", v.get<std::string>().c_str());
  }
  std::printf("; report voices (test-split questions):");
  for (const auto& v : js.value("report_voices", nlohmann::json::array())) {
    std::printf(" %s", v.get<std::string>().c_str());
  }
  std::printf("%s\n", js["real_recordings"].get<bool>() ? "; real recordings (pocketsphinx-testdata)" : "");
  for (const char* group : {"report", "real", "tuning"}) {
    if (!js["policies"][0].contains(group)) continue;
    std::printf(
        "\n[%s] false cut-offs by pause length; end-of-turn delay after complete questions\n",
        group);
    std::printf("%-44s", "policy");
    for (int p : pauses) std::printf(" %7s", ("cut@" + std::to_string(p)).c_str());
    std::printf(" %8s %8s %6s\n", "eot_p50", "eot_p90", "n");
    for (const auto& r : js["policies"]) {
      std::printf("%-44s", r["name"].get<std::string>().c_str());
      for (int p : pauses) {
        const double c = Get(r, group, std::to_string(p), "cut_off_rate");
        std::printf(" %6.1f%%", 100 * c);
      }
      std::printf(" %6.0fms %6.0fms %6.0f\n", Get(r, group, "complete", "delay_p50_ms"),
                  Get(r, group, "complete", "delay_p90_ms"), Get(r, group, "complete", "n"));
    }
  }
  // Old rule against the default detector, per voice and per hesitation kind.
  const nlohmann::json* old_rule = nullptr;
  const nlohmann::json* detector = nullptr;
  for (const auto& r : js["policies"]) {
    if (r["name"].get<std::string>().starts_with("old rule")) old_rule = &r;
    if (r["name"] == "detector (asr.turn)") detector = &r;
  }
  auto row = [&](const nlohmann::json& part, const std::string& key, const char* field) {
    return part.contains(key) && part[key].contains(field) ? part[key][field].get<double>() : -1.0;
  };
  // One line per voice or question set: cut-offs at 600 and 1,000 ms, delay P50 and P90.
  auto compare = [&](const char* group, const char* by, const char* title, const char* label) {
    std::printf("%s[%s] per %s: old rule -> detector\n%-10s %17s %17s %17s %17s\n",
                std::string_view(by) == "by_voice" ? "\n" : "", group, title, label, "cut@600",
                "cut@1000", "eot_p50", "eot_p90");
    for (const auto& [name, o] : (*old_rule)[group][by].items()) {
      const auto& d = (*detector)[group][by][name];
      std::printf("%-10s %7.1f%% -> %5.1f%% %7.1f%% -> %5.1f%% %6.0f -> %4.0fms %6.0f -> %4.0fms\n",
                  name.c_str(), 100 * row(o, "600", "cut_off_rate"),
                  100 * row(d, "600", "cut_off_rate"), 100 * row(o, "1000", "cut_off_rate"),
                  100 * row(d, "1000", "cut_off_rate"), row(o, "complete", "delay_p50_ms"),
                  row(d, "complete", "delay_p50_ms"), row(o, "complete", "delay_p90_ms"),
                  row(d, "complete", "delay_p90_ms"));
    }
  };
  for (const char* group : {"report", "real", "tuning"}) {
    if (!old_rule || !detector || !old_rule->contains(group)) continue;
    compare(group, "by_voice", "voice", "voice");
    compare(group, "by_set", "question set", "set");
    std::printf("[%s] per hesitation kind: old rule -> detector\n%-12s %17s %17s %17s\n", group,
                "kind", "cut@600", "cut@1000", "cut@1500");
    for (const auto& [kind, o] : (*old_rule)[group]["by_kind"].items()) {
      if (kind == "complete") continue;
      const auto& d = (*detector)[group]["by_kind"][kind];
      std::printf("%-12s %7.1f%% -> %5.1f%% %7.1f%% -> %5.1f%% %7.1f%% -> %5.1f%%   (n %0.f)\n",
                  kind.c_str(), 100 * row(o, "600", "cut_off_rate"),
                  100 * row(d, "600", "cut_off_rate"), 100 * row(o, "1000", "cut_off_rate"),
                  100 * row(d, "1000", "cut_off_rate"), 100 * row(o, "1500", "cut_off_rate"),
                  100 * row(d, "1500", "cut_off_rate"), row(o, "600", "n"));
    }
  }
  if (old_rule && detector && old_rule->contains("report")) {
    const double o50 = Get(*old_rule, "report", "complete", "delay_p50_ms");
    const double d50 = Get(*detector, "report", "complete", "delay_p50_ms");
    const double o90 = Get(*old_rule, "report", "complete", "delay_p90_ms");
    const double d90 = Get(*detector, "report", "complete", "delay_p90_ms");
    const double o600 = Get(*old_rule, "report", "600", "cut_off_rate");
    const double d600 = Get(*detector, "report", "600", "cut_off_rate");
    const double o1000 = Get(*old_rule, "report", "1000", "cut_off_rate");
    const double d1000 = Get(*detector, "report", "1000", "cut_off_rate");
    std::printf(
        "\nreport voices, detector / old rule: cut@600 %.1f%% / %.1f%%, cut@1000 %.1f%% / %.1f%%, "
        "eot P50 %.0f / %.0f ms (x%.2f), P90 %.0f / %.0f ms (x%.2f)\n",
        100 * d600, 100 * o600, 100 * d1000, 100 * o1000, d50, o50, o50 > 0 ? d50 / o50 : 0, d90,
        o90, o90 > 0 ? d90 / o90 : 0);
    std::printf(
        "targets: cut@600 <= 5%% %s, cut@1000 <= 15%% %s, P50 <= 250 ms %s, P90 <= 450 ms %s\n",
        d600 <= 0.05 ? "met" : "NOT met", d1000 <= 0.15 ? "met" : "NOT met",
        d50 <= 250 ? "met" : "NOT met", d90 <= 450 ? "met" : "NOT met");
  }
  if (js.contains("tuned")) {
    std::printf("\ntuned on the tuning voices: %s\n", js["tuned"].dump().c_str());
  }
}

}  // namespace hotline::cli::eval_turns
