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

// --- holding the floor ------------------------------------------------------------------------

// "I have a question", "can I ask you something", "I need some help": the question is to come.
bool WantsToAsk(const Words& turn) {
  static const Phrases keys{"question",       "questions", "ask you something", "ask something",
                            "ask a question", "help",      "one more thing",    "another thing",
                            "something else", "query",     "enquiry",           "inquiry"};
  static const WordSet vocab{
      "i ive id have got a an quick another one more small little few couple of can could may",
      "ask you something need some want wanted would like to please with actually also still",
      "hoping be able there is me if"};
  return Fits(turn, keys, vocab);
}

// A "yes" to "anything else?" with no question in it yet ("yes actually", "yeah, one more
// thing").
bool YesToAnythingElse(const Words& turn) {
  static const Phrases keys{"yes",
                            "yeah",
                            "yep",
                            "yup",
                            "sure",
                            "ok",
                            "okay",
                            "i do",
                            "there is",
                            "actually",
                            "one more thing",
                            "another question",
                            "something else",
                            "one more question",
                            "absolutely",
                            "of course",
                            "indeed",
                            "uh huh",
                            "affirmative",
                            "definitely",
                            "certainly",
                            "yeap"};
  static const WordSet vocab{
      "i do have there is actually one more thing another question quick also please something",
      "else small little got"};
  return Fits(turn, keys, vocab);
}

// "Hold on", "one moment, let me find my card", "can you hold on while I get the order number", or
// a turn of nothing but "um" and "hmm". What the caller goes to find ("my card", "the order
// number") may be named only beside a verb of finding: "can I order a second card?" is a question.
bool AsksToHold(const Words& turn) {
  static const Phrases keys{"hold on",
                            "hang on",
                            "one moment",
                            "a moment",
                            "one sec",
                            "a sec",
                            "one second",
                            "a second",
                            "one minute",
                            "a minute",
                            "bear with me",
                            "please hold",
                            "hold the line",
                            "let me check",
                            "let me look",
                            "let me find",
                            "let me see",
                            "let me get",
                            "let me grab",
                            "let me think",
                            "hmm",
                            "um",
                            "uh",
                            "er",
                            "erm",
                            "uhm",
                            "mm",
                            "umm",
                            "hm"};
  constexpr std::string_view kVocab =
      "just give me a an one sec secs second seconds moment moments minute minutes while i can "
      "you could please on wait let me see think bear with up second quick real quickly ill go it "
      "im am";
  constexpr std::string_view kFinding = "find get grab look looking check fetch dig";
  constexpr std::string_view kFound =
      "for it my card number order account the that this details wallet phone bill statement "
      "reference receipt email code pin";
  static const WordSet vocab{kVocab};
  static const WordSet finding{kFinding};
  static const WordSet vocab_and_found{kVocab, kFinding, kFound};
  bool finds = false;
  for (std::string_view w : turn) finds = finds || finding.Has(w);
  return Fits(turn, keys, finds ? vocab_and_found : vocab);
}

// "What can you help me with?", "what are my options?", "what subjects are you familiar with?":
// the line itself ("you", "this line") or the caller's options, with a word of what it can do,
// and nothing else (no topic of its own: "what can you do about my late delivery?").
bool AsksWhatLineDoes(const Words& turn) {
  if (turn.empty() || turn.size() > kMaxActWords) return false;
  static const WordSet line{"you your youre yourself ai line service assistant options"};
  static const WordSet can{
      "help assist ask asked answer answering answers respond use using capabilities",
      "skills subjects subject topics topic familiar versed knowledgable knowledgeable capable",
      "able options services tasks categories queries questions programmed allowed permissible",
      "aware comprehend benefit accomplish complete know accept partial commands"};
  // Words that are about the line on their own ("what questions am I allowed to ask?").
  static const WordSet self{"ask asked commands permissible allowed capabilities options"};
  static const WordSet vocab{
      "what whats which how tell me can could i you your youre the a an of are is am do",
      "does should would will may be to know let please inform wanna wish want like need kind",
      "kinds sort sorts type types different certain all any anything things thing stuff",
      "subjects subject topics topic questions question queries info information categories",
      "skills capabilities tasks areas area familiar versed knowledgable knowledgeable aware",
      "capable able allowed permissible good best well programmed help assist ask asked answer",
      "answering answers respond response use using benefit accomplish complete do with",
      "about in on for from that there get exactly here line this service services assistant",
      "ai my options offer provide have has so ok okay something else me us at really general",
      "comprehend know knows in accept partial commands give doing"};
  static const WordSet openers{
      "what whats which how tell can could i let please are is am ok okay so ai"};
  if (!openers.Has(turn[0])) return false;  // "your answer was good"
  bool names_line = false, names_can = false;
  for (size_t i = 0; i < turn.size(); ++i) {
    const std::string_view w = turn[i];
    if (w == "again" || (!vocab.Has(w) && !Courtesy().Has(w))) return false;
    names_line = names_line || line.Has(w) || self.Has(w);
    names_can = names_can || can.Has(w);
    // "what can you do", "what do you do": "do" says what the line does only after "you".
    if (w == "do" && i >= 1 && turn[i - 1] == "you" && i + 1 == turn.size()) names_can = true;
  }
  return names_line && names_can;
}

// "Okay", "got it", "I see, makes sense" after an answer.
bool Acknowledges(const Words& turn) {
  static const Phrases keys{"ok",          "okay",    "alright",     "all right",    "got it",
                            "gotcha",      "i see",   "understood",  "i understand", "makes sense",
                            "sounds good", "great",   "perfect",     "cool",         "fine",
                            "right",       "noted",   "fair enough", "good to know", "fantastic",
                            "excellent",   "awesome", "wonderful",   "oh",           "ah"};
  static const WordSet vocab{
      "that makes sense sounds good i see got it understand understood "
      "well fair enough to know noted"};
  return Fits(turn, keys, vocab);
}

// --- Mandarin ---------------------------------------------------------------------------------
//
// A Mandarin turn has no spaces between words (PhraseText makes each Han character a word; they
// are joined again), so an act is read by cutting the whole turn into known pieces, longest first:
// the act's key phrases, words of courtesy and filler ("好的", "请", "一下", "啊"), and the act's
// own grammar ("我", "能", "吗"). A turn with any other piece in it
// ("谢谢，但是我的流量还是用不了") goes to the answer tiers, as in English.

class ZhPieces {
 public:
  ZhPieces(std::initializer_list<std::string_view> pieces) : pieces_(pieces) {
    std::stable_sort(pieces_.begin(), pieces_.end(),
                     [](std::string_view a, std::string_view b) { return a.size() > b.size(); });
  }
  // Length in bytes of the longest piece that `s` starts with, or 0.
  size_t Prefix(std::string_view s) const {
    for (std::string_view p : pieces_) {
      if (s.starts_with(p)) return p.size();
    }
    return 0;
  }

 private:
  std::vector<std::string_view> pieces_;
};

const ZhPieces& ZhCourtesy() {
  static const ZhPieces p{"好的", "好", "嗯", "啊",   "哦",       "呢",   "吧",   "了",   "呀",
                          "哈",   "嘛", "请", "麻烦", "一下",     "那个", "就是", "非常", "太",
                          "真",   "您", "你", "喂",   "不好意思", "那",   "就",   "哎"};
  return p;
}

// True when the turn (its characters joined, no spaces) is made of `keys`, `vocab` and courtesy
// pieces only, with at least one key.
bool ZhFits(std::string_view phrase, const ZhPieces& keys, const ZhPieces& vocab) {
  // The longest turn an act is read from (24 characters of three bytes): a longer one asks.
  constexpr size_t kMaxActBytes = 72;
  if (phrase.size() > kMaxActBytes) return false;
  bool found = false;
  size_t i = 0;
  while (i < phrase.size()) {
    const std::string_view rest = phrase.substr(i);
    const size_t k = keys.Prefix(rest);
    const size_t other = std::max(vocab.Prefix(rest), ZhCourtesy().Prefix(rest));
    if (k == 0 && other == 0) return false;
    // The longer piece wins; a key as long as a courtesy word counts as the key.
    if (k >= other) {
      found = true;
      i += k;
    } else {
      i += other;
    }
  }
  return found;
}

DialogueAct ReadMandarinAct(std::string_view phrase, const DialogueState& state) {
  static const ZhPieces none{};
  static const ZhPieces no_more{"没有",   "没了",   "不用",   "没事", "没别的",
                                "就这些", "没什么", "不需要", "谢谢", "多谢"};
  if (state.asked_anything_else && ZhFits(phrase, no_more, none)) return DialogueAct::kGoodbye;
  static const ZhPieces machine{"机器人", "真人", "人工智能", "录音", "机器", "是人"};
  static const ZhPieces machine_vocab{"你", "是", "吗", "还是", "我在", "跟", "和", "说话", "个"};
  if (ZhFits(phrase, machine, machine_vocab)) return DialogueAct::kAskIfMachine;
  return DialogueAct::kNone;  // goodbye and agent requests by phrase: see ReadDialogueAct
}

DialogueAct ReadMandarinSocialAct(std::string_view phrase, const DialogueState& state) {
  static const ZhPieces repeat{"再说一遍", "再说一次", "重复一下", "重复一遍", "再讲一遍", "没听清",
                               "没听清楚", "没听到",   "什么",     "啥",       "再说"};
  static const ZhPieces repeat_vocab{"我", "你", "说", "刚才", "能", "可以",
                                     "吗", "请", "遍", "一遍", "楚"};
  if (ZhFits(phrase, repeat, repeat_vocab)) return DialogueAct::kRepeat;
  static const ZhPieces thanks{"谢谢", "多谢", "感谢", "谢了", "辛苦了", "辛苦"};
  static const ZhPieces thanks_vocab{"你们", "的", "帮助", "帮忙", "啦"};
  if (ZhFits(phrase, thanks, thanks_vocab)) return DialogueAct::kThanks;
  static const ZhPieces hello{"你好",     "您好",     "在吗",     "有人吗",   "有人在吗",
                              "听得到吗", "听得见吗", "能听到吗", "能听见吗", "喂"};
  static const ZhPieces hello_vocab{"吗", "我说话"};
  if (ZhFits(phrase, hello, hello_vocab)) return DialogueAct::kHello;
  static const ZhPieces yes{"有", "是的", "对", "还有", "还有一个问题", "还有个问题", "还有事"};
  static const ZhPieces yes_vocab{"我", "一个", "个", "问题", "想", "问", "事"};
  if (state.asked_anything_else && ZhFits(phrase, yes, yes_vocab)) return DialogueAct::kGoAhead;
  static const ZhPieces ask{"我有个问题", "我有一个问题", "问一下", "想问",     "咨询一下",
                            "想咨询",     "请问",         "帮个忙", "需要帮助", "帮帮我"};
  static const ZhPieces ask_vocab{"我", "想", "有", "个", "能", "可以", "吗", "事"};
  if (ZhFits(phrase, ask, ask_vocab)) return DialogueAct::kGoAhead;
  static const ZhPieces can{"能做什么",   "可以做什么", "能帮我做什么", "能帮我什么",
                            "能办什么",   "能办理什么", "可以办理哪些", "能查什么",
                            "都能做什么", "有什么功能", "能干什么",     "会做什么"};
  static const ZhPieces can_vocab{"你", "你们", "我", "都", "业务", "事情", "呢", "吗", "帮"};
  if (ZhFits(phrase, can, can_vocab)) return DialogueAct::kCapabilities;
  static const ZhPieces hold{"等一下", "等等",     "稍等",     "等一等",   "稍等一下",
                             "等会儿", "等一会",   "我找一下", "我查一下", "我看一下",
                             "我想想", "我想一下", "呃",       "额"};
  static const ZhPieces hold_vocab{"我", "找",   "查",   "看",   "一下", "账单",
                                   "卡", "号码", "手机", "密码", "单号"};
  if (ZhFits(phrase, hold, hold_vocab)) return DialogueAct::kHold;
  static const ZhPieces ack{"好的", "知道了", "明白了", "了解了", "懂了", "明白",
                            "知道", "了解",   "行",     "可以",   "收到", "好"};
  static const ZhPieces none{};
  if (state.after_statement && ZhFits(phrase, ack, none)) return DialogueAct::kAcknowledge;
  return DialogueAct::kNone;
}

Overlap ReadMandarinOverlap(std::string_view joined) {
  static const ZhPieces keys{"嗯",     "嗯嗯", "嗯哼",   "对",   "对对", "对的", "是",   "是的",
                             "好",     "好的", "行",     "哦",   "噢",   "喔",   "啊",   "明白",
                             "明白了", "知道", "知道了", "了解", "懂了", "可以", "没错", "谢谢"};
  static const ZhPieces none{};
  if (ZhFits(joined, keys, none)) return Overlap::kBackchannel;
  for (std::string_view cue : {"等一下", "等等", "稍等", "不对", "不是", "停", "喂", "但是"}) {
    if (joined.find(cue) != std::string_view::npos) return Overlap::kCue;
  }
  return Overlap::kWords;
}

}  // namespace

Overlap ReadOverlap(std::string_view phrase, const std::unordered_set<std::string>& agent_words) {
  if (phrase.empty()) return Overlap::kBackchannel;
  if (!IsAscii(phrase)) {
    std::string joined(phrase);
    std::erase(joined, ' ');
    return ReadMandarinOverlap(joined);
  }
  // Words a listener says to keep the speaker going, and the fillers and courtesy around them.
  static const WordSet listening{
      "uh huh mm hm hmm mhm mmhmm um uhm er ah oh ok okay alright right yeah yes yep yup sure",
      "i see got it gotcha understood understand makes sense fine great good cool perfect",
      "exactly true thanks thank you all correct indeed absolutely totally definitely wow",
      "really interesting nice lovely awesome excellent wonderful noted fair enough"};
  // Words that begin an interruption however short the speech is.
  static const WordSet cues{"stop wait no nope sorry hold hang excuse pardon hey"};
  Overlap read = Overlap::kBackchannel;
  for (std::string_view w : Split(phrase)) {
    if (cues.Has(w)) return Overlap::kCue;
    if (listening.Has(w) || agent_words.count(std::string(w)) != 0) continue;
    read = Overlap::kWords;
  }
  return read;
}

const std::vector<std::string>& EnglishBackchannels() {
  static const std::vector<std::string> phrases{
      "uh huh",      "mm hm",     "mhm",         "okay",        "ok",         "right",
      "yeah",        "yes",       "yep",         "sure",        "alright",    "all right",
      "i see",       "got it",    "okay thanks", "thank you",   "thanks",     "great",
      "perfect",     "cool",      "fine",        "exactly",     "understood", "yeah okay",
      "right right", "okay okay", "yes yes",     "uh huh okay", "okay great", "right okay"};
  return phrases;
}

const std::vector<std::string>& EnglishInterruptionCues() {
  static const std::vector<std::string> phrases{
      "stop", "wait", "no", "sorry", "excuse me", "hold on", "hang on", "pardon", "hey", "no no"};
  return phrases;
}

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
    case DialogueAct::kGoAhead:
      return "go_ahead";
    case DialogueAct::kHold:
      return "hold";
    case DialogueAct::kCapabilities:
      return "capabilities";
    case DialogueAct::kAcknowledge:
      return "acknowledge";
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
    case DialogueAct::kGoAhead:
      return call.go_ahead_text;
    case DialogueAct::kHold:
      return call.hold_text;
    case DialogueAct::kCapabilities:
      return call.help_text;
    case DialogueAct::kAcknowledge:
      return call.anything_else_text;
    default:
      return last_reply.empty() ? call.hello_text : std::string(last_reply);
  }
}

DialogueState StateAfterReply(const CallConfig& call, std::string_view reply, TurnTier tier) {
  const bool answered = tier == TurnTier::kTool || tier == TurnTier::kL1 || tier == TurnTier::kL2 ||
                        tier == TurnTier::kL3 || tier == TurnTier::kKnowledgeBase ||
                        tier == TurnTier::kLlm;
  DialogueState state;
  state.asked_anything_else =
      !reply.empty() && (reply == call.thanks_text || reply == call.anything_else_text);
  const size_t end = reply.find_last_not_of(" \t\r\n");
  const bool asks = end != std::string_view::npos &&
                    (reply[end] == '?' || reply.substr(0, end + 1).ends_with("\uff1f"));
  state.after_statement = answered && end != std::string_view::npos && !asks;
  return state;
}

MissReply ReplyToMiss(const CallConfig& call, int misses, bool degraded, bool streamed) {
  MissReply r;
  r.rephrase = !streamed && misses < call.fallback_retries;
  r.transfer = !r.rephrase;
  if (!streamed && degraded) {
    r.text = r.rephrase ? &call.error_text : &call.failure_transfer_text;
  } else if (r.rephrase) {
    r.text = &call.rephrase_text;
  }
  return r;
}

bool IsSocialAct(DialogueAct act) {
  return act != DialogueAct::kNone && act != DialogueAct::kGoodbye && act != DialogueAct::kAgent;
}

DialogueAct ReadDialogueAct(const CallConfig& call, std::string_view phrase,
                            const DialogueState& state) {
  if (phrase.empty()) return DialogueAct::kNone;
  if (!IsAscii(phrase)) {
    if (MatchesPhrase(phrase, call.goodbye_phrases, /*anywhere=*/false)) {
      return DialogueAct::kGoodbye;
    }
    // PhraseText makes each Han character a word; the pieces are read from the joined turn.
    std::string joined(phrase);
    std::erase(joined, ' ');
    if (const DialogueAct act = ReadMandarinAct(joined, state); act != DialogueAct::kNone) {
      return act;
    }
    if (MatchesPhrase(phrase, call.agent_phrases, /*anywhere=*/true)) return DialogueAct::kAgent;
    return ReadMandarinSocialAct(joined, state);
  }
  const Words turn = Split(phrase);
  if (IsGoodbye(turn, Phrases(call.goodbye_phrases), state)) return DialogueAct::kGoodbye;
  if (AsksIfMachine(turn)) return DialogueAct::kAskIfMachine;
  if (IsAgentRequest(turn, Phrases(call.agent_phrases))) return DialogueAct::kAgent;
  if (AsksToRepeat(phrase, turn)) return DialogueAct::kRepeat;
  if (Thanks(turn)) return DialogueAct::kThanks;
  if (Hello(turn)) return DialogueAct::kHello;
  if (state.asked_anything_else && YesToAnythingElse(turn)) return DialogueAct::kGoAhead;
  if (WantsToAsk(turn)) return DialogueAct::kGoAhead;
  if (AsksWhatLineDoes(turn)) return DialogueAct::kCapabilities;
  if (AsksToHold(turn)) return DialogueAct::kHold;
  if (state.after_statement && Acknowledges(turn)) return DialogueAct::kAcknowledge;
  return DialogueAct::kNone;
}

}  // namespace hotline::pipeline
