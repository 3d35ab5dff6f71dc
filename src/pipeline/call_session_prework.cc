// Work before the caller finishes (CallSession::Core): a stable ASR partial is looked up in the
// answerer's shareable cached tiers (Answerer::Peek, answer strand) and the answer's audio is
// synthesized into the audio cache (speak strand) while the caller is still talking. At end of
// turn, a final transcript that reads the same as that partial is answered from the prepared
// answer at once: no answer look-up, and every sentence is an audio-cache hit. A partial that
// is answered ahead, or already reads as a whole question (Understands, a goodbye, a request
// for a person), ends the turn after the endpointer's shorter complete_silence_ms.
#include <chrono>
#include <sstream>

#include "common/log.h"
#include "pipeline/call_session_core.h"

namespace hotline::pipeline {
namespace {

int WordCount(const std::string& phrase) {
  std::istringstream in(phrase);
  int n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

}  // namespace

void CallSession::Core::StartPrework(const std::string& partial) {
  const std::string phrase = PhraseText(partial);
  if (phrase.empty() || phrase == last_peeked) return;
  const bool hints = res.call.prework_ends_turn && res.call.understood_ends_turn;
  // Goodbyes and agent requests are not answered by the tiers; the session answers them itself,
  // so such a partial is a whole turn. Thanks and hellos are the session's too, but callers
  // often go on after them ("hi, I'd like to ..."): nothing is looked up, nothing hinted. The
  // partial is read without the conversation's state: a "no" to "anything else?" ends the call
  // too, but is not hinted ("no... actually" is common); it needs no look-up either.
  const DialogueAct act = ReadDialogueAct(res.call, phrase);
  if (act == DialogueAct::kGoodbye || act == DialogueAct::kAgent) {
    if (hints) {
      last_peeked = phrase;
      PostHint(phrase);
    }
    return;
  }
  if (res.call.social_replies && IsSocialAct(act)) return;
  if (dialogue.asked_anything_else &&
      ReadDialogueAct(res.call, phrase, dialogue) == DialogueAct::kGoodbye) {
    return;
  }
  if (WordCount(phrase) < res.call.prework_min_words) return;
  last_peeked = phrase;
  auto self = shared_from_this();
  (void)answerer.Post([self, partial, phrase, hints] {
    if (self->closed.load()) return;
    const MonoTime started = self->clock->Now();
    auto peeked = self->res.answerer->Peek(partial, self->caller);
    const double peek_ms = MillisBetween(started, self->clock->Now());
    if (!peeked.ok()) {
      HLOG_DEBUG("call {}: pre-work look-up failed: {}", self->info.call_id,
                 peeked.status().message());
      return;
    }
    if (!peeked->has_value() || (*peeked)->personal || (*peeked)->fallback) {
      // Nothing to prepare, but a question the line understands is most likely complete.
      if (hints) {
        auto understood = self->res.answerer->Understands(partial, self->caller);
        if (understood.ok() && *understood) self->PostHint(phrase);
      }
      // The model will answer: let it compute the likely prompt while the caller talks.
      if (self->res.call.prework_prefetch) {
        const MonoTime t0 = self->clock->Now();
        Status s = self->res.answerer->Prefetch(partial, self->caller, self->history);
        if (!s.ok()) {
          HLOG_DEBUG("call {}: prefetch failed: {}", self->info.call_id, s.message());
        } else {
          self->metrics.prefetches.Increment();
          HLOG_DEBUG("call {}: prompt prefetched in {:.1f} ms", self->info.call_id,
                     MillisBetween(t0, self->clock->Now()));
        }
      }
      return;
    }
    std::vector<std::string> sentences = (*peeked)->sentences;
    if (sentences.empty()) sentences.push_back((*peeked)->text);
    {
      std::lock_guard lock(self->mu);
      Prework p;
      p.phrase = phrase;
      p.answer = std::move(**peeked);
      p.peek_ms = peek_ms;
      self->prework = std::move(p);
    }
    // A question the cached tiers answer is most likely complete.
    if (self->res.call.prework_ends_turn) self->PostHint(phrase);
    (void)self->speak.Post([self, phrase, sentences] {
      const MonoTime t0 = self->clock->Now();
      if (!self->closed.load()) {
        Status s = self->speaker->Prepare(sentences);
        if (!s.ok()) self->Error(-1, "tts", s.WithContext("pre-work synthesis"));
      }
      const double synth_ms = MillisBetween(t0, self->clock->Now());
      std::lock_guard lock(self->mu);
      if (self->prework && self->prework->phrase == phrase) self->prework->synth_ms = synth_ms;
    });
  });
}

void CallSession::Core::PostHint(const std::string& phrase) {
  auto self = shared_from_this();
  // The Listener takes it only while its partial still reads `phrase`.
  (void)listen.Post([self, phrase] { self->listener->HintComplete(phrase); });
}

void CallSession::Core::RememberExchange(int idx, const std::string& caller_text,
                                         const std::string& agent_text) {
  auto self = shared_from_this();
  // History stays the answer strand's.
  (void)answerer.Post(
      [self, idx, caller_text, agent_text] { self->AddToHistory(idx, caller_text, agent_text); });
}

void CallSession::Core::AddToHistory(int idx, const std::string& caller_text,
                                     const std::string& agent_text) {
  history.push_back({"user", Redacted(caller_text)});
  history.push_back({"assistant", agent_text});
  history_turn = idx;
  const size_t keep = static_cast<size_t>(res.call.history_turns) * 2;
  if (history.size() > keep) {
    history.erase(history.begin(), history.end() - static_cast<ptrdiff_t>(keep));
  }
}

bool CallSession::Core::UsePrework(int idx, const std::shared_ptr<CancelToken>& token,
                                   const std::string& text, bool remember) {
  if (!res.call.prework) return false;
  TurnAnswer answer;
  {
    std::lock_guard lock(mu);
    if (!prework || prework->phrase != PhraseText(text)) return false;
    answer = prework->answer;
    TurnReport& t = book.at(idx);
    t.answer = answer.text;
    t.tier = answer.tier;
    t.outcome = TurnOutcome::kAnswered;
    t.prework_used = true;
    // What was done ahead: the look-up, and the synthesis (if it finished before the turn did;
    // if not, the speak strand finishes it first and the saving is smaller).
    t.prework_saved_ms = prework->peek_ms + prework->synth_ms;
    t.ledger.cache_result = NowMs();
    prework.reset();
  }
  metrics.prework_hits.Increment();
  metrics.CountTier(TurnTierName(answer.tier));
  if (remember) RememberExchange(idx, text, answer.text);
  std::vector<std::string> pieces = answer.sentences;
  if (pieces.empty()) pieces.push_back(answer.text);
  PostSpeak(idx, token, std::move(pieces), false, true, AfterSpeech::kNone, "", BusyGuard());
  return true;
}

}  // namespace hotline::pipeline
