// hotline call CALLER.wav: one call from a recording, through the same CallSession a phone call
// uses. The recording (any WAV the audio module reads) is converted to 8 kHz μ-law as a phone
// line would carry it and played into the session in 20 ms frames, in real time by default (so
// the ledger is wall time), followed by silence while the agent replies. The agent's channel is
// written to --out with its audio placed at the times it was sent.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "app/call_runner.h"
#include "app/cli.h"
#include "app/domain.h"
#include "audio/wav.h"
#include "common/build_paths.h"
#include "common/log.h"

namespace hotline::cli {

namespace {

double Rel(double v, double origin) { return v < 0 ? NAN : v - origin; }

double Origin(const pipeline::TurnReport& t) {
  if (t.ledger.speech_end >= 0) return t.ledger.speech_end;
  return t.ledger.first_sentence >= 0 ? t.ledger.first_sentence : 0;
}

}  // namespace

void PrintCallReport(const pipeline::FileCallResult& r, std::FILE* out) {
  int n = 0;
  for (const pipeline::TurnReport& t : r.turns) {
    ++n;
    const double o = Origin(t);
    const pipeline::TurnLedger& l = t.ledger;
    const std::string kind(pipeline::TurnKindName(t.kind));
    const bool heard = t.kind == pipeline::TurnKind::kCaller || t.kind == pipeline::TurnKind::kDtmf;
    if (heard) {
      std::fprintf(out, "\nturn %d (%s)\n  heard:   \"%s\"\n", n, kind.c_str(),
                   t.transcript.c_str());
    } else {
      std::fprintf(out, "\nturn %d (%s)\n", n, kind.c_str());
    }
    std::fprintf(out, "  answer:  \"%s\"\n  tier:    %s   outcome: %s%s\n", t.answer.c_str(),
                 std::string(pipeline::TurnTierName(t.tier)).c_str(), t.OutcomeText().c_str(),
                 t.prework_used ? "   (prepared before the turn ended)" : "");
    if (!t.llm_gate.empty()) {
      std::fprintf(out, "  llm gate: %s (asr confidence %.3f)\n", t.llm_gate.c_str(),
                   t.asr_confidence);
    }
    std::fprintf(out, "  ledger (ms from %s):",
                 t.kind == pipeline::TurnKind::kCaller ? "speech end" : "start");
    const std::pair<const char*, double> stamps[] = {
        {"speech_start", l.speech_start},   {"end_of_turn", l.end_of_turn},
        {"asr_final", l.asr_final},         {"cache_result", l.cache_result},
        {"llm_first_token", l.llm_first_token}, {"first_sentence", l.first_sentence},
        {"tts_first_audio", l.tts_first_audio}, {"first_audio_sent", l.first_audio_sent},
        {"turn_done", l.turn_done},         {"barge_in", l.barge_in}};
    for (const auto& [name, v] : stamps) {
      if (v >= 0) std::fprintf(out, " %s %+.0f", name, Rel(v, o));
    }
    std::fprintf(out, "\n");
    if (l.VoiceToVoiceMs() >= 0) {
      std::fprintf(out, "  voice-to-voice (caller's last word -> first reply audio sent): %.0f ms\n",
                   l.VoiceToVoiceMs());
    }
  }
  if (!r.hangup_reason.empty()) std::fprintf(out, "\nagent hung up: %s\n", r.hangup_reason.c_str());
  if (!r.transfer_reason.empty()) {
    std::fprintf(out, "\ntransferred to an agent: %s\n", r.transfer_reason.c_str());
  }
}

std::string CallReportJson(const pipeline::FileCallResult& r) {
  nlohmann::json turns = nlohmann::json::array();
  for (const pipeline::TurnReport& t : r.turns) {
    turns.push_back({{"kind", pipeline::TurnKindName(t.kind)},
                     {"transcript", t.transcript},
                     {"answer", t.answer},
                     {"tier", pipeline::TurnTierName(t.tier)},
                     {"outcome", t.OutcomeText()},
                     {"prework", t.prework_used},
                     {"asr_confidence", t.asr_confidence},
                     {"llm_gate", t.llm_gate},
                     {"ledger", nlohmann::json::parse(t.ledger.ToJson(Origin(t)))}});
  }
  nlohmann::json j = {{"turns", turns}, {"wall_ms", std::round(r.wall_ms)}};
  if (!r.hangup_reason.empty()) j["hangup"] = r.hangup_reason;
  if (!r.transfer_reason.empty()) j["transfer"] = r.transfer_reason;
  return j.dump(2);
}

namespace {

constexpr char kUsage[] =
    "usage: hotline call CALLER.wav [--out REPLY.wav] [--json] [--config FILE] [--set key=value ...]\n"
    "                    [--realtime | --fast] [--kb FILE.csv] [--caller-id NUMBER]\n"
    "                    [--domain retail|banking]\n"
    "  Plays a recorded caller into a call session over an 8 kHz mu-law line (in real time unless\n"
    "  --fast) and prints each turn's transcript, answer, tier and latency ledger (ms from the\n"
    "  caller's speech end). --out writes the agent's channel as heard on the line.\n"
    "  --domain NAME selects a shipped line's knowledge base and configuration preset (banking:\n"
    "  assets/kb/banking/kb.csv with config/banking.yaml); --kb and --config still override.\n";

int RunCall(std::span<const std::string> argv) {
  auto parsed =
      Args::Parse(argv, {"--config", "--set", "--out", "--kb", "--caller-id", "--domain"});
  if (!parsed.ok()) return UsageError(parsed.status().message(), kUsage);
  Args& args = *parsed;
  // A shipped line of business: its knowledge base and preset (app/domain.h).
  DomainFiles domain{std::string(HOTLINE_ASSETS_DIR) + "/kb/bitext_kb.csv", ""};
  if (auto name = args.Get("--domain")) {
    auto resolved = ResolveDomain(*name);
    if (!resolved.ok()) return UsageError(resolved.status().message(), kUsage);
    domain = *resolved;
  }
  const std::string config_path = args.GetOr("--config", domain.config);
  const std::vector<std::string> overrides = args.GetAll("--set");
  const std::string out_path = args.GetOr("--out", "");
  const std::string kb_csv = args.GetOr("--kb", domain.kb_csv);
  const std::string caller_id = args.GetOr("--caller-id", "+15550100");
  const bool json = args.Has("--json");
  const bool fast = args.Has("--fast");
  if (fast && args.Has("--realtime")) return UsageError("--realtime and --fast exclude each other", kUsage);
  if (Status s = args.Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  if (args.positional().size() != 1) return UsageError("expected one CALLER.wav", kUsage);

  auto cfg = LoadHotlineConfig(config_path, overrides);
  if (!cfg.ok()) return Fail(cfg.status());
  InitLogging(cfg->log_level == "info" ? "warn" : cfg->log_level);
  auto caller = audio::ReadAudioFile(args.positional()[0], 0, cfg->audio.wav);
  if (!caller.ok()) return Fail(caller.status());

  pipeline::CallStackOptions options = CallStackOptionsFrom(*cfg);
  const std::filesystem::path kb_db = std::filesystem::temp_directory_path() /
                                      ("hotline-call-" + std::to_string(getpid()) + ".kb.sqlite");
  options.kb_db = kb_db.string();
  options.kb_csv = kb_csv;
  auto stack = pipeline::CallStack::Build(options);
  std::error_code ec;
  if (!stack.ok()) {
    std::filesystem::remove(kb_db, ec);
    return Fail(stack.status());
  }
  pipeline::CallInfo info;
  info.call_id = std::filesystem::path(args.positional()[0]).filename().string();
  info.caller_id = caller_id;
  pipeline::FileCallOptions run;
  run.realtime = !fast;
  auto result = pipeline::RunFileCall((*stack)->resources(), info, {caller->audio}, run);
  if ((*stack)->records() != nullptr) (*stack)->records()->Flush();
  stack->reset();
  for (const char* suffix : {"", ".lm", ".lm.dict"}) {
    std::filesystem::remove(kb_db.string() + suffix, ec);
  }
  if (!result.ok()) return Fail(result.status());
  if (!out_path.empty()) {
    if (Status s = audio::WriteWavFile(out_path, result->reply, audio::Codec::kPcm16); !s.ok()) {
      return Fail(s);
    }
  }
  if (json) {
    std::cout << CallReportJson(*result) << "\n";
  } else {
    PrintCallReport(*result, stdout);
    if (!out_path.empty()) {
      std::printf("\nreply channel: %s (%lld ms)\n", out_path.c_str(),
                  static_cast<long long>(result->reply.duration_ms()));
    }
  }
  return 0;
}

const CommandRegistrar kCall({"call", "play a recorded caller through a call session", kUsage,
                              RunCall});

}  // namespace
}  // namespace hotline::cli
