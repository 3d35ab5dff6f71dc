// TurnDetector: how long a silence ends the caller's turn, decided afresh every 20 ms frame from
// everything the call knows:
//   - the words: the end probability of the partial transcript (TurnEndModel, learned from
//     question corpora: "when will i" cannot end a question, "my refund" can);
//   - the recognizer's state: a partial that changed within `open_word_ms` means a word is still
//     being decoded (the last word heard may not be the last word said);
//   - the voice: final pitch fall, energy decay and final lengthening (audio::ProsodyTracker).
// These add up as log-odds z that the turn is over; the wait is
//   clamp(center_wait_ms - ms_per_logit * z, min_wait_ms, max_wait_ms),
// very short when the turn is clearly over, up to the bounded maximum when it clearly is not.
// The caller hands the wait to audio::Endpointer::SetSilenceNeededMs every frame.
//
//   asr::TurnDetector turn(config.asr.turn, model);   // per call; model shared by all calls
//   turn.Reset();                                      // at every utterance start
//   turn.OnFrame(frame, vad.speech, now_ms);           // every frame of the utterance
//   turn.OnPartial(partial.text, now_ms);              // at every new partial revision
//   endpointer.SetSilenceNeededMs(turn.WaitMs(now_ms));
//
// Thread-safety: one per call, used from one thread at a time. OnFrame/WaitMs do not allocate;
// OnPartial allocates a little (the words of the partial).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "asr/asr_config.h"
#include "asr/turn_end_model.h"
#include "audio/pcm.h"
#include "audio/prosody.h"

namespace hotline::asr {

// The inputs of one decision, for evaluation and logs.
struct TurnEvidence {
  double lexical_p = 0;    // TurnEndModel end probability of the partial
  bool open_word = false;  // the partial changed within open_word_ms
  audio::ProsodyFeatures prosody;
  double logit = 0;  // the summed log-odds
  int wait_ms = 0;
};

// The model file of `config` (its `model`, or the shipped assets/turns/turn_end.model).
std::string TurnEndModelPath(const TurnDetectorConfig& config);
// Loads it, for sharing by every call's detector.
Result<std::shared_ptr<const TurnEndModel>> LoadTurnEndModel(const TurnDetectorConfig& config);

class TurnDetector {
 public:
  // REQUIRES: config.Validate().ok(); `model` non-null.
  TurnDetector(const TurnDetectorConfig& config, std::shared_ptr<const TurnEndModel> model);

  void Reset();
  void OnFrame(audio::AudioView frame, bool speech, int64_t now_ms);
  void OnPartial(std::string_view text, int64_t now_ms);
  int WaitMs(int64_t now_ms) const { return Evidence(now_ms).wait_ms; }
  TurnEvidence Evidence(int64_t now_ms) const;

  // The decision itself, from its inputs (what Evidence() computes; the evaluation replays it
  // for many configurations over one trace). `ms_since_partial_change` < 0: no partial yet.
  static TurnEvidence Decide(const TurnDetectorConfig& config, double lexical_p, bool partial_empty,
                             int64_t ms_since_partial_change,
                             const audio::ProsodyFeatures& prosody);
  const audio::ProsodyFeatures& prosody() const { return prosody_.features(); }
  double lexical_p() const { return lexical_p_; }

  const TurnDetectorConfig& config() const { return config_; }

 private:
  TurnDetectorConfig config_;
  std::shared_ptr<const TurnEndModel> model_;
  audio::ProsodyTracker prosody_;
  std::string partial_;
  double lexical_p_ = 0;
  int64_t partial_changed_ms_ = -1;
};

}  // namespace hotline::asr
