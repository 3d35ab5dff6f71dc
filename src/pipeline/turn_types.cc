#include "pipeline/turn_types.h"

namespace hotline::pipeline {

std::string_view TurnKindName(TurnKind kind) {
  switch (kind) {
    case TurnKind::kCaller:
      return "caller";
    case TurnKind::kGreeting:
      return "greeting";
    case TurnKind::kReprompt:
      return "reprompt";
    case TurnKind::kDtmf:
      return "dtmf";
    case TurnKind::kTimeLimit:
      return "time_limit";
  }
  return "unknown";
}

std::string_view TurnTierName(TurnTier tier) {
  switch (tier) {
    case TurnTier::kNone:
      return "";
    case TurnTier::kTool:
      return answer::TierName(answer::AnswerTierId::kTool);
    case TurnTier::kIdentify:
      return answer::TierName(answer::AnswerTierId::kIdentify);
    case TurnTier::kL1:
      return answer::TierName(answer::AnswerTierId::kL1);
    case TurnTier::kL2:
      return answer::TierName(answer::AnswerTierId::kL2);
    case TurnTier::kL3:
      return answer::TierName(answer::AnswerTierId::kL3);
    case TurnTier::kKnowledgeBase:
      return answer::TierName(answer::AnswerTierId::kKnowledgeBase);
    case TurnTier::kLlm:
      return answer::TierName(answer::AnswerTierId::kLlm);
    case TurnTier::kFallback:
      return answer::TierName(answer::AnswerTierId::kFallback);
    case TurnTier::kClarify:
      return answer::TierName(answer::AnswerTierId::kClarify);
    case TurnTier::kGreeting:
      return "greeting";
    case TurnTier::kReprompt:
      return "reprompt";
    case TurnTier::kGoodbye:
      return "goodbye";
    case TurnTier::kTransfer:
      return "transfer";
    case TurnTier::kSocial:
      return "social";
    case TurnTier::kPrompt:
      return "prompt";
  }
  return "unknown";
}

TurnTier TierOf(answer::AnswerTierId tier) {
  switch (tier) {
    case answer::AnswerTierId::kTool:
      return TurnTier::kTool;
    case answer::AnswerTierId::kIdentify:
      return TurnTier::kIdentify;
    case answer::AnswerTierId::kL1:
      return TurnTier::kL1;
    case answer::AnswerTierId::kL2:
      return TurnTier::kL2;
    case answer::AnswerTierId::kL3:
      return TurnTier::kL3;
    case answer::AnswerTierId::kKnowledgeBase:
      return TurnTier::kKnowledgeBase;
    case answer::AnswerTierId::kLlm:
      return TurnTier::kLlm;
    case answer::AnswerTierId::kFallback:
      return TurnTier::kFallback;
    case answer::AnswerTierId::kClarify:
      return TurnTier::kClarify;
  }
  return TurnTier::kFallback;
}

bool IsAnswerTier(TurnTier tier) { return tier >= TurnTier::kTool && tier <= TurnTier::kFallback; }

std::string_view TurnOutcomeName(TurnOutcome outcome) {
  switch (outcome) {
    case TurnOutcome::kPending:
      return "";
    case TurnOutcome::kAnswered:
      return "answered";
    case TurnOutcome::kRephrase:
      return "rephrase";
    case TurnOutcome::kTransfer:
      return "transfer";
    case TurnOutcome::kGoodbye:
      return "goodbye";
    case TurnOutcome::kBargeIn:
      return "barge_in";
    case TurnOutcome::kDiscarded:
      return "discarded";
    case TurnOutcome::kNotHeard:
      return "not_heard";
    case TurnOutcome::kBusy:
      return "busy";
    case TurnOutcome::kNoResponse:
      return "no_response";
    case TurnOutcome::kTimeLimit:
      return "time_limit";
    case TurnOutcome::kSuperseded:
      return "superseded";
    case TurnOutcome::kSpeculationMissed:
      return "speculation_missed";
    case TurnOutcome::kError:
      return "error";
  }
  return "unknown";
}

}  // namespace hotline::pipeline
