// "How much of this recording is speech?" — a cheap energy measure for reports (`audio info`),
// not the VAD used for turn-taking (that is vad.h).
//
// Each 20 ms frame's RMS level is compared with an adaptive noise floor: the floor drops at once
// to any quieter frame and rises slowly (floor_rise_db_per_s) otherwise, so it follows line noise
// and hum but not speech. A frame is speech-like when it is margin_db above the floor and louder
// than min_level_dbfs. Offline, MeasureSpeechShare starts the floor at a low percentile of the
// whole file's frame levels, so a file that starts mid-sentence is judged like one that does not.
//
// Thread-safety: a SpeechLikeMeter is used by one thread at a time; MeasureSpeechShare is pure.
// Push() does not allocate.
#pragma once

#include <cstdint>
#include <limits>
#include <span>

#include "audio/pcm.h"
#include "common/status.h"

namespace hotline::audio {

struct SpeechShareConfig {
  // dB above the noise floor for a frame to count as speech-like. Lower counts soft speech and
  // also noise bursts; higher counts only clear speech.
  double margin_db = 10.0;
  // Frames quieter than this never count, whatever the floor (digital silence, faint hiss).
  double min_level_dbfs = -50.0;
  // How fast the floor rises towards louder frames, dB per second. Faster follows a noisier line
  // sooner; slower keeps long speech from being taken for noise.
  double floor_rise_db_per_s = 3.0;

  template <class V>
  void Visit(V& v) {
    v.Field("margin_db", margin_db, "dB above the noise floor for a speech-like frame");
    v.Field("min_level_dbfs", min_level_dbfs, "Frames quieter than this never count as speech");
    v.Field("floor_rise_db_per_s", floor_rise_db_per_s, "Noise floor rise rate, dB per second");
  }
  Status Validate() const;
};

class SpeechLikeMeter {
 public:
  // `initial_floor_dbfs`: starting noise floor; NaN starts from the first frame's level.
  explicit SpeechLikeMeter(const SpeechShareConfig& config = {},
                           double initial_floor_dbfs = std::numeric_limits<double>::quiet_NaN());

  // Judges one frame (20 ms expected; any length works). Returns whether it is speech-like.
  bool Push(AudioView frame);

  int64_t frames() const { return frames_; }
  int64_t speech_like_frames() const { return speech_like_; }
  // speech_like_frames / frames (0 before any frame).
  double share() const { return frames_ > 0 ? static_cast<double>(speech_like_) / frames_ : 0.0; }
  double noise_floor_dbfs() const { return floor_dbfs_; }

 private:
  SpeechShareConfig config_;
  double floor_dbfs_;
  int64_t frames_ = 0;
  int64_t speech_like_ = 0;
};

struct SpeechShare {
  int64_t frames = 0;
  int64_t speech_like_frames = 0;
  double share = 0.0;              // in [0, 1]
  double noise_floor_dbfs = -120;  // the floor at the end of the recording
};

// Runs a SpeechLikeMeter over `audio` in 20 ms frames (a final partial frame counts if it is at
// least 10 ms long). Allocates a small vector of frame levels.
SpeechShare MeasureSpeechShare(AudioView audio, const SpeechShareConfig& config = {});

}  // namespace hotline::audio
