#include "audio/vad.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

namespace hotline::audio {
namespace {

// Band edges (Hz) inside the telephone band. Narrow low bands follow the first formant and the
// voicing harmonics; wider high bands the upper formants and fricatives.
constexpr std::array<double, Vad::kBands + 1> kBandEdgesHz = {200,  400,  800, 1300,
                                                              2000, 2800, 3600, 7200};
// Bands whose SNR is averaged into the score (the strongest ones).
constexpr int kScoreBands = 3;
// Below this, band powers are treated as silence (avoids log(0) and denormals).
constexpr float kPowerFloor = 1e-10f;
// Standard deviation (dB) of the telephone-band frame level across the tracker window below
// which the window counts as steady noise (white or line noise: under 1 dB; speech: 3 dB even for
// a sustained vowel swinging 10 dB, 6 dB and more for running speech).
constexpr double kSteadySpreadDb = 2.0;
// The bands of 200-3600 Hz (all of them at 8 kHz).
constexpr int kTelephoneBands = Vad::kBands - 1;
// The learned excess of noise frames over the floor: at most this (dB), learned at this rate
// per non-speech frame (about 1 s).
constexpr float kMaxExcessDb = 8.0f;
constexpr float kExcessRate = 0.02f;

}  // namespace

Status VadConfig::Validate() const {
  if (!(threshold_db > 0 && threshold_db <= 40)) {
    return InvalidArgumentError("threshold_db must be in (0, 40] dB, got " +
                                std::to_string(threshold_db));
  }
  if (!(hysteresis_db >= 0 && hysteresis_db < threshold_db)) {
    return InvalidArgumentError("hysteresis_db must be in [0, threshold_db), got " +
                                std::to_string(hysteresis_db));
  }
  if (!(min_level_dbfs >= -120 && min_level_dbfs <= 0)) {
    return InvalidArgumentError("min_level_dbfs must be in [-120, 0], got " +
                                std::to_string(min_level_dbfs));
  }
  if (hangover_ms < 0 || hangover_ms > 1000) {
    return InvalidArgumentError("hangover_ms must be in [0, 1000], got " +
                                std::to_string(hangover_ms));
  }
  if (!(noise_rise_db_per_s > 0 && noise_rise_db_per_s <= 100) ||
      !(speech_noise_rise_db_per_s >= 0 && speech_noise_rise_db_per_s <= 100)) {
    return InvalidArgumentError(
        "noise_rise_db_per_s must be in (0, 100] and speech_noise_rise_db_per_s in [0, 100]");
  }
  if (noise_window_ms < 200 || noise_window_ms > 30000) {
    return InvalidArgumentError("noise_window_ms must be in [200, 30000], got " +
                                std::to_string(noise_window_ms));
  }
  return Status::Ok();
}

float LevelDbfs(std::span<const int16_t> samples) {
  if (samples.empty()) return -120.0f;
  double sum = 0;
  for (int16_t s : samples) sum += static_cast<double>(s) * s;
  double ms = sum / samples.size() / (32768.0 * 32768.0);
  if (ms <= 1e-12) return -120.0f;
  return static_cast<float>(10.0 * std::log10(ms));
}

Result<Vad> Vad::Create(const VadConfig& config, int sample_rate_hz) {
  RETURN_IF_ERROR(config.Validate().WithContext("vad"));
  if (sample_rate_hz != 8000 && sample_rate_hz != 16000) {
    return InvalidArgumentError("VAD runs at 8000 or 16000 Hz, got " +
                                std::to_string(sample_rate_hz) + " Hz (resample first)");
  }
  return Vad(config, sample_rate_hz);
}

Vad::Vad(const VadConfig& config, int rate_hz)
    : config_(config), rate_hz_(rate_hz), frame_samples_(SamplesForMs(rate_hz, kFrameMs)) {
  fft_size_ = 1;
  while (fft_size_ < frame_samples_) fft_size_ <<= 1;
  window_.resize(frame_samples_);
  for (size_t i = 0; i < frame_samples_; ++i) {
    window_[i] = static_cast<float>(
        0.5 - 0.5 * std::cos(2.0 * std::numbers::pi * (i + 0.5) / frame_samples_));
  }
  fft_.resize(fft_size_);
  twiddle_.resize(fft_size_ / 2);
  for (size_t k = 0; k < fft_size_ / 2; ++k) {
    double a = -2.0 * std::numbers::pi * k / fft_size_;
    twiddle_[k] = {static_cast<float>(std::cos(a)), static_cast<float>(std::sin(a))};
  }
  int bits = 0;
  while ((size_t{1} << bits) < fft_size_) ++bits;
  bitrev_.resize(fft_size_);
  for (size_t i = 0; i < fft_size_; ++i) {
    uint32_t r = 0;
    for (int b = 0; b < bits; ++b) r |= ((i >> b) & 1u) << (bits - 1 - b);
    bitrev_[i] = r;
  }
  bands_ = rate_hz >= 16000 ? kBands : kBands - 1;
  for (int b = 0; b <= bands_; ++b) {
    band_bins_[b] = static_cast<int>(std::lround(kBandEdgesHz[b] * fft_size_ / rate_hz));
  }
  recent_db_.resize(static_cast<size_t>(config.noise_window_ms / kFrameMs));
  recent_level_db_.resize(recent_db_.size());
  Reset();
}

void Vad::Reset() {
  noise_db_.fill(0);
  noise_excess_db_.fill(0);
  quiet_frames_ = 0;
  initialized_ = false;
  in_speech_ = false;
  hangover_left_ = 0;
  active_run_ = 0;
  recent_next_ = 0;
  recent_count_ = 0;
}

Result<VadFrame> Vad::Process(AudioView frame) {
  if (frame.sample_rate_hz != rate_hz_ || frame.samples.size() != frame_samples_) {
    return InvalidArgumentError("VAD expects 20 ms frames of " + std::to_string(frame_samples_) +
                                " samples at " + std::to_string(rate_hz_) + " Hz, got " +
                                std::to_string(frame.samples.size()) + " samples at " +
                                std::to_string(frame.sample_rate_hz) + " Hz");
  }
  VadFrame out;
  out.level_dbfs = LevelDbfs(frame.samples);
  const std::array<float, kBands> band_db = BandLevels(frame.samples);
  if (!initialized_) {
    noise_db_ = band_db;
    initialized_ = true;
  }
  out.score_db = Score(band_db);
  const double threshold =
      in_speech_ ? config_.threshold_db - config_.hysteresis_db : config_.threshold_db;
  const bool active = out.score_db > threshold && out.level_dbfs > config_.min_level_dbfs;
  out.speech = Decide(active);
  out.noise_dbfs = LearnNoise(band_db, active);
  return out;
}

std::array<float, Vad::kBands> Vad::BandLevels(std::span<const int16_t> samples) {
  // Windowed frame, zero padded, in bit-reversed order; then an in-place radix-2 FFT.
  for (size_t i = 0; i < fft_size_; ++i) {
    size_t src = bitrev_[i];
    float v = src < frame_samples_ ? samples[src] * (window_[src] / 32768.0f) : 0.0f;
    fft_[i] = {v, 0.0f};
  }
  for (size_t len = 2; len <= fft_size_; len <<= 1) {
    size_t half = len / 2;
    size_t step = fft_size_ / len;
    for (size_t start = 0; start < fft_size_; start += len) {
      for (size_t k = 0; k < half; ++k) {
        std::complex<float> t = twiddle_[k * step] * fft_[start + k + half];
        fft_[start + k + half] = fft_[start + k] - t;
        fft_[start + k] += t;
      }
    }
  }
  std::array<float, kBands> band_db{};
  for (int b = 0; b < bands_; ++b) {
    float power = 0;
    for (int k = band_bins_[b]; k < band_bins_[b + 1]; ++k) power += std::norm(fft_[k]);
    power /= static_cast<float>(band_bins_[b + 1] - band_bins_[b]);
    band_db[b] = 10.0f * std::log10(std::max(power, kPowerFloor));
  }
  return band_db;
}

float Vad::Score(const std::array<float, kBands>& band_db) const {
  std::array<float, kBands> snr{};
  for (int b = 0; b < bands_; ++b) {
    snr[b] = std::max(0.0f, band_db[b] - noise_db_[b] - noise_excess_db_[b]);
  }
  std::partial_sort(snr.begin(), snr.begin() + kScoreBands, snr.begin() + bands_,
                    std::greater<float>());
  float score = 0;
  for (int b = 0; b < kScoreBands; ++b) score += snr[b];
  return score / kScoreBands;
}

bool Vad::Decide(bool active) {
  // The hangover is earned by a few active frames in a row, so a click stays one frame long.
  active_run_ = active ? active_run_ + 1 : 0;
  if (active) {
    in_speech_ = true;
    hangover_left_ = active_run_ >= 3 ? config_.hangover_ms / kFrameMs : 0;
  } else if (hangover_left_ > 0) {
    --hangover_left_;
  } else {
    in_speech_ = false;
  }
  return in_speech_;
}

bool Vad::RememberSteadiness(const std::array<float, kBands>& band_db,
                             std::array<float, kBands>& window_min,
                             std::array<float, kBands>& window_mean) {
  // Telephone-band power of this frame (bands 200-3600 Hz, whatever the rate), in dB.
  float band_power = 0;
  for (int b = 0; b < kTelephoneBands; ++b) {
    band_power += std::pow(10.0f, band_db[b] / 10.0f) *
                  static_cast<float>(band_bins_[b + 1] - band_bins_[b]);
  }
  const float tel_level_db = 10.0f * std::log10(std::max(band_power, kPowerFloor));
  recent_db_[recent_next_] = band_db;
  recent_level_db_[recent_next_] = tel_level_db;
  recent_next_ = (recent_next_ + 1) % recent_db_.size();
  recent_count_ = std::min(recent_count_ + 1, recent_db_.size());
  window_min = band_db;
  window_mean = {};
  if (recent_count_ != recent_db_.size()) return false;
  // Spread of the telephone-band level across the window: speech rises and falls with every
  // syllable, steady noise barely moves. Only a steady window may lift the floor to its
  // minimum, so a long sentence without pauses is not learned as noise.
  for (const auto& levels : recent_db_) {
    for (int b = 0; b < bands_; ++b) {
      window_min[b] = std::min(window_min[b], levels[b]);
      window_mean[b] += levels[b];
    }
  }
  double sum = 0, sum2 = 0;
  for (float level : recent_level_db_) {
    sum += level;
    sum2 += static_cast<double>(level) * level;
  }
  const double n = static_cast<double>(recent_db_.size());
  const double var = std::max(0.0, sum2 / n - (sum / n) * (sum / n));
  for (int b = 0; b < bands_; ++b) window_mean[b] /= static_cast<float>(n);
  return std::sqrt(var) < kSteadySpreadDb;
}

float Vad::LearnNoise(const std::array<float, kBands>& band_db, bool active) {
  // Noise floor: quick to fall (noise ended, or the first frames held speech), slow to rise.
  const float frame_s = kFrameMs / 1000.0f;
  const float rise = static_cast<float>(
      (active ? config_.speech_noise_rise_db_per_s : config_.noise_rise_db_per_s) * frame_s);
  std::array<float, kBands> window_min{};
  std::array<float, kBands> window_mean{};
  const bool lift = RememberSteadiness(band_db, window_min, window_mean);
  // A plain average over the first quiet frames, then an exponential one (about 1 s).
  if (!active) ++quiet_frames_;
  const float excess_rate = std::max(kExcessRate, 1.0f / static_cast<float>(quiet_frames_ + 1));
  float noise_sum = 0;
  for (int b = 0; b < bands_; ++b) {
    float diff = band_db[b] - noise_db_[b];
    if (diff < 0) {
      noise_db_[b] += 0.3f * diff;
    } else {
      noise_db_[b] += std::min(rise, active ? diff : 0.1f * diff);
      noise_db_[b] = std::min(noise_db_[b], band_db[b]);
    }
    // The floor follows the quiet frames, so noise alone sits above it by the noise's own
    // frame-to-frame scatter; that excess, learned outside speech (and from a steady window,
    // which is all noise), is taken off the SNR.
    if (lift) {
      noise_db_[b] = std::max(noise_db_[b], window_min[b]);
      noise_excess_db_[b] = std::clamp(window_mean[b] - noise_db_[b], 0.0f, kMaxExcessDb);
    } else if (!active) {
      const float excess = std::clamp(band_db[b] - noise_db_[b], 0.0f, kMaxExcessDb);
      noise_excess_db_[b] += excess_rate * (excess - noise_excess_db_[b]);
    }
    noise_sum += noise_db_[b];
  }
  return noise_sum / static_cast<float>(bands_);
}

}  // namespace hotline::audio
