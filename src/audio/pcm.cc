#include "audio/pcm.h"

#include <string>

namespace hotline::audio {

Status CheckSampleRate(int rate_hz) {
  if (rate_hz < kMinSampleRateHz || rate_hz > kMaxSampleRateHz) {
    return InvalidArgumentError("sample rate " + std::to_string(rate_hz) + " Hz is outside [" +
                                std::to_string(kMinSampleRateHz) + ", " +
                                std::to_string(kMaxSampleRateHz) +
                                "] Hz (corrupt header, or give the right rate)");
  }
  return Status::Ok();
}

void DownmixToMono(std::span<const int16_t> interleaved, int channels, std::vector<int16_t>& mono) {
  if (channels <= 1) {
    mono.assign(interleaved.begin(), interleaved.end());
    return;
  }
  const size_t frames = interleaved.size() / static_cast<size_t>(channels);
  mono.resize(frames);
  const int16_t* p = interleaved.data();
  for (size_t i = 0; i < frames; ++i, p += channels) {
    int32_t sum = 0;
    for (int c = 0; c < channels; ++c) sum += p[c];
    // Round half away from zero so that silence stays silence and the mix is symmetric.
    const int32_t half = channels / 2;
    const int32_t avg = sum >= 0 ? (sum + half) / channels : -((-sum + half) / channels);
    mono[i] = SaturateToInt16(avg);
  }
}

}  // namespace hotline::audio
