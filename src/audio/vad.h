// Voice activity detection on 20 ms telephone frames (8 or 16 kHz).
//
// The detector splits each frame's spectrum (FFT of a Hann-windowed frame) into six bands
// covering the telephone band, 200-3600 Hz, and keeps an adaptive noise floor per band: the floor
// follows quiet frames quickly downwards and rises slowly (faster in non-speech frames than in
// speech), so a constant hum, hiss or line noise becomes the floor after a few hundred ms. The
// speech score of a frame is the mean SNR of its three strongest bands above their floors: voiced
// speech lifts a few formant bands far above the floor, broadband noise lifts all bands a little.
// A frame is speech when the score passes `threshold_db` (stays speech while above
// `threshold_db - hysteresis_db`), its level is above `min_level_dbfs`, and a short hangover keeps
// the last word's weak tail.
//
// The same six bands are used at 8 and 16 kHz, so telephone audio upsampled to 16 kHz and the
// original 8 kHz audio are judged alike; at 16 kHz a seventh band, 3600-7200 Hz, adds the
// fricatives ("s", "f", "th") that carry the ends of many words and lie above the telephone band.
//
// The floor tracks the quiet frames, so steady noise sits a few dB above it (its own
// frame-to-frame scatter); that excess is learned outside speech and taken off every band's SNR.
// The floor is lifted to the quietest frame of the tracker window only when the window is steady
// (the telephone-band level barely moves), so a long sentence without a pause is never learned as noise,
// while a step up in line noise is.
//
// Thread-safety: one Vad per call, used from one thread at a time. Process() does not allocate.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "audio/pcm.h"
#include "common/status.h"

namespace hotline::audio {

struct VadConfig {
  // Mean SNR (dB) of the strongest bands that starts speech. Lower catches soft speech, higher
  // rejects more noise bursts.
  double threshold_db = 9.0;
  // Speech continues while the score stays above threshold_db - hysteresis_db. Larger keeps
  // soft word endings, smaller ends speech sooner.
  double hysteresis_db = 6.0;
  // Frames quieter than this (RMS, dBFS) are never speech, whatever the noise floor says.
  // Guards against amplified digital silence; too high misses soft callers.
  double min_level_dbfs = -55.0;
  // Frames kept as speech after the score drops. Longer keeps weak tails (and adds delay to
  // every end of turn); shorter ends speech promptly.
  int hangover_ms = 40;
  // How fast the noise floor rises while no speech is detected (dB per second). Faster follows
  // a noisier line sooner; slower keeps long soft speech from becoming "noise".
  double noise_rise_db_per_s = 10.0;
  // How fast the noise floor rises during speech (dB per second). Keeps the detector from
  // locking into "speech" forever when the noise level steps up.
  double speech_noise_rise_db_per_s = 1.0;
  // Window of the minimum tracker: the floor never stays below the quietest frame of this window,
  // so a step up in line noise is learned within it even if it was first taken for speech. Must
  // be longer than the longest stretch of speech without a dip; shorter adapts sooner.
  int noise_window_ms = 2000;

  template <class V>
  void Visit(V& v) {
    v.Field("threshold_db", threshold_db, "Band SNR (dB) that starts speech");
    v.Field("hysteresis_db", hysteresis_db, "Speech continues down to threshold_db - this");
    v.Field("min_level_dbfs", min_level_dbfs, "Frames quieter than this are never speech");
    v.Field("hangover_ms", hangover_ms, "Speech kept after the score drops (ms)");
    v.Field("noise_rise_db_per_s", noise_rise_db_per_s,
            "Noise floor rise rate outside speech (dB/s)");
    v.Field("speech_noise_rise_db_per_s", speech_noise_rise_db_per_s,
            "Noise floor rise rate during speech (dB/s)");
    v.Field("noise_window_ms", noise_window_ms,
            "The floor rises at least to the quietest frame of this window (ms)");
  }
  Status Validate() const;
};

// The verdict on one frame.
struct VadFrame {
  bool speech = false;
  float score_db = 0;      // mean SNR of the strongest bands above their noise floors
  float level_dbfs = -120;  // RMS level of the frame (0 dBFS = full-scale square wave)
  float noise_dbfs = -120;  // mean noise floor over the bands, for logs and meters
};

// RMS level of `samples` in dBFS (-120 for silence or an empty span). No allocation.
float LevelDbfs(std::span<const int16_t> samples);

class Vad {
 public:
  static constexpr int kBands = 7;  // at most; 6 at 8 kHz

  // REQUIRES: config.Validate().ok() (use Create() to check). `sample_rate_hz` is 8000 or 16000.
  static Result<Vad> Create(const VadConfig& config, int sample_rate_hz);

  // Judges one 20 ms frame (160 samples at 8 kHz, 320 at 16 kHz; InvalidArgument otherwise).
  Result<VadFrame> Process(AudioView frame);

  // Forgets the noise floor and state (a new call).
  void Reset();

  int sample_rate_hz() const { return rate_hz_; }
  size_t frame_samples() const { return frame_samples_; }

 private:
  Vad(const VadConfig& config, int rate_hz);
  // The stages of Process: the frame's level per band (dB), its SNR score against the noise
  // floor, the speech decision with its hangover, and the noise floor learned from the frame
  // (returns the floor's mean over the bands, dBFS).
  std::array<float, kBands> BandLevels(std::span<const int16_t> samples);
  float Score(const std::array<float, kBands>& band_db) const;
  bool Decide(bool active);
  float LearnNoise(const std::array<float, kBands>& band_db, bool active);
  // Adds the frame to the noise window; with the window full, gives its per-band minimum and
  // mean and returns whether it is steady enough (noise, not speech) to lift the floor.
  bool RememberSteadiness(const std::array<float, kBands>& band_db,
                          std::array<float, kBands>& window_min,
                          std::array<float, kBands>& window_mean);

  VadConfig config_;
  int rate_hz_;
  size_t frame_samples_;
  size_t fft_size_;
  std::vector<float> window_;
  std::vector<std::complex<float>> fft_;     // work buffer, fft_size_
  std::vector<std::complex<float>> twiddle_;  // fft_size_ / 2
  std::vector<uint32_t> bitrev_;
  int bands_ = 0;                           // bands in use at this rate
  std::array<int, kBands + 1> band_bins_{};  // FFT bin edges of the bands
  std::array<float, kBands> noise_db_{};
  std::array<float, kBands> noise_excess_db_{};  // mean excess of non-speech frames over the floor
  std::vector<std::array<float, kBands>> recent_db_;  // ring of band levels, noise_window_ms
  std::vector<float> recent_level_db_;  // telephone-band level per frame, same ring positions
  size_t recent_next_ = 0;
  size_t recent_count_ = 0;
  int64_t quiet_frames_ = 0;  // non-speech frames so far (the excess average's count)
  bool initialized_ = false;
  bool in_speech_ = false;
  int hangover_left_ = 0;
  int active_run_ = 0;
};

}  // namespace hotline::audio
