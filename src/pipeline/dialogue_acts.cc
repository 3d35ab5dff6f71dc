#include "pipeline/dialogue_acts.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <unordered_set>
#include <vector>

#include "pipeline/call_session.h"
#include "pipeline/social_reply.h"

namespace hotline::pipeline {
namespace {

using Words = std::vector<std::string_view>;

// The longest turn an act is read from: a longer turn is a question with courtesy around it.
constexpr size_t kMaxActWords = 16;

Words Split(std::string_view s) {
  Words out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    const size_t start = i;
    while (i < s.size() && s[i] != ' ') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

bool IsAscii(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

class WordSet {
 public:
  WordSet(std::initializer_list<std::string_view> lists) {
    for (std::string_view list : lists) {
      for (std::string_view w : Split(list)) words_.insert(w);
    }
  }
  bool Has(std::string_view w) const { return words_.count(w) != 0; }

 private:
  std::unordered_set<std::string_view> words_;
};

// Key phrases, longest first so that "thank you" covers both words before "thank" is tried.
class Phrases {
 public:
  Phrases(std::initializer_list<std::string_view> phrases) {
    for (std::string_view p : phrases) Add(Split(p));
  }
  Phrases(const Phrases&) = delete;  // keys_ views owned_
  Phrases& operator=(const Phrases&) = delete;
  explicit Phrases(const std::vector<std::string>& configured) {
    for (const std::string& p : configured) {
      owned_.push_back(PhraseText(p));
    }
    for (const std::string& p : owned_) Add(Split(p));
  }
  // Length of the key starting at turn[i] (the longest), or 0.
  size_t MatchAt(const Words& turn, size_t i) const {
    for (const Words& k : keys_) {
      if (i + k.size() <= turn.size() && std::equal(k.begin(), k.end(), turn.begin() + i)) {
        return k.size();
      }
    }
    return 0;
  }
  // Length of the key ending the turn (the longest), or 0.
  size_t MatchEnd(const Words& turn) const {
    for (const Words& k : keys_) {
      if (k.size() <= turn.size() &&
          std::equal(k.begin(), k.end(), turn.end() - static_cast<std::ptrdiff_t>(k.size()))) {
        return k.size();
      }
    }
    return 0;
  }

 private:
  void Add(Words k) {
    if (k.empty()) return;
    keys_.push_back(std::move(k));
    std::stable_sort(keys_.begin(), keys_.end(),
                     [](const Words& a, const Words& b) { return a.size() > b.size(); });
  }
  std::vector<std::string> owned_;  // the configured phrases' PhraseText, which keys_ views
  std::vector<Words> keys_;
};

// Words of courtesy and filler that may surround any act ("ok", "thanks so much", "um").
const WordSet& Courtesy() {
  static const WordSet s{
      "ok okay alright right great perfect fine good nice lovely awesome cool excellent wonderful",
      "brilliant super sure well then now oh ah um uh er hmm so and yes yeah yep yup sir madam",
      "maam please kindly just really very much a lot lots again thanks thank you cheers",
      "appreciate appreciated it that this i im am is was for your the all help time everything",
      "today"};
  return s;
}

// Negations that cancel a goodbye or an agent request before them ("please don't hang up").
const WordSet& Negations() {
  static const WordSet s{
      "dont not never no without cant cannot wont didnt doesnt arent isnt wouldnt shouldnt"};
  return s;
}

// A turn that opens with one of these asks about its goodbye phrase ("why did you hang up").
const WordSet& QuestionOpeners() {
  static const WordSet s{
      "why how what when where who which did does do is are can could will would should"};
  return s;
}

// True when the act's keys occur in the turn and every other word is courtesy or `vocab`.
bool Fits(const Words& turn, const Phrases& keys, const WordSet& vocab,
          const WordSet* more = nullptr) {
  if (turn.empty() || turn.size() > kMaxActWords) return false;
  bool found = false;
  for (size_t i = 0; i < turn.size();) {
    if (const size_t n = keys.MatchAt(turn, i); n > 0) {
      found = true;
      i += n;
      continue;
    }
    const std::string_view w = turn[i];
    if (!Courtesy().Has(w) && !vocab.Has(w) && (more == nullptr || !more->Has(w))) return false;
    ++i;
  }
  return found;
}

bool HasAnyIn(const Words& turn, size_t from, size_t to, const WordSet& set) {
  for (size_t i = from; i < to && i < turn.size(); ++i) {
    if (set.Has(turn[i])) return true;
  }
  return false;
}

// --- goodbye ----------------------------------------------------------------------------------

const WordSet& ThanksWords() {
  static const WordSet s{"thanks thank appreciate appreciated grateful cheers obliged many ty"};
  return s;
}

const WordSet& GoodbyeVocab() {
  static const WordSet s{
      "no nope nah have a nice good great day later you to talk soon again bye now for then that",
      "thats it all i im am need needed wanted needs was everything"};
  return s;
}

// Closings that also end a question's sentence ("that's it?"): a goodbye only beside a thanks,
// a "no" or a goodbye.
const Phrases& WeakClosings() {
  static const Phrases p{
      "thats it",     "that is it", "thats everything", "that is everything", "im done",
      "i am done",    "all done",   "nothing else",     "no more questions",  "i have to go",
      "i need to go", "i gotta go", "i got to go",      "i must go",          "im all set",
      "i am all set", "all set"};
  return p;
}

const WordSet& WeakClosingCompanions() {
  static const WordSet s{"thanks thank no nope cheers appreciate bye goodbye"};
  return s;
}

// The answers to "anything else?" that mean no.
const Phrases& NoMoreKeys() {
  static const Phrases p{"no",           "nope",        "nah",        "nothing",      "not really",
                         "im good",      "i am good",   "im fine",    "all good",     "thats it",
                         "thats all",    "that is all", "that is it", "nothing else", "no thanks",
                         "no thank you", "im all set",  "all set"};
  return p;
}

const WordSet& NoMoreVocab() {
  static const WordSet s{
      "no nope nah not really nothing else im i am good fine all thats it that is think set"};
  return s;
}

// A goodbye phrase ending the turn after at most this many words ("it was lovely to speak with
// you, bye bye"), none of them a negation and the first not a question word.
constexpr size_t kMaxWordsBeforeGoodbye = 8;

bool IsGoodbye(const Words& turn, const Phrases& goodbyes, const DialogueState& state) {
  if (const size_t n = goodbyes.MatchEnd(turn); n > 0) {
    const size_t before = turn.size() - n;
    if (before <= kMaxWordsBeforeGoodbye && !(before > 0 && QuestionOpeners().Has(turn[0]))) {
      bool negated = false;
      for (size_t i = 0; i < before; ++i) {
        if (Negations().Has(turn[i]) && turn[i] != "no") negated = true;
      }
      if (!negated) return true;
    }
  }
  if (Fits(turn, goodbyes, GoodbyeVocab(), &ThanksWords())) return true;
  if (Fits(turn, WeakClosings(), GoodbyeVocab(), &ThanksWords()) &&
      HasAnyIn(turn, 0, turn.size(), WeakClosingCompanions())) {
    return true;
  }
  return state.asked_anything_else && Fits(turn, NoMoreKeys(), NoMoreVocab(), &ThanksWords());
}

// --- agent ------------------------------------------------------------------------------------

// "person", "someone", "somebody" ask for an agent only as what the caller would talk to.
const WordSet& TalkNouns() {
  static const WordSet s{"person someone somebody"};
  return s;
}

const WordSet& TalkVerbs() {
  static const WordSet s{"speak talk chat speaking talking chatting contact contacting reach"};
  return s;
}

// Words that make a request of the words after them ("put me through to", "I need a").
const WordSet& RequestVerbs() {
  static const WordSet s{
      "speak talk chat speaking talking chatting transfer transferred connect connected put get",
      "find want need have see call phone ring reach contact contacting reaching give wanna"};
  return s;
}

// An agent word right after these names someone else's agent ("my travel agent").
const WordSet& CompoundBefore() {
  static const WordSet s{
      "travel estate insurance shipping booking letting mortgage mobile network phone tour",
      "ticket customs border secret sales rental leasing freight forwarding tax fellow smooth"};
  return s;
}

// ... and right before these, something that is no person at all ("human resources").
const WordSet& CompoundAfter() {
  static const WordSet s{"resources rights error errors trafficking nature"};
  return s;
}

// A short turn ("agent", "a real person please") asks for an agent on its own.
constexpr size_t kShortRequestWords = 5;
// How far before the agent word a request verb is looked for, and a negation.
constexpr size_t kRequestWindow = 5;
constexpr size_t kNegationWindow = 6;

bool IsAgentRequest(const Words& turn, const Phrases& agents) {
  for (size_t i = 0; i < turn.size(); ++i) {
    size_t n = agents.MatchAt(turn, i);
    if (n == 0 && TalkNouns().Has(turn[i]) && HasAnyIn(turn, i >= 4 ? i - 4 : 0, i, TalkVerbs())) {
      n = 1;
    }
    if (n == 0) continue;
    if (i > 0 && CompoundBefore().Has(turn[i - 1])) continue;
    if (i + n < turn.size() && CompoundAfter().Has(turn[i + n])) continue;
    // "I don't want an agent" is no request; "I don't know how to reach an agent" is one.
    bool negated = false;
    for (size_t j = i >= kNegationWindow ? i - kNegationWindow : 0; j < i; ++j) {
      if (!Negations().Has(turn[j])) continue;
      const bool about_knowing =
          j + 1 < i && (turn[j + 1] == "know" || turn[j + 1] == "understand");
      if (!about_knowing) negated = true;
    }
    if (negated) continue;
    if (turn.size() <= kShortRequestWords ||
        HasAnyIn(turn, i >= kRequestWindow ? i - kRequestWindow : 0, i, RequestVerbs())) {
      return true;
    }
  }
  return false;
}

// --- the social acts --------------------------------------------------------------------------

bool AsksIfMachine(const Words& turn) {
  static const Phrases keys{"bot",         "robot",     "machine",
                            "computer",    "ai",        "recording",
                            "automated",   "automatic", "artificial intelligence",
                            "real person", "human",     "human being",
                            "person",      "real",      "alive"};
  static const WordSet vocab{
      "are you a an the am i is this talking speaking to with or real actual live human person",
      "being bot robot machine computer ai automated recording recorded artificial intelligence",
      "actually really just so tell me if whether know need want can could please do does someone",
      "somebody it think consider yourself sound like considered classified would say life",
      "secretly fake not youre"};
  bool subject = false;
  for (size_t i = 0; i < turn.size(); ++i) {
    const std::string_view w = turn[i];
    if (w == "you" || w == "youre" || w == "yourself") subject = true;
    if (i + 1 < turn.size() &&
        ((w == "am" && turn[i + 1] == "i") || (w == "is" && turn[i + 1] == "this") ||
         (w == "this" && turn[i + 1] == "is"))) {
      subject = true;
    }
  }
  return subject && Fits(turn, keys, vocab);
}

bool AsksToRepeat(std::string_view phrase, const Words& turn) {
  static const std::unordered_set<std::string_view> whole{
      "what",       "sorry what",    "what sorry",         "huh",
      "sorry",      "pardon",        "pardon me",          "excuse me",
      "come again", "what was that", "sorry what was that"};
  if (whole.count(phrase) != 0) return true;
  static const Phrases keys{"repeat",
                            "repeated",
                            "say that again",
                            "say it again",
                            "say again",
                            "say that once more",
                            "one more time",
                            "once more",
                            "come again",
                            "pardon",
                            "what was that",
                            "what did you say",
                            "what did you just say",
                            "didnt hear",
                            "didnt catch",
                            "did not hear",
                            "did not catch",
                            "couldnt hear",
                            "could not hear",
                            "missed that",
                            "excuse me",
                            "say that one more time",
                            "say it one more time",
                            "say that over",
                            "ask the question again",
                            "what did you just",
                            "tell me again",
                            "run that by me again",
                            "what was the question"};
  static const WordSet vocab{
      "ask question just tell hold on sorry hear can could would will you please that it this",
      "yourself what said say just again the last answer thing part sorry i me for once more one",
      "time louder slowly slower didnt did not quite hear catch get understand missed question",
      "response message was need want like to im am over so"};
  return Fits(turn, keys, vocab);
}

bool Thanks(const Words& turn) {
  static const Phrases keys{"thank you", "thanks", "thank",        "appreciate",  "appreciated",
                            "grateful",  "cheers", "much obliged", "many thanks", "ty"};
  static const WordSet vocab{
      "helping helped help me out assistance information info answer answers answering question",
      "providing letting know assist response helpful kindly so much great that was it you have",
      "been a big"};
  return Fits(turn, keys, vocab);
}

bool Hello(const Words& turn) {
  static const Phrases keys{"hello",
                            "hi",
                            "hey",
                            "hiya",
                            "howdy",
                            "good morning",
                            "good afternoon",
                            "good evening",
                            "greetings",
                            "anyone there",
                            "anybody there",
                            "someone there",
                            "are you there",
                            "you there",
                            "can you hear me",
                            "how are you",
                            "how are you doing",
                            "hows it going",
                            "whats up"};
  static const WordSet vocab{
      "today there is anyone anybody someone are you can hear me how doing whats up hows it going"};
  return Fits(turn, keys, vocab);
}

}  // namespace

std::string_view DialogueActName(DialogueAct act) {
  switch (act) {
    case DialogueAct::kNone:
      return "none";
    case DialogueAct::kGoodbye:
      return "goodbye";
    case DialogueAct::kAgent:
      return "agent";
    case DialogueAct::kAskIfMachine:
      return "ask_if_machine";
    case DialogueAct::kRepeat:
      return "repeat";
    case DialogueAct::kThanks:
      return "thanks";
    case DialogueAct::kHello:
      return "hello";
  }
  return "none";
}

std::string SocialReply(const CallConfig& call, DialogueAct act, std::string_view last_reply) {
  switch (act) {
    case DialogueAct::kThanks:
      return call.thanks_text;
    case DialogueAct::kHello:
      return call.hello_text;
    case DialogueAct::kAskIfMachine:
      return call.machine_text;
    default:
      return last_reply.empty() ? call.hello_text : std::string(last_reply);
  }
}

bool IsSocialAct(DialogueAct act) {
  return act == DialogueAct::kAskIfMachine || act == DialogueAct::kRepeat ||
         act == DialogueAct::kThanks || act == DialogueAct::kHello;
}

DialogueAct ReadDialogueAct(const CallConfig& call, std::string_view phrase,
                            const DialogueState& state) {
  if (phrase.empty()) return DialogueAct::kNone;
  if (!IsAscii(phrase)) {
    if (MatchesPhrase(phrase, call.goodbye_phrases, /*anywhere=*/false)) {
      return DialogueAct::kGoodbye;
    }
    if (MatchesPhrase(phrase, call.agent_phrases, /*anywhere=*/true)) return DialogueAct::kAgent;
    return DialogueAct::kNone;
  }
  const Words turn = Split(phrase);
  if (IsGoodbye(turn, Phrases(call.goodbye_phrases), state)) return DialogueAct::kGoodbye;
  if (AsksIfMachine(turn)) return DialogueAct::kAskIfMachine;
  if (IsAgentRequest(turn, Phrases(call.agent_phrases))) return DialogueAct::kAgent;
  if (AsksToRepeat(phrase, turn)) return DialogueAct::kRepeat;
  if (Thanks(turn)) return DialogueAct::kThanks;
  if (Hello(turn)) return DialogueAct::kHello;
  return DialogueAct::kNone;
}

}  // namespace hotline::pipeline
