// Endpointer: turns per-frame speech decisions into caller turns.
//
// States: waiting → (speech for `start_speech_ms`) → in utterance → (trailing silence, or the
// maximum length) → waiting. The turn ends after `trailing_silence_ms` of silence, or after the
// shorter `complete_silence_ms` when the pipeline says the partial transcript already reads as a
// complete question (SetLooksComplete). An utterance with less than `min_speech_ms` of speech in
// total (a cough, a click) is discarded instead of becoming a turn.
//
// Times are stream times in ms: the end of the frame that was pushed last; frames are 20 ms.
//
// Thread-safety: one per call, used from one thread at a time. No allocation.
#pragma once

#include <cstdint>

#include "audio/pcm.h"
#include "common/status.h"

namespace hotline::audio {

struct EndpointerConfig {
  // Silence that ends a turn. Longer never cuts a caller who pauses to think, shorter answers
  // sooner. Must stay above the pauses callers make inside a sentence (~300 ms).
  int trailing_silence_ms = 500;
  // Silence that ends a turn when the partial transcript already reads as a complete question.
  // Shorter answers sooner; it only applies while the hint is set.
  int complete_silence_ms = 240;
  // Continuous speech needed to open an utterance. Longer ignores clicks and line bursts, shorter
  // reacts sooner (the utterance start is stamped at the first of these frames either way).
  int start_speech_ms = 60;
  // Speech (total, within the utterance) needed for it to count as a turn. Shorter lets "no"
  // through, longer drops more coughs.
  int min_speech_ms = 200;
  // Longest turn; a caller who keeps talking is cut here so the pipeline can still answer.
  int max_utterance_ms = 20000;

  template <class V>
  void Visit(V& v) {
    v.Field("trailing_silence_ms", trailing_silence_ms, "Silence that ends a turn (ms)");
    v.Field("complete_silence_ms", complete_silence_ms,
            "Silence that ends a turn that already reads as complete (ms)");
    v.Field("start_speech_ms", start_speech_ms, "Continuous speech that opens an utterance (ms)");
    v.Field("min_speech_ms", min_speech_ms, "Total speech for an utterance to count (ms)");
    v.Field("max_utterance_ms", max_utterance_ms, "Longest turn (ms)");
  }
  Status Validate() const;
};

enum class EndpointEvent : uint8_t {
  kNone,
  kSpeechStart,  // an utterance opened (possible barge-in; start streaming to ASR)
  kEndOfTurn,    // the caller finished: finalize ASR and answer
  kMaxLength,    // the utterance hit max_utterance_ms: treat as end of turn
  kDiscarded,    // the utterance ended with too little speech: drop it
};

const char* EndpointEventName(EndpointEvent e);

struct EndpointUpdate {
  EndpointEvent event = EndpointEvent::kNone;
  int64_t now_ms = 0;           // stream time at the end of the pushed frame
  int64_t speech_start_ms = -1;  // start of the current/last utterance (-1 before any)
  int64_t speech_end_ms = -1;    // end of its last speech frame (set with end events)
};

class Endpointer {
 public:
  // REQUIRES: config.Validate().ok().
  explicit Endpointer(const EndpointerConfig& config) : config_(config) {}

  // Pushes the VAD decision of the next 20 ms frame.
  EndpointUpdate Push(bool speech);

  // The pipeline's hint that the partial transcript reads as a complete question; cleared at
  // every new utterance.
  void SetLooksComplete(bool complete) { looks_complete_ = complete; }

  // The silence that ends the current utterance, chosen continuously by a turn detector
  // (asr/turn_detector.h) from the words, the recognizer and the voice; clamped to
  // [kFrameMs, max_utterance_ms]. While set it replaces both trailing_silence_ms and the
  // looks-complete hint; 0 goes back to them. Cleared at every new utterance.
  void SetSilenceNeededMs(int ms) { silence_needed_ms_ = ms; }

  bool in_utterance() const { return in_utterance_; }
  int64_t now_ms() const { return now_ms_; }
  // Starts over at time 0 (a new call).
  void Reset();

 private:
  EndpointerConfig config_;
  int64_t now_ms_ = 0;
  bool in_utterance_ = false;
  bool looks_complete_ = false;
  int silence_needed_ms_ = 0;  // 0: the config's rule
  int run_speech_ms_ = 0;      // consecutive speech while waiting
  int total_speech_ms_ = 0;    // speech within the utterance
  int silence_ms_ = 0;         // trailing silence within the utterance
  int64_t start_ms_ = -1;
  int64_t last_speech_end_ms_ = -1;
};

}  // namespace hotline::audio
