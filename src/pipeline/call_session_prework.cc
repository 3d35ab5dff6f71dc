// Work before the caller finishes (CallSession::Core): a stable ASR partial is looked up in the
// answerer's shareable cached tiers (Answerer::Peek, answer strand) and the answer's audio is
// synthesized into the audio cache (speak strand) while the caller is still talking. At end of
// turn, a final transcript that reads the same as that partial is answered from the prepared
// answer at once: no answer look-up, and every sentence is an audio-cache hit.
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
  if (phrase.empty() || phrase == last_peeked || WordCount(phrase) < res.call.prework_min_words) {
    return;
  }
  // Goodbyes and agent requests are not answered by the tiers.
  if (MatchesPhrase(phrase, res.call.goodbye_phrases, false) ||
      MatchesPhrase(phrase, res.call.agent_phrases, true)) {
    return;
  }
  last_peeked = phrase;
  auto self = shared_from_this();
  (void)answerer.Post([self, partial, phrase] {
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
    if (self->res.call.prework_ends_turn) {
      // A question the cached tiers answer is most likely complete: end the turn after the
      // endpointer's shorter complete_silence_ms, unless the caller has said more since.
      (void)self->listen.Post([self, phrase] {
        if (self->last_peeked == phrase) self->listener->HintComplete(phrase);
      });
    }
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

void CallSession::Core::RememberExchange(const std::string& caller_text,
                                         const std::string& agent_text) {
  auto self = shared_from_this();
  // History stays the answer strand's.
  (void)answerer.Post(
      [self, caller_text, agent_text] { self->AddToHistory(caller_text, agent_text); });
}

void CallSession::Core::AddToHistory(const std::string& caller_text,
                                     const std::string& agent_text) {
  history.push_back({"user", Redacted(caller_text)});
  history.push_back({"assistant", agent_text});
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
  if (remember) RememberExchange(text, answer.text);
  std::vector<std::string> pieces = answer.sentences;
  if (pieces.empty()) pieces.push_back(answer.text);
  PostSpeak(idx, token, std::move(pieces), false, true, AfterSpeech::kNone, "", BusyGuard());
  return true;
}

}  // namespace hotline::pipeline
