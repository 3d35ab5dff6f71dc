// ProsodyTracker: the cues of a turn's end that live in the voice, not the words: pitch fall at
// the end of the last stretch of speech, final lengthening of the last voiced run, and energy
// decay into the pause.
//
// Per 20 ms frame (8 or 16 kHz; 16 kHz is averaged down to 8 kHz first) the tracker measures the
// level and, on a 40 ms window (this frame and the previous one), the pitch by normalized
// autocorrelation over 80-400 Hz; a frame is voiced when the peak correlation passes 0.5 and
// it is speech by the VAD. Features describe the utterance up to its last speech frame, so they
// stay fixed while the caller is silent:
//   pitch_fall_st   mean voiced pitch of the utterance minus the mean of its last 3 voiced frames
//                   (semitones; > 0 ends low, as statements and most questions do)
//   final_slope_st  last voiced frame minus the voiced frame ~200 ms before it (semitones)
//   energy_drop_db  mean speech level of the utterance minus the last 100 ms of speech
//   lengthening     last voiced run / mean voiced run (final syllables are drawn out)
//
// Thread-safety: one per call, used from one thread at a time. No allocation after construction;
// Push() costs ~26k multiply-adds (81 lags x 160 samples x 2).
#pragma once

#include <array>
#include <cstdint>

#include "audio/pcm.h"

namespace hotline::audio {

struct ProsodyFeatures {
  bool valid = false;  // at least 3 voiced frames so far
  float pitch_fall_st = 0;
  float final_slope_st = 0;
  float energy_drop_db = 0;
  float lengthening = 1;
  int voiced_frames = 0;
};

class ProsodyTracker {
 public:
  // Forgets the utterance (call at every new utterance).
  void Reset();
  // One 20 ms frame (160 samples at 8 kHz or 320 at 16 kHz; other sizes are ignored) and the
  // VAD's verdict on it.
  void Push(AudioView frame, bool speech);
  // The features of the utterance so far (up to its last speech frame).
  const ProsodyFeatures& features() const { return features_; }
  // Pitch of the last pushed frame in Hz (0 when unvoiced): for tests and logs.
  float last_pitch_hz() const { return last_pitch_hz_; }

 private:
  static constexpr int kFrame = 160;   // 20 ms at 8 kHz
  static constexpr int kHistory = 16;  // voiced frames remembered (320 ms)
  void Update();

  std::array<float, 2 * kFrame> window_{};  // previous frame, this frame (8 kHz)
  float last_pitch_hz_ = 0;
  // Utterance statistics up to the last speech frame.
  double pitch_sum_st_ = 0;
  int voiced_ = 0;
  double speech_level_sum_db_ = 0;
  int speech_frames_ = 0;
  std::array<float, kHistory> recent_pitch_st_{};  // ring of the last voiced frames' pitch
  int recent_pitch_n_ = 0;
  std::array<float, 5> recent_level_db_{};  // ring of the last speech frames' level
  int recent_level_n_ = 0;
  int run_ = 0;       // current voiced run (frames)
  int last_run_ = 0;  // the last finished or current voiced run
  int runs_ = 0;      // finished voiced runs
  int run_sum_ = 0;   // frames in finished runs
  ProsodyFeatures features_;
};

}  // namespace hotline::audio
