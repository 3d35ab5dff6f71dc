// What the line says to a social turn (pipeline/dialogue_acts.h), shared by the call session and
// `hotline chat` so that a typed exchange answers as a call does.
#pragma once

#include <string>
#include <string_view>

#include "pipeline/call_config.h"
#include "pipeline/dialogue_acts.h"
#include "pipeline/turn_types.h"

namespace hotline::pipeline {

// The reply to a social act: call.thanks_text, hello_text, machine_text, go_ahead_text,
// hold_text, help_text or anything_else_text, or for a repeat `last_reply` (the last thing the
// line said; hello_text before it said anything).
// REQUIRES: IsSocialAct(act).
std::string SocialReply(const CallConfig& call, DialogueAct act, std::string_view last_reply);

// Where the conversation stands after the line said `reply`, which `tier` gave: an "okay" may
// acknowledge an answer (the tool, cache, knowledge-base and model tiers) that asked nothing
// back, not a request for a PIN, a rephrase request or one of the session's own texts.
DialogueState StateAfterReply(const CallConfig& call, std::string_view reply, TurnTier tier);

// What the line does with a turn no answer tier could answer (TurnAnswer::fallback), the
// `misses`-th such turn in a row before this one: the first call.fallback_retries get
// rephrase_text, or error_text when a tier failed (`degraded`: the failure is the line's, the
// caller is not the one to rephrase); the next goes to a person, with the answer's own text or,
// when a tier failed, failure_transfer_text. A `streamed` answer was already spoken as it was:
// it is not replaced, and the call goes to a person.
struct MissReply {
  bool rephrase = false;
  bool transfer = false;
  const std::string* text = nullptr;  // replaces the answer's text when set (a CallConfig text)
};
MissReply ReplyToMiss(const CallConfig& call, int misses, bool degraded, bool streamed);

}  // namespace hotline::pipeline
