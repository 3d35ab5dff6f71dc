#include "audio/barge_in.h"

#include <algorithm>
#include <string>

namespace hotline::audio {

Status BargeInConfig::Validate() const {
  if (min_speech_ms < kFrameMs || min_speech_ms > 5000) {
    return InvalidArgumentError("min_speech_ms must be in [20, 5000], got " +
                                std::to_string(min_speech_ms));
  }
  if (max_gap_ms < 0 || max_gap_ms > 1000) {
    return InvalidArgumentError("max_gap_ms must be in [0, 1000], got " +
                                std::to_string(max_gap_ms));
  }
  if (echo_tail_ms < kFrameMs || echo_tail_ms > 2000) {
    return InvalidArgumentError("echo_tail_ms must be in [20, 2000], got " +
                                std::to_string(echo_tail_ms));
  }
  if (!(echo_return_loss_db >= 0 && echo_return_loss_db <= 60)) {
    return InvalidArgumentError("echo_return_loss_db must be in [0, 60], got " +
                                std::to_string(echo_return_loss_db));
  }
  return Status::Ok();
}

BargeInDetector::BargeInDetector(const BargeInConfig& config)
    : config_(config),
      outbound_history_(static_cast<size_t>((config.echo_tail_ms + kFrameMs - 1) / kFrameMs) + 1,
                        -120.0f) {}

void BargeInDetector::Reset() {
  std::fill(outbound_history_.begin(), outbound_history_.end(), -120.0f);
  next_ = 0;
  speech_ms_ = 0;
  gap_ms_ = 0;
  triggered_ = false;
}

bool BargeInDetector::Process(const VadFrame& inbound, float outbound_level_dbfs) {
  outbound_history_[next_] = outbound_level_dbfs;
  next_ = (next_ + 1) % outbound_history_.size();
  if (triggered_) return false;

  const float outbound_peak =
      *std::max_element(outbound_history_.begin(), outbound_history_.end());
  const bool above_echo =
      inbound.level_dbfs > outbound_peak - static_cast<float>(config_.echo_return_loss_db);
  if (inbound.speech && above_echo) {
    speech_ms_ += kFrameMs;
    gap_ms_ = 0;
  } else {
    gap_ms_ += kFrameMs;
    if (gap_ms_ > config_.max_gap_ms) speech_ms_ = 0;
  }
  if (speech_ms_ >= config_.min_speech_ms) {
    triggered_ = true;
    return true;
  }
  return false;
}

}  // namespace hotline::audio
