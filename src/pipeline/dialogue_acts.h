// Dialogue acts: what a caller's turn does to the conversation rather than what it asks about.
// "Thanks, bye" ends the call; "can I talk to a person" asks for one; "sorry, say that again"
// wants the last reply once more; "thank you", "hello, are you there?", "I have a question",
// "hold on, let me find it", "what can you help me with?" and an "okay" after an answer are not
// questions for the answer tiers (which would give them the rephrase request, or a wrong
// article, and count them toward a transfer), and "are you a real person?" deserves an honest
// reply.
//
// The reading is built to fail safe. A turn is an act only when every one of its words fits the
// act: its key phrase ("bye", "agent", "repeat") plus words of courtesy and of the act's own
// grammar ("ok", "thanks", "can I speak to"). A turn with anything else in it ("why did you hang
// up", "please don't hang up", "my travel agent booked it", "thanks, but my card still doesn't
// work") goes to the answer tiers as before. The two acts that end the session's part of the call
// keep their configured phrase lists (call.goodbye_phrases, call.agent_phrases) and their older,
// broader matches — a goodbye phrase ending the turn, a request for an agent anywhere in it — now
// guarded by negation ("don't", "not", "never" before the phrase), a leading question word, and
// compound nouns ("travel agent", "human resources").
//
// English rules for turns in ASCII; a turn with letters outside it is read by Mandarin rules of
// the same kind (the whole turn cut into the act's pieces and words of courtesy), with goodbyes
// and agent requests by the configured phrases alone (MatchesPhrase). Input is PhraseText:
// lower-case words, one space apart (a Mandarin clause is one word).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "pipeline/call_config.h"

namespace hotline::pipeline {

enum class DialogueAct : uint8_t {
  kNone,          // a question or request for the answer tiers
  kGoodbye,       // the caller is done: goodbye, then hang up
  kAgent,         // the caller asks for a person: transfer
  kAskIfMachine,  // "are you a real person?": say what Hotline is, and that a person is a word away
  kRepeat,        // "sorry, say that again": the last reply once more
  kThanks,        // "thank you so much": you're welcome, anything else?
  kHello,         // "hello? are you there?": yes, how can I help?
  kGoAhead,       // "I have a question", or "yes" to "anything else?": go ahead
  kHold,          // "hold on, let me find my card", or only "um": take your time
  kCapabilities,  // "what can you help me with?": what this line is for
  kAcknowledge,   // "okay, got it" after an answer: anything else?
};
std::string_view DialogueActName(DialogueAct act);

// Where the conversation stands when the turn was heard.
struct DialogueState {
  // The session's last words asked whether there is anything else (call.thanks_text): a bare
  // "no", "nope, that's it" or "I'm good" now ends the call.
  bool asked_anything_else = false;
  // The line's last words answered a question and asked nothing back (an answer tier's reply
  // with no question mark): a bare "okay" or "got it" acknowledges it. After a question ("did you
  // mean your card?", "would you like the steps?") the same words are a reply to it, for the
  // answer tiers.
  bool after_statement = false;
};

// The act of one turn. `phrase` is PhraseText of the final (or a stable partial) transcript.
DialogueAct ReadDialogueAct(const CallConfig& call, std::string_view phrase,
                            const DialogueState& state = {});

// What the caller's words over the agent do to its turn.
enum class Overlap : uint8_t {
  kBackchannel,  // they only keep the agent going
  kWords,        // other words: an interruption if said at length
  kCue,          // an interruption cue ("stop", "wait", "no", "sorry"): interrupts however short
};
// Reads the words the caller has said so far over the agent (`phrase`, PhraseText of a partial
// transcript). Backchannel words ("uh huh", "mm hm", "okay", "right", "yeah", "I see", "got it",
// "sure", fillers, "thanks") and words of what the agent is saying (`agent_words`, PhraseText
// words: the caller repeating "five to seven days" back) are no interruption; an empty phrase
// (nothing recognized yet: a cough, a click, the first syllable) reads as a backchannel too.
// Mandarin turns by pieces ("嗯", "对对", "好的", "明白了"; cues "等一下", "不对", "停"), without
// the repeat test.
Overlap ReadOverlap(std::string_view phrase, const std::unordered_set<std::string>& agent_words);

// Common English backchannels ("uh huh", "okay", "i see"), for the recognizer's domain model: a
// model built from questions alone hears a short "uh huh" as the nearest question word.
const std::vector<std::string>& EnglishBackchannels();
// The interruption cues of ReadOverlap as short phrases ("stop", "wait", "excuse me"), for the
// same model: a cue the recognizer cannot hear never stops the agent when said alone.
const std::vector<std::string>& EnglishInterruptionCues();

// True for the acts the session answers without the answer tiers when call.social_replies is on
// (all but kNone, goodbye and agent requests, which are always the session's own).
bool IsSocialAct(DialogueAct act);

}  // namespace hotline::pipeline
