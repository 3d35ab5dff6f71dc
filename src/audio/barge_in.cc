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
  if (pause_after_ms != 0 && (pause_after_ms < kFrameMs || pause_after_ms >= min_speech_ms)) {
    return InvalidArgumentError("pause_after_ms must be 0 or in [20, min_speech_ms), got " +
                                std::to_string(pause_after_ms));
  }
  if (resume_after_ms < kFrameMs || resume_after_ms > 5000) {
    return InvalidArgumentError("resume_after_ms must be in [20, 5000], got " +
                                std::to_string(resume_after_ms));
  }
  if (backchannel_max_ms < min_speech_ms || backchannel_max_ms > max_hold_ms) {
    return InvalidArgumentError("backchannel_max_ms must be in [min_speech_ms, max_hold_ms], got " +
                                std::to_string(backchannel_max_ms));
  }
  if (max_hold_ms < min_speech_ms || max_hold_ms > 10000) {
    return InvalidArgumentError("max_hold_ms must be in [min_speech_ms, 10000], got " +
                                std::to_string(max_hold_ms));
  }
  if (hold_release_ms < kFrameMs || hold_release_ms > 2000) {
    return InvalidArgumentError("hold_release_ms must be in [20, 2000], got " +
                                std::to_string(hold_release_ms));
  }
  return Status::Ok();
}

const char* BargeInEventName(BargeInEvent e) {
  switch (e) {
    case BargeInEvent::kNone:
      return "none";
    case BargeInEvent::kPause:
      return "pause";
    case BargeInEvent::kResume:
      return "resume";
    case BargeInEvent::kBargeIn:
      return "barge_in";
  }
  return "?";
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
  paused_ = false;
  paused_ms_ = 0;
  holding_ = false;
  held_speech_ms_ = 0;
  caller_speech_ = false;
}

BargeInEvent BargeInDetector::Process(const VadFrame& inbound, float outbound_level_dbfs,
                                      Words words) {
  outbound_history_[next_] = outbound_level_dbfs;
  next_ = (next_ + 1) % outbound_history_.size();
  const float outbound_peak =
      *std::max_element(outbound_history_.begin(), outbound_history_.end());
  const bool above_echo =
      inbound.level_dbfs > outbound_peak - static_cast<float>(config_.echo_return_loss_db);
  caller_speech_ = inbound.speech && above_echo;
  if (triggered_) return BargeInEvent::kNone;

  const bool caller_speech = caller_speech_;
  if (caller_speech) {
    speech_ms_ += kFrameMs;
    gap_ms_ = 0;
  } else {
    gap_ms_ += kFrameMs;
    if (gap_ms_ > config_.max_gap_ms && !holding_) speech_ms_ = 0;
  }
  if (paused_) paused_ms_ += kFrameMs;
  if (holding_) {
    if (caller_speech) held_speech_ms_ += kFrameMs;
    const bool long_speech = held_speech_ms_ >= config_.backchannel_max_ms;
    if ((words == Words::kOther && long_speech) || held_speech_ms_ >= config_.max_hold_ms) {
      return Confirm();
    }
    if (gap_ms_ >= config_.hold_release_ms) {
      // The caller stopped: a cue word ends the agent's turn ...
      if (words == Words::kCue) return Confirm();
      // ... short speech, or only "uh-huh", "okay", the agent's own words: the agent carries on.
      holding_ = false;
      paused_ = false;
      speech_ms_ = 0;
      return BargeInEvent::kResume;
    }
    return BargeInEvent::kNone;
  }
  if (speech_ms_ >= config_.min_speech_ms) {
    if (!config_.check_words) return Confirm();
    holding_ = true;
    held_speech_ms_ = speech_ms_;
    if (!paused_) {  // no pause stage: the agent falls silent while the words are awaited
      paused_ = true;
      paused_ms_ = 0;
      return BargeInEvent::kPause;
    }
    return BargeInEvent::kNone;
  }
  if (paused_) {
    if (speech_ms_ == 0 || paused_ms_ >= config_.resume_after_ms) {
      // A cough, a click, an "mm-hm": the agent carries on. The count starts afresh so that
      // continued sparse speech does not pause it again at once.
      paused_ = false;
      speech_ms_ = 0;
      return BargeInEvent::kResume;
    }
  } else if (config_.pause_after_ms > 0 && speech_ms_ >= config_.pause_after_ms) {
    paused_ = true;
    paused_ms_ = 0;
    return BargeInEvent::kPause;
  }
  return BargeInEvent::kNone;
}

BargeInEvent BargeInDetector::Confirm() {
  triggered_ = true;
  paused_ = false;
  holding_ = false;
  return BargeInEvent::kBargeIn;
}

}  // namespace hotline::audio
