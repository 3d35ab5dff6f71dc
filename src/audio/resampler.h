// Streaming sample-rate conversion of mono PCM16, over libsamplerate (Secret Rabbit Code).
//
// A Resampler converts one stream: feed it frames of any size as they arrive (20 ms is typical)
// and it appends the converted samples; the filter state carries across calls, so there are no
// clicks at frame edges and the concatenated output equals what one call on the whole signal
// would give. The sinc converters look ahead: the first calls return fewer samples than
// in × ratio (the look-ahead, see lookahead_samples()), and Flush() at the end of the stream
// returns the rest. After Flush() the total output is exactly round(total_in × out_rate / in_rate)
// samples, so durations survive a round trip through another rate.
//
// Converter choice (ResamplerConfig::converter): "sinc_medium" by default. For telephony the
// converter must keep the whole 300-3400 Hz band of 8 kHz audio: sinc_fastest's passband
// (~80 % of Nyquist, 3.2 kHz at 8 kHz) cuts into it, sinc_medium's (~90 %, 3.6 kHz) does not,
// and sinc_best (~97 %) costs several times the CPU and adds look-ahead for a band telephony does
// not carry. Figures in docs/audio.md.
//
// Thread-safety: a Resampler is used by one thread at a time (one per call stream); different
// instances are independent. Process() does not allocate once `out` has capacity for its output
// (reuse one vector per stream: clear() keeps the capacity); scratch buffers are sized at Create().
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "audio/pcm.h"
#include "common/status.h"

namespace hotline::audio {

struct ResamplerConfig {
  // libsamplerate converter: sinc_best | sinc_medium | sinc_fastest | linear | zero_order_hold.
  // Better sinc keeps more of the band with more CPU and look-ahead; linear and zero_order_hold
  // are nearly free but alias audibly (use only for tests or non-speech).
  std::string converter = "sinc_medium";
  // Input processed per libsamplerate call, in ms. Larger frames are split; smaller wastes a
  // little per-call overhead. Sets the scratch size allocated once at Create().
  int chunk_ms = 100;

  template <class V>
  void Visit(V& v) {
    v.Field("converter", converter,
            "libsamplerate converter: sinc_best, sinc_medium, sinc_fastest, linear, zero_order_hold");
    v.Field("chunk_ms", chunk_ms, "Input milliseconds per libsamplerate call (scratch size)");
  }
  Status Validate() const;
};

class Resampler {
 public:
  // Errors when a rate is outside [kMinSampleRateHz, kMaxSampleRateHz] or the config is invalid.
  static Result<std::unique_ptr<Resampler>> Create(int input_rate_hz, int output_rate_hz,
                                                   const ResamplerConfig& config = {});
  ~Resampler();
  Resampler(const Resampler&) = delete;
  Resampler& operator=(const Resampler&) = delete;

  int input_rate_hz() const { return input_rate_hz_; }
  int output_rate_hz() const { return output_rate_hz_; }

  // Converts `in` (at input_rate_hz) and appends the output (at output_rate_hz) to `out`.
  // Errors only on a libsamplerate failure or after Flush() without Reset().
  Status Process(std::span<const int16_t> in, std::vector<int16_t>& out);

  // Ends the stream: appends the samples still held back so that the total output is
  // round(input_samples() × output_rate_hz / input_rate_hz). Call Reset() to start a new stream.
  Status Flush(std::vector<int16_t>& out);

  // Forgets all state; the next Process() starts a new stream.
  void Reset();

  int64_t input_samples() const { return total_in_; }
  int64_t output_samples() const { return total_out_; }
  // Output samples the converter holds back while streaming (measured at Create(); 0 when the
  // rates are equal). The stream's latency is lookahead_samples() / output_rate_hz.
  int lookahead_samples() const { return lookahead_samples_; }

 private:
  Resampler() = default;
  Status Run(const float* in, long frames, bool end_of_input, std::vector<int16_t>& out,
             int64_t max_out);

  int input_rate_hz_ = 0;
  int output_rate_hz_ = 0;
  double ratio_ = 1.0;
  void* state_ = nullptr;  // SRC_STATE*, null when the rates are equal (copy through)
  size_t chunk_samples_ = 0;
  std::vector<float> in_scratch_;
  std::vector<float> out_scratch_;
  std::vector<int16_t> pcm_scratch_;
  int64_t total_in_ = 0;
  int64_t total_out_ = 0;
  bool flushed_ = false;
  int lookahead_samples_ = 0;
};

// Converts a whole buffer (one Resampler, Process + Flush). Same rate returns a copy.
Result<AudioBuffer> Resample(AudioView in, int output_rate_hz, const ResamplerConfig& config = {});

}  // namespace hotline::audio
