// CallSession, the listen strand: inbound audio through the call's Listener (frames → VAD,
// barge-in detection, endpointer, recognizer), what its events start, and the pause, resume and
// stop of the agent's playback that barge-in drives.
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
  for (const Listener::Event& e : heard) OnHeard(e);
  // Cleared only after the end-of-turn handling has marked the agent busy, so idle() never
  // sees a gap between the caller's turn and the agent's answer.
  in_utterance.store(listener->in_utterance());
  CheckTimers();
}

void CallSession::Core::OnHeard(const Listener::Event& e) {
  switch (e.kind) {
    case Listener::EventKind::kPause:
      PauseOutput();
      break;
    case Listener::EventKind::kResume:
      ResumeOutput();
      break;
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
      EndOfTurn(e);
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
  {
    std::lock_guard lock(mu);
    StopPlaybackLocked();
    idx = book.active();
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
  if (!closed.load()) {
    nlohmann::json j = {{"turn", idx}};
    sink->Event("barge_in", j.dump());
  }
  FinishTurn(idx);
}

}  // namespace hotline::pipeline
