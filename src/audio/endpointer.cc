#include "audio/endpointer.h"

#include <algorithm>
#include <string>

namespace hotline::audio {

Status EndpointerConfig::Validate() const {
  if (trailing_silence_ms < kFrameMs || trailing_silence_ms > 10000) {
    return InvalidArgumentError("trailing_silence_ms must be in [20, 10000], got " +
                                std::to_string(trailing_silence_ms));
  }
  if (complete_silence_ms < kFrameMs || complete_silence_ms > trailing_silence_ms) {
    return InvalidArgumentError("complete_silence_ms must be in [20, trailing_silence_ms], got " +
                                std::to_string(complete_silence_ms));
  }
  if (start_speech_ms < kFrameMs || start_speech_ms > 1000) {
    return InvalidArgumentError("start_speech_ms must be in [20, 1000], got " +
                                std::to_string(start_speech_ms));
  }
  if (min_speech_ms < 0 || min_speech_ms > 10000) {
    return InvalidArgumentError("min_speech_ms must be in [0, 10000], got " +
                                std::to_string(min_speech_ms));
  }
  if (max_utterance_ms < 1000 || max_utterance_ms > 600000) {
    return InvalidArgumentError("max_utterance_ms must be in [1000, 600000], got " +
                                std::to_string(max_utterance_ms));
  }
  return Status::Ok();
}

const char* EndpointEventName(EndpointEvent e) {
  switch (e) {
    case EndpointEvent::kNone: return "none";
    case EndpointEvent::kSpeechStart: return "speech_start";
    case EndpointEvent::kEndOfTurn: return "end_of_turn";
    case EndpointEvent::kMaxLength: return "max_length";
    case EndpointEvent::kDiscarded: return "discarded";
  }
  return "unknown";
}

void Endpointer::Reset() {
  now_ms_ = 0;
  in_utterance_ = false;
  looks_complete_ = false;
  silence_needed_ms_ = 0;
  run_speech_ms_ = 0;
  total_speech_ms_ = 0;
  silence_ms_ = 0;
  start_ms_ = -1;
  last_speech_end_ms_ = -1;
}

EndpointUpdate Endpointer::Push(bool speech) {
  now_ms_ += kFrameMs;
  EndpointUpdate u;
  u.now_ms = now_ms_;

  if (!in_utterance_) {
    run_speech_ms_ = speech ? run_speech_ms_ + kFrameMs : 0;
    if (run_speech_ms_ >= config_.start_speech_ms) {
      in_utterance_ = true;
      looks_complete_ = false;
      silence_needed_ms_ = 0;
      start_ms_ = now_ms_ - run_speech_ms_;
      total_speech_ms_ = run_speech_ms_;
      silence_ms_ = 0;
      last_speech_end_ms_ = now_ms_;
      run_speech_ms_ = 0;
      u.event = EndpointEvent::kSpeechStart;
    }
    u.speech_start_ms = start_ms_;
    u.speech_end_ms = last_speech_end_ms_;
    return u;
  }

  if (speech) {
    total_speech_ms_ += kFrameMs;
    silence_ms_ = 0;
    last_speech_end_ms_ = now_ms_;
  } else {
    silence_ms_ += kFrameMs;
  }
  u.speech_start_ms = start_ms_;
  u.speech_end_ms = last_speech_end_ms_;

  const int needed =
      silence_needed_ms_ > 0
          ? std::clamp(silence_needed_ms_, kFrameMs, config_.max_utterance_ms)
          : (looks_complete_ ? config_.complete_silence_ms : config_.trailing_silence_ms);
  if (silence_ms_ >= needed) {
    u.event = total_speech_ms_ >= config_.min_speech_ms ? EndpointEvent::kEndOfTurn
                                                        : EndpointEvent::kDiscarded;
  } else if (now_ms_ - start_ms_ >= config_.max_utterance_ms) {
    u.event = EndpointEvent::kMaxLength;
  }
  if (u.event != EndpointEvent::kNone) {
    in_utterance_ = false;
    looks_complete_ = false;
    silence_needed_ms_ = 0;
    run_speech_ms_ = 0;
  }
  return u;
}

}  // namespace hotline::audio
