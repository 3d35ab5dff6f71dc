#include "audio/speech_share.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "audio/level.h"

namespace hotline::audio {

Status SpeechShareConfig::Validate() const {
  if (!(margin_db >= 0.0 && margin_db <= 60.0)) {
    return InvalidArgumentError("margin_db must be in [0, 60], got " + std::to_string(margin_db));
  }
  if (!(min_level_dbfs >= kSilenceDbfs && min_level_dbfs <= 0.0)) {
    return InvalidArgumentError("min_level_dbfs must be in [-120, 0], got " +
                                std::to_string(min_level_dbfs));
  }
  if (!(floor_rise_db_per_s > 0.0 && floor_rise_db_per_s <= 100.0)) {
    return InvalidArgumentError("floor_rise_db_per_s must be in (0, 100], got " +
                                std::to_string(floor_rise_db_per_s));
  }
  return Status::Ok();
}

SpeechLikeMeter::SpeechLikeMeter(const SpeechShareConfig& config, double initial_floor_dbfs)
    : config_(config), floor_dbfs_(initial_floor_dbfs) {}

bool SpeechLikeMeter::Push(AudioView frame) {
  const double level = RmsDbfs(frame.samples);
  if (std::isnan(floor_dbfs_)) floor_dbfs_ = level;
  const bool speech = level > config_.min_level_dbfs && level > floor_dbfs_ + config_.margin_db;
  // Down at once, up slowly: minimum tracking with a leak.
  if (level < floor_dbfs_) {
    floor_dbfs_ = level;
  } else if (frame.sample_rate_hz > 0) {
    const double seconds = static_cast<double>(frame.samples.size()) / frame.sample_rate_hz;
    floor_dbfs_ = std::min(level, floor_dbfs_ + config_.floor_rise_db_per_s * seconds);
  }
  ++frames_;
  if (speech) ++speech_like_;
  return speech;
}

SpeechShare MeasureSpeechShare(AudioView audio, const SpeechShareConfig& config) {
  const size_t n = audio.samples.size();
  const size_t frame = std::max<size_t>(1, SamplesForMs(audio.sample_rate_hz, kFrameMs));
  const size_t min_tail = std::max<size_t>(1, frame / 2);
  std::vector<std::span<const int16_t>> frames;
  std::vector<double> levels;
  for (size_t i = 0; i < n; i += frame) {
    const size_t len = std::min(frame, n - i);
    if (len < min_tail) break;
    frames.push_back(audio.samples.subspan(i, len));
    levels.push_back(RmsDbfs(frames.back()));
  }
  SpeechShare out;
  if (frames.empty()) return out;
  // Start the floor at the 5th percentile of the frame levels: the quiet parts of the file.
  std::vector<double> sorted = levels;
  const size_t k = sorted.size() / 20;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<ptrdiff_t>(k), sorted.end());
  SpeechLikeMeter meter(config, sorted[k]);
  for (auto f : frames) meter.Push(AudioView(f, audio.sample_rate_hz));
  out.frames = meter.frames();
  out.speech_like_frames = meter.speech_like_frames();
  out.share = meter.share();
  out.noise_floor_dbfs = meter.noise_floor_dbfs();
  return out;
}

}  // namespace hotline::audio
