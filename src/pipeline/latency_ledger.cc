#include "pipeline/latency_ledger.h"

#include <cmath>

#include <nlohmann/json.hpp>

namespace hotline::pipeline {

double TurnLedger::VoiceToVoiceMs() const {
  if (speech_end < 0 || first_audio_sent < 0) return -1;
  return first_audio_sent - speech_end;
}

std::string TurnLedger::ToJson(double origin) const {
  nlohmann::json j = nlohmann::json::object();
  auto put = [&](const char* name, double v) {
    if (v < 0) {
      j[name] = nullptr;
    } else {
      j[name] = std::round((v - origin) * 10.0) / 10.0;
    }
  };
  put("speech_start", speech_start);
  put("speech_end", speech_end);
  put("end_of_turn", end_of_turn);
  put("asr_final", asr_final);
  put("understood", understood);
  put("cache_result", cache_result);
  put("llm_first_token", llm_first_token);
  put("first_sentence", first_sentence);
  put("tts_first_audio", tts_first_audio);
  put("first_audio_sent", first_audio_sent);
  put("turn_done", turn_done);
  put("barge_in", barge_in);
  double v2v = VoiceToVoiceMs();
  if (v2v < 0) {
    j["voice_to_voice"] = nullptr;
  } else {
    j["voice_to_voice"] = std::round(v2v * 10.0) / 10.0;
  }
  return j.dump();
}

PipelineMetrics::PipelineMetrics(MetricsRegistry& r)
    : calls(r.GetCounter("hotline_pipeline_calls_total", "Calls started")),
      turns(r.GetCounter("hotline_pipeline_turns_total", "Caller turns handled")),
      barge_ins(r.GetCounter("hotline_pipeline_barge_ins_total",
                             "Times the caller interrupted the agent")),
      barge_in_pauses(r.GetCounter("hotline_pipeline_barge_in_pauses_total",
                                   "Times playback paused for probable caller speech")),
      barge_in_resumes(r.GetCounter("hotline_pipeline_barge_in_resumes_total",
                                    "Paused playback resumed (the caller speech was not confirmed)")),
      reprompts(r.GetCounter("hotline_pipeline_reprompts_total", "Re-prompts after silence")),
      hangups(r.GetCounter("hotline_pipeline_agent_hangups_total", "Calls the agent ended")),
      transfers(r.GetCounter("hotline_pipeline_transfers_total", "Calls handed to a human agent")),
      audio_dropped_frames(r.GetCounter("hotline_pipeline_audio_dropped_total",
                                        "Inbound audio payloads dropped (per-call queue full)")),
      records_dropped(r.GetCounter("hotline_pipeline_records_dropped_total",
                                   "Turn records dropped (record writer behind)")),
      prework_hits(r.GetCounter("hotline_pipeline_prework_hits_total",
                                "Turns answered with audio prepared before the turn ended")),
      prefetches(r.GetCounter("hotline_pipeline_prefetches_total",
                              "Model prompts prefetched while the caller was still talking")),
      speculation_hits(r.GetCounter("hotline_pipeline_speculation_hits_total",
                                    "Prepared answers started before the final transcript, confirmed")),
      speculation_misses(r.GetCounter("hotline_pipeline_speculation_misses_total",
                                      "Prepared answers started, then stopped by a different final transcript")),
      endpointing_s(r.GetHistogram("hotline_pipeline_stage_seconds", "Latency per stage",
                                   LatencyBucketsSeconds(), {{"stage", "endpointing"}})),
      asr_s(r.GetHistogram("hotline_pipeline_stage_seconds", "Latency per stage",
                           LatencyBucketsSeconds(), {{"stage", "asr"}})),
      answer_s(r.GetHistogram("hotline_pipeline_stage_seconds", "Latency per stage",
                              LatencyBucketsSeconds(), {{"stage", "answer"}})),
      tts_first_audio_s(r.GetHistogram("hotline_pipeline_stage_seconds", "Latency per stage",
                                       LatencyBucketsSeconds(), {{"stage", "tts_first_audio"}})),
      voice_to_voice_s(r.GetHistogram("hotline_pipeline_voice_to_voice_seconds",
                                      "Caller's last word to the agent's first audio",
                                      LatencyBucketsSeconds())),
      registry_(r) {}

void PipelineMetrics::CountTier(std::string_view tier) {
  registry_
      .GetCounter("hotline_pipeline_answers_total", "Answers by tier",
                  {{"tier", std::string(tier)}})
      .Increment();
}

void PipelineMetrics::CountError(std::string_view kind) {
  registry_
      .GetCounter("hotline_pipeline_errors_total", "Stage failures and time-outs by kind",
                  {{"kind", std::string(kind)}})
      .Increment();
}

void PipelineMetrics::CountSocial(std::string_view act) {
  registry_
      .GetCounter("hotline_pipeline_social_turns_total",
                  "Turns the session answered itself, by dialogue act", {{"act", std::string(act)}})
      .Increment();
}

void PipelineMetrics::ObserveTurn(const TurnLedger& l, std::string_view tier) {
  auto observe = [](Histogram& h, double from, double to) {
    if (from >= 0 && to >= from) h.Observe((to - from) / 1000.0);
  };
  observe(endpointing_s, l.speech_end, l.end_of_turn);
  observe(asr_s, l.end_of_turn, l.asr_final);
  double answered = l.cache_result >= 0 ? l.cache_result : l.llm_first_token;
  observe(answer_s, l.asr_final, answered);
  observe(tts_first_audio_s, l.first_sentence, l.tts_first_audio);
  observe(voice_to_voice_s, l.speech_end, l.first_audio_sent);
  if (!tier.empty() && l.end_of_turn >= 0 && l.first_audio_sent >= l.end_of_turn) {
    registry_
        .GetHistogram("hotline_pipeline_after_endpoint_seconds",
                      "End of the caller's turn to the first audio sent, by answering tier",
                      LatencyBucketsSeconds(), {{"tier", std::string(tier)}})
        .Observe((l.first_audio_sent - l.end_of_turn) / 1000.0);
  }
}

}  // namespace hotline::pipeline
