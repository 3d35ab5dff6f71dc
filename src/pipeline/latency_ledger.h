// Latency ledger of one turn and the pipeline's Prometheus metrics.
//
// Each stamp is milliseconds since the call started on the session's clock (-1: did not
// happen). speech_start / speech_end are the caller's speech as the endpointer saw it, mapped
// onto the clock through the arrival time of the frame that ended the turn, so with a transport
// that delivers audio in real time (Twilio, `hotline call` by default) every stamp is wall time.
// Voice-to-voice is speech_end → first_audio_sent.
//
// `understood` is when the answerer had normalized the question and found its intent (reported
// by the answerer after the fact; -1 for prepared answers, understood before the turn ended).
// `llm_first_token` is -1 on tiers other than the language model.
//
// PipelineMetrics registers its families once per registry (call set-up); updates are atomics.
// Thread-safety: TurnLedger is a plain value (the session guards it); PipelineMetrics may be used
// from any thread.
#pragma once

#include <string>
#include <string_view>

#include "common/metrics.h"

namespace hotline::pipeline {

struct TurnLedger {
  double speech_start = -1;
  double speech_end = -1;
  double end_of_turn = -1;  // the endpointer's decision (speech_end + trailing silence)
  double asr_final = -1;
  double understood = -1;
  double cache_result = -1;
  double llm_first_token = -1;
  double first_sentence = -1;
  double tts_first_audio = -1;
  double first_audio_sent = -1;
  double turn_done = -1;
  double barge_in = -1;

  // speech_end → first_audio_sent, or -1.
  double VoiceToVoiceMs() const;
  // {"speech_start":..,...,"voice_to_voice":..} with every stamp relative to `origin` ms (the
  // unset ones as null).
  std::string ToJson(double origin) const;
};

struct PipelineMetrics {
  explicit PipelineMetrics(MetricsRegistry& registry);

  Counter& calls;
  Counter& turns;
  Counter& barge_ins;
  Counter& barge_in_pauses;   // playback paused for probable caller speech
  Counter& barge_in_resumes;  // ... and resumed, the speech not confirmed
  Counter& reprompts;
  Counter& hangups;
  Counter& transfers;
  Counter& audio_dropped_frames;  // inbound frames refused because the queue was full
  Counter& records_dropped;
  Counter& prework_hits;          // turns answered with audio prepared before the turn ended
  Counter& prefetches;            // model prompts prefetched from a stable partial
  Counter& speculation_hits;      // ... started before the final transcript, which confirmed it
  Counter& speculation_misses;    // ... started, then stopped: the final transcript differed
  Histogram& endpointing_s;       // speech_end → end_of_turn
  Histogram& asr_s;               // end_of_turn → asr_final
  Histogram& answer_s;            // asr_final → answer ready
  Histogram& tts_first_audio_s;   // first_sentence → tts_first_audio
  Histogram& voice_to_voice_s;    // speech_end → first_audio_sent

  // One counter per tier / error kind (registered on first use; a lock, once per turn at most).
  void CountTier(std::string_view tier);
  void CountError(std::string_view kind);
  // A turn the session answered itself, by dialogue act (thanks, hello, repeat, ask_if_machine).
  void CountSocial(std::string_view act);
  // Observes the stage histograms of a finished turn, and end_of_turn → first_audio_sent in
  // hotline_pipeline_after_endpoint_seconds{tier} (what the answer tiers add to endpointing).
  void ObserveTurn(const TurnLedger& ledger, std::string_view tier);

 private:
  MetricsRegistry& registry_;
};

}  // namespace hotline::pipeline
