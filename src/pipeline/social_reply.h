// What the line says to a social turn (pipeline/dialogue_acts.h), shared by the call session and
// `hotline chat` so that a typed exchange answers as a call does.
#pragma once

#include <string>
#include <string_view>

#include "pipeline/call_config.h"
#include "pipeline/dialogue_acts.h"

namespace hotline::pipeline {

// The reply to a social act: call.thanks_text, hello_text or machine_text, or for a repeat
// `last_reply` (the last thing the line said; hello_text before it said anything).
// REQUIRES: IsSocialAct(act).
std::string SocialReply(const CallConfig& call, DialogueAct act, std::string_view last_reply);

// True when `reply` asks whether there is anything else (DialogueState::asked_anything_else).
inline bool AsksAnythingElse(const CallConfig& call, std::string_view reply) {
  return reply == call.thanks_text;
}

}  // namespace hotline::pipeline
