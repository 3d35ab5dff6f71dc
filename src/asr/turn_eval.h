// Turn-taking evaluation (`hotline eval turns`): runs an utterance through the objects a call
// uses — audio::Vad, asr::RecognizerStream, asr::TurnDetector, audio::Endpointer — frame by
// frame, faster than real time, and measures when each end-of-turn policy would have ended the
// caller's turn: too early (a false cut-off: the turn ended before the caller's last word) or
// how long after the caller's last word.
//
// Tracing is separated from deciding: TraceUtterance() runs the VAD, the recognizer (one stream,
// fed every frame from the first, as a call feeds it from its pre-roll) and the detector's
// inputs (end probability of each partial, prosody) once; ReplayPolicy() then runs a real
// Endpointer over the trace for any policy (the fixed silence rule with or without the
// looks-complete hint, or the detector with any TurnDetectorConfig) through the same decision
// code a call runs (TurnDetector::Decide). Until the first end of turn every policy sees the same
// audio and partials, and only the first end of turn is scored, so one trace serves all.
//
// Thread-safety: functions; TraceUtterance uses the given stream only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "asr/asr_config.h"
#include "asr/recognizer.h"
#include "asr/turn_detector.h"
#include "audio/endpointer.h"
#include "audio/pcm.h"
#include "audio/prosody.h"
#include "audio/vad.h"

namespace hotline::asr {

// One test utterance: audio as the call hears it, and where the caller's speech truly ends.
struct TurnUtterance {
  audio::AudioBuffer audio;     // 8 or 16 kHz mono
  int64_t speech_end_ms = 0;    // end of the caller's last word, from the start of `audio`
  int pause_ms = 0;             // length of the inserted pause (0: none)
  int64_t pause_start_ms = -1;  // start of the inserted pause
};

struct TurnFrame {
  bool speech = false;              // VAD verdict
  int64_t now_ms = 0;               // end of this frame
  double lexical_p = 0;             // end probability of the partial after this frame
  int64_t partial_changed_ms = -1;  // when the partial text last changed (-1: never)
  bool partial_empty = true;
  bool hint = false;               // the old rule's looks-complete hint is set after this frame
  audio::ProsodyFeatures prosody;  // after this frame
};

struct TurnTrace {
  std::vector<TurnFrame> frames;
  std::string final_partial;  // the partial at the end of the audio
};

// Whether the pipeline's old rule would set the looks-complete hint for a stable partial (the
// answerer's cached tiers answer it). Called once per distinct stable partial.
using LooksCompleteFn = std::function<bool(const std::string& partial_text)>;

// Runs VAD, recognizer and the detector's inputs over `u`. `vad` is reset first; `stream` must be
// fresh (at u.audio's rate).
Result<TurnTrace> TraceUtterance(const TurnUtterance& u, audio::Vad& vad, RecognizerStream& stream,
                                 std::shared_ptr<const TurnEndModel> model,
                                 const LooksCompleteFn& looks_complete);

// An end-of-turn policy: the endpointer's fixed rule (trailing silence, with the looks-complete
// hint when `use_hint`), or the detector.
struct TurnPolicy {
  std::string name;
  audio::EndpointerConfig endpointer;
  bool use_hint = false;
  bool use_detector = false;
  TurnDetectorConfig detector;
};

struct TurnOutcome {
  bool ended = false;     // an end of turn happened within the audio
  bool cut_off = false;   // it happened before the caller's last word
  int64_t end_ms = -1;    // when
  int64_t delay_ms = -1;  // end_ms - speech_end_ms when not cut off
};

TurnOutcome ReplayPolicy(const TurnUtterance& u, const TurnTrace& trace, const TurnPolicy& policy);

// Summary of outcomes: cut-off share and delay percentiles (of the turns not cut off; a turn
// never ended counts with the audio's remaining length).
struct TurnStats {
  int n = 0;
  int cut_offs = 0;
  double cut_off_rate() const { return n > 0 ? static_cast<double>(cut_offs) / n : 0; }
  std::vector<int64_t> delays_ms;
  double DelayPercentile(double q) const;  // -1 when there are none
};

}  // namespace hotline::asr
