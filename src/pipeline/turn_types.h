// The typed state of one turn of a call: what kind of turn it is, which tier (or fixed prompt)
// answered it, and how it ended. The names are the ones the per-call record, the "turn" event,
// the metrics' `tier` label and `hotline call`'s report print; compare the enums, never the names.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

#include "answer/answerer.h"

namespace hotline::pipeline {

enum class TurnKind : uint8_t {
  kCaller,    // the caller spoke
  kGreeting,  // the agent answered the call
  kReprompt,  // the caller was silent
  kDtmf,      // keypad digits (a PIN)
  kTimeLimit,  // the call reached its longest length (CallInfo::max_call_ms): goodbye
};
std::string_view TurnKindName(TurnKind kind);

// Who produced the agent's words: an answering tier, or one of the session's fixed texts.
enum class TurnTier : uint8_t {
  kNone,  // nothing said yet
  // Answering tiers (answer::AnswerTierId).
  kTool,
  kIdentify,
  kL1,
  kL2,
  kL3,
  kKnowledgeBase,
  kLlm,
  kFallback,
  kClarify,  // a clarifying question ("is this about X or Y?")
  // The session's fixed texts.
  kGreeting,
  kReprompt,
  kGoodbye,
  kTransfer,
  kSocial,  // the reply to a thanks, hello, "say that again" or "are you a person?"
  kPrompt,  // busy, error, rephrase and not-heard texts
};
std::string_view TurnTierName(TurnTier tier);
TurnTier TierOf(answer::AnswerTierId tier);
// True for the answering tiers (the ones `hotline_pipeline_answers_total{tier}` counts).
bool IsAnswerTier(TurnTier tier);

enum class TurnOutcome : uint8_t {
  kPending,  // not finished yet ("" in reports)
  kAnswered,
  kRephrase,           // no tier answered; the caller was asked to say it another way
  kTransfer,           // handed to a human
  kGoodbye,            // the caller said goodbye
  kBargeIn,            // the caller talked over the answer
  kDiscarded,          // speech over the agent that was not a barge-in (echo, "mm-hm")
  kNotHeard,           // speech with nothing recognized
  kBusy,               // an answer slower than call.answer_timeout_ms
  kNoResponse,         // silence after the last re-prompt
  kTimeLimit,          // the call reached its longest length: goodbye said, then hang-up
  kSuperseded,         // a newer turn began before this one finished
  kSpeculationMissed,  // a prepared answer started, and the final transcript disagreed
  kError,              // a stage failed: TurnReport::error names which ("error:<kind>")
};
std::string_view TurnOutcomeName(TurnOutcome outcome);

inline std::ostream& operator<<(std::ostream& os, TurnKind k) { return os << TurnKindName(k); }
inline std::ostream& operator<<(std::ostream& os, TurnTier t) { return os << TurnTierName(t); }
inline std::ostream& operator<<(std::ostream& os, TurnOutcome o) {
  return os << TurnOutcomeName(o);
}

}  // namespace hotline::pipeline
