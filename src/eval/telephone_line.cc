#include "eval/telephone_line.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "audio/g711.h"
#include "audio/resampler.h"

namespace hotline::eval {

double ActiveSpeechPower(const std::vector<int16_t>& pcm, int rate_hz) {
  const size_t frame = static_cast<size_t>(std::max(1, rate_hz / 50));
  std::vector<double> powers;
  for (size_t i = 0; i < pcm.size(); i += frame) {
    const size_t n = std::min(frame, pcm.size() - i);
    double sum = 0;
    for (size_t k = 0; k < n; ++k) sum += static_cast<double>(pcm[i + k]) * pcm[i + k];
    powers.push_back(sum / static_cast<double>(n));
  }
  if (powers.empty()) return 0;
  const double loudest = *std::max_element(powers.begin(), powers.end());
  if (loudest <= 0) return 0;
  double sum = 0;
  size_t count = 0;
  for (double p : powers) {
    if (p >= loudest * 1e-3) {  // within 30 dB
      sum += p;
      ++count;
    }
  }
  return count ? sum / static_cast<double>(count) : 0;
}

Result<std::vector<int16_t>> ThroughTelephoneLine(audio::AudioView speech,
                                                  const LineOptions& options) {
  if (options.add_noise && !(options.snr_db > -20 && options.snr_db < 100)) {
    return InvalidArgumentError("line noise SNR must be between -20 and 100 dB");
  }
  ASSIGN_OR_RETURN(audio::AudioBuffer narrow, audio::Resample(speech, 8000));
  std::vector<int16_t> pcm = std::move(narrow.samples);
  if (options.add_noise) {
    const double power = ActiveSpeechPower(pcm, 8000);
    const double sigma = std::sqrt(power / std::pow(10.0, options.snr_db / 10.0));
    std::mt19937_64 rng(options.seed);
    std::normal_distribution<double> gauss(0.0, 1.0);
    for (int16_t& s : pcm) {
      const double v = s + sigma * gauss(rng);
      s = static_cast<int16_t>(std::clamp(std::lround(v), -32768L, 32767L));
    }
  }
  std::vector<uint8_t> line(pcm.size());
  audio::EncodeMulaw(pcm, line);
  audio::DecodeMulaw(line, pcm);
  return pcm;
}

}  // namespace hotline::eval
