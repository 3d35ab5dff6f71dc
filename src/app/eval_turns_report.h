// `hotline eval turns` (cmd_eval_turns.cc builds and traces the utterances): comparing end-of-turn
// policies over the traced utterances, and the command's reports. Internal to the command.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "asr/turn_eval.h"
#include "audio/endpointer.h"

namespace hotline::cli::eval_turns {

// One utterance of the benchmark, with its trace through the call's objects.
struct Item {
  std::string group;  // tuning | report | real
  std::string voice;
  std::string set;   // banking77 | clinc150 | bitext | recording name
  std::string kind;  // hesitation kind; "" for complete utterances
  std::string text;  // what is said ("before … after" for paused ones)
  asr::TurnUtterance utt;
  asr::TurnTrace trace;
};

// Every policy replayed over every item, in item order.
std::vector<asr::TurnOutcome> ReplayAll(const std::vector<Item>& items, const asr::TurnPolicy& p);

// Silence-only rules (300-1,600 ms), the old rule (silence, shorter with the looks-complete hint),
// the configured detector and four variants of its center wait.
std::vector<asr::TurnPolicy> StandardPolicies(const audio::EndpointerConfig& ep,
                                              const asr::TurnDetectorConfig& det);

// Grid search on the tuning voices' items only: the detector with the lowest P50 + P90 delay on
// complete questions among those with cut-offs at 600 ms <= 2.5 % and at 1,000 ms <= 10 % (half
// the targets' room: the report voices are other voices). `summary` gets what was tried and found.
asr::TurnPolicy TuneDetector(const std::vector<Item>& items, const audio::EndpointerConfig& ep,
                             const asr::TurnDetectorConfig& det, nlohmann::json* summary);

// js["policies"]: per policy, cut-offs and delays by group, voice, set and hesitation kind;
// js["detector_cut_examples"] and ["detector_slow_examples"]: report items the configured detector
// (`det`) cut off or kept waiting, for reading.
void AddPolicyReports(const std::vector<Item>& items, const std::vector<asr::TurnPolicy>& policies,
                      const audio::EndpointerConfig& ep, const asr::TurnDetectorConfig& det,
                      nlohmann::json& js);

// The text report on stdout, from the JSON report (utterances, pauses_ms, tuning_voices,
// report_voices, real_recordings, tuned and the above).
void PrintTurnsReport(const nlohmann::json& js);

}  // namespace hotline::cli::eval_turns
