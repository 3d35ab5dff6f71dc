// CallSession, the turns: a caller's end of turn (speculative start, final transcript, what to
// answer), the session's timers (answer time-out, time limit, hang-up after speech, re-prompts,
// DTMF), and the life of a turn from BeginTurn through the answer strand to FinishTurn.
#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "audio/codec.h"
#include "common/log.h"
#include "common/log_format.h"
#include "pipeline/call_session.h"
#include "pipeline/call_session_core.h"
#include "pipeline/social_reply.h"

namespace hotline::pipeline {

void CallSession::Core::BeginEndOfTurn(const Listener::Event& e, double heard_ms) {
  const audio::EndpointUpdate& u = e.update;
  SpeculationPending(/*now=*/true);
  EndingTurn t;
  t.echo = e.echo;
  TurnReport& r = t.heard.report;
  r.kind = TurnKind::kCaller;
  r.ledger.end_of_turn = heard_ms;
  r.ledger.speech_end = heard_ms - static_cast<double>(u.now_ms - u.speech_end_ms);
  r.ledger.speech_start = heard_ms - static_cast<double>(u.now_ms - u.speech_start_ms);
  t.heard.spec_idx = t.echo ? -1 : StartSpeculation(r, e.text, t.spec_phrase);
  ending = std::move(t);
}

void CallSession::Core::EndOfTurn(FinalPass final) {
  if (!ending) return;  // no end of turn was taken in for it (the call was closing)
  EndingTurn t = std::move(*ending);
  ending.reset();
  HeardTurn& heard = t.heard;
  TurnReport& r = heard.report;
  r.ledger.asr_final = final.done_ms;
  // A time-bounded recognizer (asr/deadline_recognizer.h, as CallStack builds it) returns
  // kDeadlineExceeded at the limit; any other is caught here after the fact.
  heard.asr_slow =
      (!final.result.ok() && final.result.status().code() == StatusCode::kDeadlineExceeded) ||
      r.ledger.asr_final - r.ledger.end_of_turn > res.call.asr_timeout_ms;
  if (final.result.ok()) {
    r.transcript = final.result->text;
    r.asr_confidence = final.result->confidence;
    heard.trusted = res.answerer->TrustsTranscript(final.result->confidence);
  } else {
    heard.final_status = final.result.status();
  }
  silence.Heard();
  if (t.echo) {
    // Speech over the agent that never became a barge-in: echo or a backchannel ("mm-hm").
    r.outcome = TurnOutcome::kDiscarded;
    std::lock_guard lock(mu);
    book.AppendFinished(std::move(r));
    return;
  }
  if (heard.spec_idx < 0) return AnswerHeard(std::move(heard), false);
  {
    std::lock_guard lock(mu);
    heard.spoken = book.at(heard.spec_idx).answer;
  }
  // A transcript the answerer would not answer on its words alone does not confirm the answer
  // prepared for those words either.
  if (!final.result.ok() || heard.asr_slow || !heard.trusted) {
    return AnswerHeard(std::move(heard), false);
  }
  if (PhraseText(final.result->text) == t.spec_phrase) {
    return AnswerHeard(std::move(heard), true);
  }
  // The final pass often changes a word ("how can i" → "how do i") without changing what the
  // caller asked: the speculation stands when the cached tiers answer the final the same way.
  CheckSpeculation(std::move(heard));
}

void CallSession::Core::CheckSpeculation(HeardTurn heard) {
  const uint64_t id = ++spec_checks;
  const std::string text = heard.report.transcript;
  const std::string spoken = heard.spoken;
  spec_check = SpeculationCheck{id, std::move(heard), clock->Now()};
  agent_busy.fetch_add(1);  // idle() is false until it settles
  // Peek reads the caller's state, which belongs to the answer strand: ask there. Its reply
  // comes back to the turn strand; a busy strand counts as "not the same" once
  // call.speculation_check_ms has passed (SpeculationPending, on the next frame).
  auto self = shared_from_this();
  Status posted = answerer.Post([self, id, text, spoken] {
    auto peeked = self->res.answerer->Peek(text, self->caller);
    const bool same = peeked.ok() && peeked->has_value() && !(*peeked)->fallback &&
                      !(*peeked)->personal && (*peeked)->text == spoken;
    (void)self->turns.Post([self, id, same] { self->SettleSpeculation(id, same); });
  });
  if (!posted.ok()) SettleSpeculation(id, false);  // an overloaded answer strand: not the same
}

void CallSession::Core::SettleSpeculation(uint64_t id, bool same) {
  if (!spec_check || spec_check->id != id) return;  // settled already (timed out)
  HeardTurn heard = std::move(spec_check->heard);
  spec_check.reset();
  agent_busy.fetch_sub(1);
  AnswerHeard(std::move(heard), same);
}

bool CallSession::Core::SpeculationPending(bool now) {
  if (!spec_check) return false;
  if (!now && MillisBetween(spec_check->asked, clock->Now()) < res.call.speculation_check_ms) {
    return true;
  }
  HLOG_DEBUG("call {}: speculation check {}", LogEscape(info.call_id),
             now ? "cut short by a new turn" : "timed out");
  SettleSpeculation(spec_check->id, false);
  return false;
}

void CallSession::Core::AnswerHeard(HeardTurn heard, bool speculated) {
  TurnReport& r = heard.report;
  const int spec_idx = heard.spec_idx;
  if (spec_idx >= 0) {
    if (speculated) {
      std::lock_guard lock(mu);
      TurnReport& t = book.at(spec_idx);
      t.transcript = r.transcript;
      t.asr_confidence = r.asr_confidence;
      t.ledger.asr_final = r.ledger.asr_final;
    } else {
      // The caller said something else: stop the prepared answer, answer what was said.
      AbortSpeech(spec_idx);
      ReleaseFinish(spec_idx);
      metrics.speculation_misses.Increment();
    }
  }
  silence.Answered();
  metrics.turns.Increment();
  if (!closed.load()) {
    nlohmann::json j = {{"text", Redacted(r.transcript)}};
    sink->Event("transcript", j.dump());
  }
  if (speculated) {
    metrics.speculation_hits.Increment();
    RememberExchange(spec_idx, r.transcript, heard.spoken);
    ReleaseFinish(spec_idx);
    return;
  }
  std::string text = r.transcript;
  std::shared_ptr<CancelToken> token;
  int idx = BeginTurn(std::move(r), token);
  if (!heard.final_status.ok() || heard.asr_slow) {
    Status s = heard.final_status.ok()
                   ? DeadlineExceededError("recognizer took longer than call.asr_timeout_ms")
                   : heard.final_status;  // kDeadlineExceeded from a bounded recognizer
    Error(idx, heard.asr_slow ? "asr_timeout" : "asr", s);
    SpeakPrompt(idx, token, heard.asr_slow ? res.call.busy_text : res.call.error_text,
                AfterSpeech::kNone, "");
    return;
  }
  RespondTo(idx, std::move(token), std::move(text), heard.trusted);
}

int CallSession::Core::StartSpeculation(const TurnReport& r, const std::string& partial,
                                        std::string& phrase) {
  if (!res.call.prework || !res.call.prework_speculate || closed.load()) return -1;
  phrase = PhraseText(partial);
  {
    std::lock_guard lock(mu);
    if (phrase.empty() || !prework || prework->phrase != phrase) return -1;
  }
  TurnReport early = r;
  early.transcript = partial;  // until the final pass says otherwise
  std::shared_ptr<CancelToken> token;
  const int idx = BeginTurn(std::move(early), token);
  {
    std::lock_guard lock(mu);
    book.Hold(idx);
  }
  if (!UsePrework(idx, token, partial, /*remember=*/false)) {
    ReleaseFinish(idx);
    return -1;
  }
  return idx;
}

void CallSession::Core::RespondTo(int idx, std::shared_ptr<CancelToken> token, std::string text,
                                  bool trusted) {
  const std::string phrase = PhraseText(text);
  DialogueState state = dialogue;
  {
    std::lock_guard lock(mu);
    if (const TurnReport* last = LastReplyLocked(idx)) {
      state.after_statement = StateAfterReply(res.call, last->answer, last->tier).after_statement;
    }
  }
  const DialogueAct act = ReadDialogueAct(res.call, phrase, state);
  if (!phrase.empty()) dialogue = {};  // a turn heard as nothing keeps "anything else?" open
  if (phrase.empty()) {
    {
      std::lock_guard lock(mu);
      book.at(idx).outcome = TurnOutcome::kNotHeard;
    }
    SpeakPrompt(idx, token, res.call.not_heard_text, AfterSpeech::kNone, "");
  } else if (act == DialogueAct::kGoodbye) {
    {
      std::lock_guard lock(mu);
      book.at(idx).outcome = TurnOutcome::kGoodbye;
      book.at(idx).tier = TurnTier::kGoodbye;
    }
    SpeakPrompt(idx, token, res.call.goodbye_text, AfterSpeech::kHangup, "caller said goodbye");
  } else if (act == DialogueAct::kAgent) {
    {
      std::lock_guard lock(mu);
      book.at(idx).outcome = TurnOutcome::kTransfer;
      book.at(idx).tier = TurnTier::kTransfer;
    }
    SpeakPrompt(idx, token, res.call.transfer_text, AfterSpeech::kTransfer,
                "caller asked for an agent");
  } else if (res.call.social_replies && IsSocialAct(act)) {
    ReplySocially(idx, std::move(token), act);
  } else if (!trusted || !UsePrework(idx, token, text)) {
    StartAnswer(idx, token, std::move(text));
  }
}

void CallSession::Core::ReplySocially(int idx, std::shared_ptr<CancelToken> token,
                                      DialogueAct act) {
  std::string reply;
  {
    std::lock_guard lock(mu);
    // "Say that again": the last thing said, the greeting included.
    const TurnReport* last = LastReplyLocked(idx);
    reply = SocialReply(res.call, act, last != nullptr ? std::string_view(last->answer) : "");
    TurnReport& t = book.at(idx);
    t.outcome = TurnOutcome::kAnswered;
    t.tier = TurnTier::kSocial;
  }
  dialogue = StateAfterReply(res.call, reply, TurnTier::kSocial);
  // "Hold on, let me find my card": the caller is away for a while, not gone.
  if (act == DialogueAct::kHold) silence.Hold();
  metrics.CountSocial(DialogueActName(act));
  SpeakPrompt(idx, std::move(token), reply, AfterSpeech::kNone, "");
}

const TurnReport* CallSession::Core::LastReplyLocked(int idx) {
  for (int i = idx - 1; i >= 0; --i) {
    const TurnReport& t = book.at(i);
    if (!t.answer.empty()) return &t;
  }
  return nullptr;
}

bool CallSession::Core::CheckTimeLimit(int64_t now) {
  if (info.max_call_ms <= 0 || time_limit_said || now < info.max_call_ms) return false;
  const bool forced = now >= info.max_call_ms + kTimeLimitGraceMs;
  {
    std::lock_guard lock(mu);
    // A hang-up or transfer already on its way ends the call anyway.
    if (pending_end.armed()) return false;
    if (!QuietLocked(now) && !forced) return false;
    if (forced) StopPlaybackLocked();
  }
  time_limit_said = true;
  HLOG_INFO("call {}: reached its time limit ({} ms){}", LogEscape(info.call_id), info.max_call_ms,
            forced ? ", cutting the turn in progress short" : "");
  TurnReport r;
  r.kind = TurnKind::kTimeLimit;
  r.tier = TurnTier::kGoodbye;
  r.outcome = TurnOutcome::kTimeLimit;
  std::shared_ptr<CancelToken> token;
  const int idx = BeginTurn(std::move(r), token);  // cancels an answer still being prepared
  if (!res.call.time_limit_text.empty()) {
    SpeakPrompt(idx, token, res.call.time_limit_text, AfterSpeech::kHangup,
                std::string(kHangupTimeLimit));
    return true;
  }
  {
    // Nothing to say: the hang-up CheckTimers carries out on the next frame.
    std::lock_guard lock(mu);
    pending_end.Arm(AfterSpeech::kHangup, std::string(kHangupTimeLimit), now);
  }
  FinishTurn(idx);
  return true;
}

void CallSession::Core::CheckTimers() {
  // The timers start turns: they wait (at most call.speculation_check_ms) for a pending check.
  if (SpeculationPending(/*now=*/false)) return;
  const int64_t now = stream_ms.load();
  if (CheckTimeLimit(now)) return;
  if (keypad.Due(now, res.call.dtmf_timeout_ms)) SubmitDtmf();
  // Answer time-out: the turn is abandoned (its late result is dropped) and busy_text is said.
  int timed_out = -1;
  std::shared_ptr<CancelToken> fresh;
  {
    std::lock_guard lock(mu);
    timed_out = answer_in_flight.TakeTimedOut(*clock, res.call.answer_timeout_ms);
    if (timed_out >= 0) {
      fresh = book.RenewActiveToken();
      book.at(timed_out).outcome = TurnOutcome::kBusy;
    }
  }
  if (timed_out >= 0) {
    Error(timed_out, "answer_timeout",
          DeadlineExceededError("answer took longer than call.answer_timeout_ms"));
    PostSpeak(timed_out, fresh, {res.call.busy_text}, false, true, AfterSpeech::kNone, "",
              BusyGuard());
  }
  // Hang-up / transfer once the agent's last words have played.
  std::optional<PendingEnd::End> due;
  {
    std::lock_guard lock(mu);
    due = pending_end.TakeIfDue(now, playout.paused());
  }
  if (due) {
    bool was_closed = closed.exchange(true);
    ended.store(true);
    if (!was_closed) {
      if (due->what == AfterSpeech::kHangup) {
        metrics.hangups.Increment();
        sink->Hangup(due->reason);
      } else {
        metrics.transfers.Increment();
        sink->Transfer(due->reason);
      }
    }
    return;
  }
  // Re-prompt after silence while nothing else is going on.
  bool quiet;
  {
    std::lock_guard lock(mu);
    quiet = QuietLocked(now) && !pending_end.armed() && keypad.empty();
  }
  const SilenceTimer::Action prompt = silence.Tick(quiet, audio::kFrameMs);
  if (prompt == SilenceTimer::Action::kNone) return;
  TurnReport r;
  r.kind = TurnKind::kReprompt;
  std::shared_ptr<CancelToken> token;
  if (prompt == SilenceTimer::Action::kGoodbye) {
    r.tier = TurnTier::kGoodbye;
    r.outcome = TurnOutcome::kNoResponse;
    int idx = BeginTurn(std::move(r), token);
    SpeakPrompt(idx, token, res.call.goodbye_text, AfterSpeech::kHangup,
                std::string(kHangupNoResponse));
    return;
  }
  metrics.reprompts.Increment();
  r.tier = TurnTier::kReprompt;
  int idx = BeginTurn(std::move(r), token);
  SpeakPrompt(idx, token, res.call.reprompt_text, AfterSpeech::kNone, "");
}

void CallSession::Core::SubmitDtmf() {
  std::string digits = keypad.Take();
  if (digits.empty()) return;
  SpeculationPending(/*now=*/true);
  TurnReport r;
  r.kind = TurnKind::kDtmf;
  r.transcript = "<" + std::to_string(digits.size()) + " keypad digits>";
  std::shared_ptr<CancelToken> token;
  int idx = BeginTurn(std::move(r), token);
  auto self = shared_from_this();
  auto busy = BusyGuard();
  Status s = answerer.Post([self, idx, token, digits = std::move(digits), busy] {
    if (self->closed.load() || token->cancelled()) return self->FinishTurn(idx);
    auto result = self->res.answerer->SubmitPin(self->caller, digits);
    if (token->cancelled()) return self->FinishTurn(idx);
    if (!result.ok()) {
      self->Error(idx, "answer", result.status());
      self->PostSpeak(idx, token, {self->res.call.error_text}, false, true, AfterSpeech::kNone, "",
                      busy);
      return;
    }
    {
      std::lock_guard lock(self->mu);
      TurnReport& t = self->book.at(idx);
      t.answer = result->text;
      t.tier = result->tier;
      t.personal = result->personal;
      // As in SpeakAnswer: a turn superseded or interrupted meanwhile keeps that outcome.
      if (result->transfer) self->book.SettleIfPending(idx, TurnOutcome::kTransfer);
    }
    self->PostSpeak(idx, token, {result->text}, result->personal, true,
                    result->transfer ? AfterSpeech::kTransfer : AfterSpeech::kNone,
                    result->transfer ? "caller not verified" : "", busy);
  });
  if (!s.ok()) Error(idx, "overload", s);
}

std::shared_ptr<void> CallSession::Core::BusyGuard() {
  agent_busy.fetch_add(1);
  auto self = shared_from_this();
  return std::shared_ptr<void>(nullptr, [self](void*) { self->agent_busy.fetch_sub(1); });
}

int CallSession::Core::BeginTurn(TurnReport report, std::shared_ptr<CancelToken>& token) {
  TurnBook::Begun begun;
  {
    std::lock_guard lock(mu);
    begun = book.Begin(std::move(report));
    answer_in_flight.Drop();
    pending_end.Cancel();
    // Audio of the superseded turn held by a pause never plays (the pause itself stays until
    // the barge-in detector settles it).
    playout.DropHeld();
  }
  token = std::move(begun.token);
  if (begun.previous >= 0) FinishTurn(begun.previous);
  return begun.index;
}

void CallSession::Core::StartAnswer(int idx, std::shared_ptr<CancelToken> token, std::string text) {
  std::shared_ptr<llm::GenerationSchedule> schedule;
  {
    std::lock_guard lock(mu);
    // Nothing of this answer is heard yet: its model tokens are needed now.
    schedule = answer_in_flight.Start(idx, clock->Now());
  }
  auto self = shared_from_this();
  auto busy = BusyGuard();
  Status s = answerer.Post([self, idx, token, text = std::move(text), busy, schedule] {
    self->RunAnswer(idx, token, text, busy, schedule.get());
  });
  if (!s.ok()) {
    Error(idx, "overload", s);
    PostSpeak(idx, token, {res.call.busy_text}, false, true, AfterSpeech::kNone, "", BusyGuard());
  }
}

void CallSession::Core::RunAnswer(int idx, const std::shared_ptr<CancelToken>& token,
                                  const std::string& text, const std::shared_ptr<void>& busy,
                                  llm::GenerationSchedule* schedule) {
  if (closed.load() || token->cancelled()) return FinishTurn(idx);
  AnswerHooks hooks;
  hooks.cancel = token.get();
  hooks.schedule = schedule;
  hooks.stream_fallback = misses >= res.call.fallback_retries;
  {
    std::lock_guard lock(mu);
    hooks.asr_confidence = book.at(idx).asr_confidence;
  }
  double first_sentence_at = -1;
  hooks.on_sentence = [&](std::string_view sentence) {
    if (first_sentence_at < 0) first_sentence_at = NowMs();
    // Whether the answer is personal is known only at the end: the speak side looks the audio
    // cache up but stores nothing until then.
    PostSpeak(idx, token, {std::string(sentence)}, /*personal=*/true, false, AfterSpeech::kNone,
              "", busy);
  };
  const double called_at = NowMs();
  // History is the answer strand's: nothing changes it while the answer runs here.
  auto result = res.answerer->Answer(text, caller, history, hooks);
  {
    std::lock_guard lock(mu);
    answer_in_flight.Done(idx);
    // Timed out: busy_text is being said.
    if (book.at(idx).outcome == TurnOutcome::kBusy) return;
    if (result.ok()) {
      TurnLedger& l = book.at(idx).ledger;
      const double done = NowMs();
      if (result->understood_ms >= 0) {
        l.understood = std::min(done, called_at + result->understood_ms);
      }
      if (result->tier == TurnTier::kLlm) {
        if (result->llm_first_token_ms >= 0)
          l.llm_first_token = called_at + result->llm_first_token_ms;
      } else {
        l.cache_result = first_sentence_at >= 0 ? first_sentence_at : done;
      }
      book.at(idx).tokens = result->tokens;
    }
  }
  SpeakAnswer(idx, token, text, std::move(result), busy);
}

void CallSession::Core::SpeakAnswer(int idx, const std::shared_ptr<CancelToken>& token,
                                    const std::string& text, Result<TurnAnswer> result,
                                    const std::shared_ptr<void>& busy) {
  if (closed.load() || token->cancelled()) return FinishTurn(idx);
  if (!result.ok()) {
    Error(idx, "answer", result.status());
    PostSpeak(idx, token, {res.call.error_text}, false, true, AfterSpeech::kNone, "", busy);
    return;
  }
  metrics.CountTier(TurnTierName(result->tier));
  // An unanswerable question is first met with a request to rephrase; only repeated misses
  // go to a human. When a tier failed (the model's server, an account tool), the failure is ours:
  // the caller hears error_text instead, and a repeated failure goes to a human the same way.
  const MissReply miss = result->fallback
                             ? ReplyToMiss(res.call, misses, result->degraded, result->streamed)
                             : MissReply{};
  misses = result->fallback ? misses + 1 : 0;
  if (miss.text != nullptr) result->text = *miss.text;
  const bool rephrase = miss.rephrase;
  const bool transfer = miss.transfer || result->transfer;
  {
    std::lock_guard lock(mu);
    TurnReport& t = book.at(idx);
    t.answer = result->text;
    t.tier = result->tier;
    t.personal = result->personal;
    // A turn that began (or a barge-in that came) since the check above keeps its outcome:
    // the turn strand settles it while this answer finishes here.
    book.SettleIfPending(idx, transfer   ? TurnOutcome::kTransfer
                              : rephrase ? TurnOutcome::kRephrase
                                         : TurnOutcome::kAnswered);
    t.llm_gate = result->gated;
  }
  AddToHistory(idx, text, result->personal ? "<personal>" : result->text);
  AfterSpeech after = transfer ? AfterSpeech::kTransfer : AfterSpeech::kNone;
  std::string reason = result->transfer   ? "caller not verified"
                       : !transfer        ? ""
                       : result->degraded ? "an answer tier failed"
                                          : "no answer tier could answer";
  std::vector<std::string> pieces;
  if (!result->streamed) pieces.push_back(result->text);
  PostSpeak(idx, token, std::move(pieces), result->personal, true, after, reason, busy);
}

void CallSession::Core::SpeakPrompt(int idx, std::shared_ptr<CancelToken> token,
                                    const std::string& text, AfterSpeech after,
                                    std::string reason) {
  {
    std::lock_guard lock(mu);
    TurnReport& t = book.at(idx);
    t.answer = text;
    if (t.tier == TurnTier::kNone) t.tier = TurnTier::kPrompt;
  }
  PostSpeak(idx, std::move(token), {text}, false, true, after, std::move(reason), BusyGuard());
}

void CallSession::Core::Error(int idx, const std::string& kind, const Status& s) {
  errors.fetch_add(1);
  metrics.CountError(kind);
  HLOG_WARN("call {}: {} error: {}", info.call_id, kind, s.message());
  if (idx >= 0) {
    std::lock_guard lock(mu);
    TurnReport& t = book.at(idx);
    if (t.outcome == TurnOutcome::kPending || t.outcome == TurnOutcome::kAnswered) {
      t.outcome = TurnOutcome::kError;
      t.error = kind;
    }
  }
  if (!closed.load()) {
    nlohmann::json j = {{"turn", idx}, {"kind", kind}, {"message", s.message()}};
    sink->Event("error", j.dump());
  }
}

void CallSession::Core::ReleaseFinish(int idx) {
  bool finish;
  {
    std::lock_guard lock(mu);
    finish = book.Release(idx);
  }
  if (finish) FinishTurn(idx);
}

void CallSession::Core::FinishTurn(int idx) {
  TurnReport t;
  {
    std::lock_guard lock(mu);
    std::optional<TurnReport> report = book.Finish(idx, NowMs());
    if (!report) return;
    t = std::move(*report);
  }
  metrics.ObserveTurn(t.ledger, t.kind == TurnKind::kCaller ? TurnTierName(t.tier) : "");
  const double origin = t.ledger.speech_end >= 0 ? t.ledger.speech_end : 0;
  const std::string ledger_json = t.ledger.ToJson(origin);
  const std::string transcript =
      t.kind == TurnKind::kCaller ? Redacted(t.transcript) : t.transcript;
  const std::string_view kind = TurnKindName(t.kind);
  const std::string_view tier = TurnTierName(t.tier);
  const std::string outcome = t.OutcomeText();
  const std::string spoken = t.personal ? "<personal>" : t.answer;
  if (!closed.load()) {
    nlohmann::json j = {{"turn", t.index},
                        {"kind", kind},
                        {"transcript", transcript},
                        {"answer", spoken},
                        {"tier", tier},
                        {"outcome", outcome},
                        {"ledger", nlohmann::json::parse(ledger_json)}};
    sink->Event("turn", j.dump());
  }
  if (res.records != nullptr) {
    TurnRow row;
    row.call_id = info.call_id;
    row.caller_id = info.caller_id;
    row.turn = t.index;
    row.kind = std::string(kind);
    row.transcript = transcript;
    row.answer = spoken;
    row.tier = std::string(tier);
    row.outcome = outcome;
    row.tokens = t.tokens;
    row.ledger_json = ledger_json;
    row.started_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
    if (!res.records->Append(std::move(row))) metrics.records_dropped.Increment();
  }
}

}  // namespace hotline::pipeline
