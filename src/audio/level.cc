#include "audio/level.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace hotline::audio {

double RmsDbfs(std::span<const int16_t> samples) {
  if (samples.empty()) return kSilenceDbfs;
  // Integer sum of squares is exact; 2^30 per sample fits 2^33 samples in int64.
  int64_t sum = 0;
  for (int16_t s : samples) sum += static_cast<int32_t>(s) * s;
  if (sum == 0) return kSilenceDbfs;
  const double mean = static_cast<double>(sum) / static_cast<double>(samples.size());
  return std::max(kSilenceDbfs, 10.0 * std::log10(mean / (32768.0 * 32768.0)));
}

int PeakAbs(std::span<const int16_t> samples) {
  int peak = 0;
  for (int16_t s : samples) peak = std::max(peak, std::abs(static_cast<int>(s)));
  return peak;
}

double PeakDbfs(int peak_abs) {
  if (peak_abs <= 0) return kSilenceDbfs;
  return std::max(kSilenceDbfs, 20.0 * std::log10(peak_abs / 32768.0));
}

Status TrimConfig::Validate() const {
  if (!(threshold_dbfs >= kSilenceDbfs && threshold_dbfs <= 0.0)) {
    return InvalidArgumentError("threshold_dbfs must be in [-120, 0], got " +
                                std::to_string(threshold_dbfs));
  }
  if (keep_ms < 0 || keep_ms > 10000) {
    return InvalidArgumentError("keep_ms must be in [0, 10000], got " + std::to_string(keep_ms));
  }
  return Status::Ok();
}

SampleRange FindSoundRange(AudioView audio, const TrimConfig& config) {
  const size_t n = audio.samples.size();
  const size_t frame = std::max<size_t>(1, SamplesForMs(audio.sample_rate_hz, kFrameMs));
  size_t first = n, last_end = 0;
  for (size_t i = 0; i < n; i += frame) {
    const size_t len = std::min(frame, n - i);
    if (RmsDbfs(audio.samples.subspan(i, len)) > config.threshold_dbfs) {
      first = std::min(first, i);
      last_end = i + len;
    }
  }
  if (first == n) return {0, 0};
  const size_t keep = SamplesForMs(audio.sample_rate_hz, std::max(0, config.keep_ms));
  return {first > keep ? first - keep : 0, std::min(n, last_end + keep)};
}

AudioBuffer TrimSilence(AudioView audio, const TrimConfig& config) {
  const SampleRange r = FindSoundRange(audio, config);
  return AudioBuffer(std::vector<int16_t>(audio.samples.begin() + static_cast<ptrdiff_t>(r.begin),
                                          audio.samples.begin() + static_cast<ptrdiff_t>(r.end)),
                     audio.sample_rate_hz);
}

}  // namespace hotline::audio
