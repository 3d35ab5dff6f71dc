#include "pipeline/call_config.h"

#include <string>
#include <utility>

namespace hotline::pipeline {
namespace {

Status CheckRange(const char* name, int value, int lo, int hi) {
  if (value < lo || value > hi) {
    return InvalidArgumentError(std::string(name) + " must be in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "], got " + std::to_string(value));
  }
  return Status::Ok();
}

}  // namespace

Status CallConfig::Validate() const {
  RETURN_IF_ERROR(CheckRange("reprompt_after_ms", reprompt_after_ms, 1000, 600000));
  RETURN_IF_ERROR(CheckRange("reprompt_max", reprompt_max, 0, 100));
  RETURN_IF_ERROR(CheckRange("hold_reprompt_after_ms", hold_reprompt_after_ms, 1000, 600000));
  RETURN_IF_ERROR(CheckRange("asr_timeout_ms", asr_timeout_ms, 100, 60000));
  RETURN_IF_ERROR(CheckRange("answer_timeout_ms", answer_timeout_ms, 100, 600000));
  RETURN_IF_ERROR(CheckRange("tts_timeout_ms", tts_timeout_ms, 100, 60000));
  RETURN_IF_ERROR(CheckRange("dtmf_timeout_ms", dtmf_timeout_ms, 100, 60000));
  RETURN_IF_ERROR(CheckRange("audio_queue_frames", audio_queue_frames, 2, 10000));
  RETURN_IF_ERROR(CheckRange("max_push_bytes", max_push_bytes, 160, 16 << 20));
  RETURN_IF_ERROR(CheckRange("preroll_ms", preroll_ms, 0, 2000));
  RETURN_IF_ERROR(CheckRange("output_chunk_ms", output_chunk_ms, 20, 1000));
  if (output_chunk_ms % 20 != 0) {
    return InvalidArgumentError("output_chunk_ms must be a multiple of 20, got " +
                                std::to_string(output_chunk_ms));
  }
  RETURN_IF_ERROR(CheckRange("speculation_check_ms", speculation_check_ms, 0, 1000));
  RETURN_IF_ERROR(CheckRange("fallback_retries", fallback_retries, 0, 10));
  RETURN_IF_ERROR(CheckRange("lead_trim_max_ms", lead_trim_max_ms, 0, 2000));
  if (!(lead_trim_dbfs >= -90 && lead_trim_dbfs <= -20)) {
    return InvalidArgumentError("lead_trim_dbfs must be in [-90, -20], got " +
                                std::to_string(lead_trim_dbfs));
  }
  RETURN_IF_ERROR(CheckRange("prework_min_words", prework_min_words, 1, 100));
  RETURN_IF_ERROR(CheckRange("history_turns", history_turns, 0, 50));
  RETURN_IF_ERROR(CheckRange("record_queue", record_queue, 1, 1 << 20));
  RETURN_IF_ERROR(CheckRange("workers", workers, 1, 256));
  RETURN_IF_ERROR(CheckRange("answer_workers", answer_workers, 0, 1024));
  for (const auto* list : {&goodbye_phrases, &agent_phrases}) {
    for (const std::string& p : *list) {
      if (p.empty()) return InvalidArgumentError("goodbye_phrases/agent_phrases must not hold empty phrases");
    }
  }
  if (social_replies) {
    for (const auto& [name, text] :
         {std::pair{"thanks_text", &thanks_text}, std::pair{"hello_text", &hello_text},
          std::pair{"machine_text", &machine_text}, std::pair{"go_ahead_text", &go_ahead_text},
          std::pair{"hold_text", &hold_text}, std::pair{"help_text", &help_text},
          std::pair{"anything_else_text", &anything_else_text}}) {
      if (text->empty()) {
        return InvalidArgumentError(std::string(name) +
                                    " must not be empty while social_replies is on");
      }
    }
  }
  return Status::Ok();
}

}  // namespace hotline::pipeline
