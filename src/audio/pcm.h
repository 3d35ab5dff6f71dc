// PCM audio values: the one sample format that flows between Hotline's stages.
//
// Everything inside Hotline is 16-bit signed linear PCM, mono, at an explicit sample rate.
// Codecs (G.711), containers (WAV) and resampling convert at the edges; stages in between never
// guess a rate: every buffer carries it.
//
// Thread-safety: plain values; share const, copy or move freely.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace hotline::audio {

// Frame length used between stages (VAD, ASR, transports): 20 ms, as telephony sends it.
inline constexpr int kFrameMs = 20;

// Rates Hotline accepts anywhere (files, transports, resampler). Rates outside are almost always
// a corrupt header; refusing them keeps sizes derived from the rate bounded.
inline constexpr int kMinSampleRateHz = 4000;
inline constexpr int kMaxSampleRateHz = 192000;

// The rates the resampler is tested and benchmarked between (telephony, wideband, common media).
inline constexpr int kCommonRatesHz[] = {8000, 16000, 22050, 24000, 44100, 48000};

// OK when `rate_hz` is within [kMinSampleRateHz, kMaxSampleRateHz]; otherwise an error naming it.
Status CheckSampleRate(int rate_hz);

// Samples in `ms` milliseconds at `rate_hz`, rounded down (160 for 20 ms at 8 kHz).
constexpr size_t SamplesForMs(int rate_hz, int ms) {
  return static_cast<size_t>(static_cast<int64_t>(rate_hz) * ms / 1000);
}

// A mono 16-bit PCM buffer that owns its samples.
struct AudioBuffer {
  std::vector<int16_t> samples;
  int sample_rate_hz = 16000;

  AudioBuffer() = default;
  AudioBuffer(std::vector<int16_t> s, int rate_hz) : samples(std::move(s)), sample_rate_hz(rate_hz) {}

  size_t size() const { return samples.size(); }
  bool empty() const { return samples.empty(); }
  // Duration in seconds (0 when the rate is not positive).
  double duration_s() const {
    return sample_rate_hz > 0 ? static_cast<double>(samples.size()) / sample_rate_hz : 0.0;
  }
  // Duration in whole milliseconds, rounded to nearest.
  int64_t duration_ms() const {
    if (sample_rate_hz <= 0) return 0;
    return (static_cast<int64_t>(samples.size()) * 1000 + sample_rate_hz / 2) / sample_rate_hz;
  }
};

// A non-owning view of mono 16-bit PCM with its rate: what a stage receives per frame.
// The viewed samples must outlive the view.
struct AudioView {
  std::span<const int16_t> samples;
  int sample_rate_hz = 16000;

  AudioView() = default;
  AudioView(std::span<const int16_t> s, int rate_hz) : samples(s), sample_rate_hz(rate_hz) {}
  AudioView(const AudioBuffer& b)  // NOLINT: implicit by design, a buffer is viewable
      : samples(b.samples), sample_rate_hz(b.sample_rate_hz) {}
};

// Saturates a wider integer into the int16 range.
constexpr int16_t SaturateToInt16(int32_t v) {
  return static_cast<int16_t>(v > 32767 ? 32767 : (v < -32768 ? -32768 : v));
}

// Mixes `channels` interleaved channels down to mono by averaging (rounded to nearest, ties away
// from zero). `interleaved.size()` must be a multiple of `channels`; `channels` >= 1.
// Writes interleaved.size() / channels samples into `mono` (resized; no other allocation).
void DownmixToMono(std::span<const int16_t> interleaved, int channels, std::vector<int16_t>& mono);

}  // namespace hotline::audio
