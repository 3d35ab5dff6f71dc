// Level measurement and silence trimming for PCM16.
//
// Levels are in dBFS with 0 dBFS = the RMS of a full-scale square wave (32768), so a full-scale
// sine reads -3.01 dBFS; digital silence reads kSilenceDbfs rather than -infinity so that the
// value can be printed, averaged and compared. (Same convention as LevelDbfs in vad.h.)
//
// Thread-safety: pure functions; call from any thread. Nothing here allocates except
// TrimSilence, which returns a new buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "audio/pcm.h"
#include "common/status.h"

namespace hotline::audio {

// The level reported for digital silence and empty input.
inline constexpr double kSilenceDbfs = -120.0;

// RMS level of `samples` in dBFS, at least kSilenceDbfs.
double RmsDbfs(std::span<const int16_t> samples);

// Largest absolute sample value (0..32768).
int PeakAbs(std::span<const int16_t> samples);

// A peak value in dBFS (32768 = 0 dBFS), at least kSilenceDbfs.
double PeakDbfs(int peak_abs);

struct TrimConfig {
  // A 20 ms frame is sound when its RMS level is above this. Lower keeps soft breaths and
  // hiss; higher cuts soft word onsets in quiet recordings. -45 dBFS sits between phone-line
  // noise (~-60..-50) and speech (~-35..-15).
  double threshold_dbfs = -45.0;
  // Silence kept before the first and after the last sound frame, in ms, so word onsets and
  // decays survive the cut. Longer is safer, shorter is tighter.
  int keep_ms = 100;

  template <class V>
  void Visit(V& v) {
    v.Field("threshold_dbfs", threshold_dbfs, "Frames above this RMS level count as sound");
    v.Field("keep_ms", keep_ms, "Silence kept around the sound, in ms");
  }
  Status Validate() const;
};

// [begin, end) sample range of the buffer that holds sound, widened by keep_ms on each side and
// clamped to the buffer. Empty (begin == end) when no frame is above the threshold.
struct SampleRange {
  size_t begin = 0;
  size_t end = 0;
};
SampleRange FindSoundRange(AudioView audio, const TrimConfig& config = {});

// A copy of the sound range of `audio` (leading and trailing silence removed).
AudioBuffer TrimSilence(AudioView audio, const TrimConfig& config = {});

}  // namespace hotline::audio
