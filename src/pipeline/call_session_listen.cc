// CallSession, the listen strand: inbound audio through the call's Listener (frames → VAD,
// barge-in detection, endpointer, recognizer and its final pass), its events handed to the turn
// strand (and taken in there), and the pause, resume and stop of the agent's playback that
// barge-in drives.
#include "pipeline/call_session.h"

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "audio/codec.h"
#include "common/log.h"
#include "common/log_format.h"
#include "pipeline/call_session_core.h"

namespace hotline::pipeline {

void CallSession::Core::ProcessPayload(std::vector<uint8_t> bytes) {
  if (closed.load()) return;
  listener->Decode(bytes, [this](audio::AudioView frame) { ProcessFrame(frame); });
}

void CallSession::Core::ProcessFrame(audio::AudioView frame) {
  if (closed.load()) return;
  frames_in.fetch_add(1);
  const int64_t now_ms = stream_ms.fetch_add(audio::kFrameMs) + audio::kFrameMs;
  Listener::Playback playback;
  {
    std::lock_guard lock(mu);
    playback.playing = PlayingLocked(now_ms);
    playback.level_dbfs = playout.Level(now_ms);
  }
  heard.clear();
  listener->Hear(frame, playback, heard);
  const double heard_ms = NowMs();
  TurnInput in;
  in.heard_ms = heard_ms;
  for (Listener::Event& e : heard) {
    if (e.kind == Listener::EventKind::kPause) {
      PauseOutput();
      continue;
    }
    if (e.kind == Listener::EventKind::kResume) {
      ResumeOutput();
      continue;
    }
    const bool end = e.kind == Listener::EventKind::kEndOfTurn;
    in.events.push_back(std::move(e));
    if (!end) continue;
    // The turn strand starts a prepared answer for the last partial while the final pass runs.
    PostTurns(std::move(in));
    in = TurnInput{};
    in.heard_ms = heard_ms;
    Result<asr::AsrResult> result = listener->FinishUtterance();
    in.final.emplace(FinalPass{std::move(result), NowMs()});
  }
  in.tick = true;
  in.in_utterance = listener->in_utterance();
  PostTurns(std::move(in));
}

void CallSession::Core::PostTurns(TurnInput in) {
  // Never refused: a frame's events are not lost to a saturated pool (the turn work then runs
  // here, after the turn strand's earlier inputs).
  turns.PostOrRunHere(
      [self = shared_from_this(), in = std::move(in)]() mutable { self->OnTurnInput(in); });
}

void CallSession::Core::OnTurnInput(TurnInput& in) {
  if (closed.load()) return;
  if (in.final) {
    EndOfTurn(std::move(*in.final));
    if (keypad_submit_after_turn) {
      keypad_submit_after_turn = false;
      SubmitDtmf();
    }
  }
  for (const Listener::Event& e : in.events) OnHeard(e, in.heard_ms);
  if (!in.tick) return;
  // Cleared only after the end-of-turn handling has marked the agent busy, so idle() never
  // sees a gap between the caller's turn and the agent's answer.
  in_utterance.store(in.in_utterance);
  CheckTimers();
}

void CallSession::Core::OnHeard(const Listener::Event& e, double heard_ms) {
  switch (e.kind) {
    case Listener::EventKind::kPause:
    case Listener::EventKind::kResume:
      break;  // the listen strand's own (ProcessFrame)
    case Listener::EventKind::kBargeIn:
      BargeIn();
      break;
    case Listener::EventKind::kSpeechStart:
      in_utterance.store(true);
      silence.Heard();
      last_peeked.clear();
      {
        std::lock_guard lock(mu);
        prework.reset();
      }
      break;
    case Listener::EventKind::kPartial:
      if (closed.load()) break;
      {
        nlohmann::json j = {{"text", Redacted(e.text)}, {"stable", true}};
        sink->Event("partial", j.dump());
      }
      if (res.call.prework) StartPrework(e.text);
      break;
    case Listener::EventKind::kEndOfTurn:
      BeginEndOfTurn(e, heard_ms);
      break;
    case Listener::EventKind::kDiscarded:
      break;
    case Listener::EventKind::kError:
      Error(-1, e.error_kind, e.error);
      break;
  }
}

void CallSession::Core::PauseOutput() {
  const int64_t now = stream_ms.load();
  {
    std::lock_guard lock(mu);
    if (closed.load()) return;
    playout.Pause(now);
  }
  metrics.barge_in_pauses.Increment();
  HLOG_DEBUG("call {}: playback paused for probable barge-in", info.call_id);
}

void CallSession::Core::ResumeOutput() {
  {
    std::lock_guard lock(mu);
    const int64_t now = stream_ms.load();
    if (closed.load()) {
      playout.Stop(now, /*send_clear=*/false);
      return;
    }
    playout.Resume(now);
    pending_end.Postpone(playout.StartOfNext(now));
  }
  metrics.barge_in_resumes.Increment();
  HLOG_DEBUG("call {}: playback resumed, the barge-in was not confirmed", info.call_id);
}

void CallSession::Core::AbortSpeech(int idx) {
  std::lock_guard lock(mu);
  if (book.active() != idx) return;
  book.CancelActive();
  TurnReport& t = book.at(idx);
  if (t.outcome == TurnOutcome::kPending || t.outcome == TurnOutcome::kAnswered) {
    t.outcome = TurnOutcome::kSpeculationMissed;
  }
  StopPlaybackLocked();
}

void CallSession::Core::StopPlaybackLocked() {
  playout.Stop(stream_ms.load(), /*send_clear=*/!closed.load());
}

void CallSession::Core::BargeIn() {
  SpeculationPending(/*now=*/true);
  int idx;
  std::string heard;
  {
    std::lock_guard lock(mu);
    StopPlaybackLocked();
    idx = book.active();
    heard = HeardTextLocked(idx);
    book.CancelActive();
    if (idx >= 0) {
      book.at(idx).ledger.barge_in = NowMs();
      book.at(idx).outcome = TurnOutcome::kBargeIn;
    }
    answer_in_flight.Done(idx);
    pending_end.Cancel();  // an interrupted goodbye does not hang up
  }
  metrics.barge_ins.Increment();
  HLOG_DEBUG("call {}: barge-in on turn {}", info.call_id, idx);
  if (idx >= 0) {
    // The history is the answer strand's; an answer still finishing there adds its exchange
    // first (the strand runs in order), then this cuts it.
    (void)answerer.Post([self = shared_from_this(), idx, heard] { self->CutHistory(idx, heard); });
  }
  if (!closed.load()) {
    nlohmann::json j = {{"turn", idx}, {"heard", heard}};
    sink->Event("barge_in", j.dump());
  }
  FinishTurn(idx);
}

void CallSession::Core::CutHistory(int idx, const std::string& heard) {
  if (history_turn != idx || history.empty() || history.back().role != "assistant") return;
  if (history.back().content == "<personal>") return;  // the caller's data stays out of it
  // What the caller heard, and that it was cut ("…"): the model neither repeats it as new nor
  // takes the rest as said.
  history.back().content = heard.empty() ? "…" : heard + " …";
}

}  // namespace hotline::pipeline
