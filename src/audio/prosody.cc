#include "audio/prosody.h"

#include <algorithm>
#include <cmath>

namespace hotline::audio {
namespace {

constexpr int kMinLag = 20;   // 400 Hz at 8 kHz
constexpr int kMaxLag = 100;  // 80 Hz
constexpr float kVoicedCorrelation = 0.5f;

float Semitones(float hz) { return 12.0f * std::log2(hz / 100.0f); }

}  // namespace

void ProsodyTracker::Reset() { *this = ProsodyTracker(); }

void ProsodyTracker::Push(AudioView frame, bool speech) {
  const size_t n = frame.samples.size();
  const bool wide = frame.sample_rate_hz == 16000 && n == 2 * kFrame;
  if (!wide && !(frame.sample_rate_hz == 8000 && n == kFrame)) return;
  std::copy(window_.begin() + kFrame, window_.end(), window_.begin());
  double energy = 0;
  for (int i = 0; i < kFrame; ++i) {
    const float v = wide ? 0.5f * (frame.samples[2 * i] + frame.samples[2 * i + 1])
                         : static_cast<float>(frame.samples[i]);
    window_[kFrame + i] = v;
    energy += static_cast<double>(v) * v;
  }
  const float level_db =
      static_cast<float>(10 * std::log10(energy / kFrame / (32768.0 * 32768.0) + 1e-12));

  // Normalized cross-correlation of the current frame with the window shifted back by `lag`.
  last_pitch_hz_ = 0;
  if (speech && level_db > -50) {
    const float* x = window_.data() + kFrame;
    double e0 = 0;
    for (int i = 0; i < kFrame; ++i) e0 += static_cast<double>(x[i]) * x[i];
    std::array<double, kMaxLag + 2> r{};
    double best = 0;
    for (int lag = kMinLag; lag <= kMaxLag; ++lag) {
      const float* y = x - lag;
      double xy = 0, yy = 0;
      for (int i = 0; i < kFrame; ++i) {
        xy += static_cast<double>(x[i]) * y[i];
        yy += static_cast<double>(y[i]) * y[i];
      }
      r[lag] = xy / std::sqrt(e0 * yy + 1e-9);
      best = std::max(best, r[lag]);
    }
    // The shortest lag that nearly matches the best: multiples of the period correlate as well
    // (octave errors).
    int best_lag = 0;
    for (int lag = kMinLag; lag <= kMaxLag; ++lag) {
      if (r[lag] >= 0.9 * best && r[lag] >= r[lag - 1] && r[lag] >= r[lag + 1]) {
        best_lag = lag;
        break;
      }
    }
    if (best_lag == 0) best = 0;
    if (best > kVoicedCorrelation) last_pitch_hz_ = 8000.0f / static_cast<float>(best_lag);
  }

  if (!speech) {
    // Silence: a voiced run in progress is over; features stay as they were.
    if (run_ > 0) {
      ++runs_;
      run_sum_ += run_;
      run_ = 0;
    }
    return;
  }
  ++speech_frames_;
  speech_level_sum_db_ += level_db;
  recent_level_db_[recent_level_n_ % recent_level_db_.size()] = level_db;
  ++recent_level_n_;
  if (last_pitch_hz_ > 0) {
    const float st = Semitones(last_pitch_hz_);
    pitch_sum_st_ += st;
    ++voiced_;
    recent_pitch_st_[recent_pitch_n_ % kHistory] = st;
    ++recent_pitch_n_;
    ++run_;
    last_run_ = run_;
  } else if (run_ > 0) {
    ++runs_;
    run_sum_ += run_;
    run_ = 0;
  }
  Update();
}

void ProsodyTracker::Update() {
  ProsodyFeatures f;
  f.voiced_frames = voiced_;
  if (voiced_ >= 3) {
    f.valid = true;
    const float mean = static_cast<float>(pitch_sum_st_ / voiced_);
    auto recent = [&](int back) {  // back = 0: the last voiced frame
      return recent_pitch_st_[(recent_pitch_n_ - 1 - back + kHistory) % kHistory];
    };
    const float last3 = (recent(0) + recent(1) + recent(2)) / 3;
    f.pitch_fall_st = mean - last3;
    const int back = std::min(10, std::min(recent_pitch_n_, kHistory) - 1);
    f.final_slope_st = recent(0) - recent(back);
  }
  if (speech_frames_ > 0) {
    const int k = std::min<int>(recent_level_n_, static_cast<int>(recent_level_db_.size()));
    float sum = 0;
    for (int i = 0; i < k; ++i) sum += recent_level_db_[i];
    f.energy_drop_db = static_cast<float>(speech_level_sum_db_ / speech_frames_) - sum / k;
  }
  const double mean_run = runs_ > 0 ? static_cast<double>(run_sum_) / runs_ : 0;
  f.lengthening = mean_run > 0 ? static_cast<float>(last_run_ / mean_run) : 1.0f;
  features_ = f;
}

}  // namespace hotline::audio
