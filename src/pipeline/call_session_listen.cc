// CallSession, the listen strand: inbound audio → frames → VAD, barge-in detection, endpointer
// and recognizer; the pause, resume and stop of the agent's playback that barge-in drives.
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
  decoded.resize(audio::DecodedSamples(info.format.codec, bytes.size()));
  audio::Decode(info.format.codec, bytes, decoded);
  chunker.Push(std::span<const int16_t>(decoded),
               [this](audio::AudioView frame) { ProcessFrame(frame); });
}

void CallSession::Core::ProcessFrame(audio::AudioView frame) {
  if (closed.load()) return;
  frames_in.fetch_add(1);
  const int64_t now_ms = stream_ms.fetch_add(audio::kFrameMs) + audio::kFrameMs;
  auto verdict = vad.Process(frame);
  if (!verdict.ok()) {
    Error(-1, "vad", verdict.status());
    return;
  }
  const bool playing = DetectBargeIn(*verdict, now_ms);
  RememberPreroll(frame);
  audio::EndpointUpdate u = endpointer.Push(verdict->speech);
  switch (u.event) {
    case audio::EndpointEvent::kSpeechStart:
      in_utterance.store(true);
      StartUtterance(frame, playing);
      break;
    case audio::EndpointEvent::kEndOfTurn:
    case audio::EndpointEvent::kMaxLength:
      EndOfTurn(u);
      break;
    case audio::EndpointEvent::kDiscarded:
      asr.reset();
      overlapped = barged = false;
      break;
    case audio::EndpointEvent::kNone:
      if (endpointer.in_utterance() && asr) ContinueUtterance(frame, *verdict, u.now_ms);
      break;
  }
  // Cleared only after the end-of-turn handling has marked the agent busy, so idle() never
  // sees a gap between the caller's turn and the agent's answer.
  in_utterance.store(endpointer.in_utterance());
  CheckTimers();
}

bool CallSession::Core::DetectBargeIn(const audio::VadFrame& verdict, int64_t now_ms) {
  bool playing;
  float out_level;
  {
    std::lock_guard lock(mu);
    playing = PlayingLocked(now_ms);
    out_level = playout.Level(now_ms);
  }
  if (playing) {
    switch (barge.Process(verdict, out_level)) {
      case audio::BargeInEvent::kPause:
        PauseOutput();
        break;
      case audio::BargeInEvent::kResume:
        ResumeOutput();
        break;
      case audio::BargeInEvent::kBargeIn:
        BargeIn();
        break;
      case audio::BargeInEvent::kNone:
        break;
    }
  } else if (was_playing) {
    barge.Reset();
  }
  was_playing = playing;
  return playing;
}

void CallSession::Core::RememberPreroll(audio::AudioView frame) {
  if (preroll.empty()) return;
  std::copy(frame.samples.begin(), frame.samples.end(), preroll[preroll_next].begin());
  preroll_next = (preroll_next + 1) % preroll.size();
  preroll_count = std::min(preroll_count + 1, preroll.size());
}

void CallSession::Core::StartUtterance(audio::AudioView frame, bool playing) {
  silence_ms = 0;
  overlapped = playing;
  barged = barged && playing;  // a barge-in may have fired on this very frame
  partial_revision = 0;
  turn.Reset();
  last_peeked.clear();
  hinted_phrase.clear();
  {
    std::lock_guard lock(mu);
    prework.reset();
  }
  auto stream = res.recognizer->CreateStream(info.format.sample_rate_hz);
  if (!stream.ok()) {
    Error(-1, "asr", stream.status());
    asr.reset();
    return;
  }
  asr = std::move(*stream);
  // Feed the pre-roll (which ends with this frame) so the first phoneme is not lost.
  const size_t n = preroll.empty() ? 0 : preroll_count;
  Status s;
  if (n == 0) s = asr->AcceptFrames(frame);
  for (size_t k = 0; k < n && s.ok(); ++k) {
    const auto& f = preroll[(preroll_next + preroll.size() - n + k) % preroll.size()];
    s = asr->AcceptFrames(audio::AudioView(f, info.format.sample_rate_hz));
  }
  if (!s.ok()) {
    Error(-1, "asr", s);
    asr.reset();
  }
}

void CallSession::Core::ContinueUtterance(audio::AudioView frame, const audio::VadFrame& verdict,
                                          int64_t now_ms) {
  if (res.turn_model) turn.OnFrame(frame, verdict.speech, now_ms);
  if (Status s = asr->AcceptFrames(frame); !s.ok()) {
    Error(-1, "asr", s);
    asr.reset();
  } else if (asr->partial().revision != partial_revision) {
    partial_revision = asr->partial().revision;
    if (res.turn_model) turn.OnPartial(asr->partial().text, now_ms);
    // The caller said more than the question the hint was for: back to the full silence.
    if (!hinted_phrase.empty() && PhraseText(asr->partial().text) != hinted_phrase) {
      endpointer.SetLooksComplete(false);
      hinted_phrase.clear();
    }
    if (asr->partial().stable && !closed.load()) {
      nlohmann::json j = {{"text", Redacted(asr->partial().text)}, {"stable", true}};
      sink->Event("partial", j.dump());
      if (res.call.prework) StartPrework(asr->partial().text);
    }
  }
  if (res.turn_model && asr) endpointer.SetSilenceNeededMs(turn.WaitMs(now_ms));
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
    if (action != AfterSpeech::kNone && action_armed) action_at_ms = playout.StartOfNext(now);
  }
  metrics.barge_in_resumes.Increment();
  HLOG_DEBUG("call {}: playback resumed, the barge-in was not confirmed", info.call_id);
}

void CallSession::Core::AbortSpeech(int idx) {
  std::lock_guard lock(mu);
  if (active_turn != idx) return;
  if (active_cancel) active_cancel->Cancel();
  if (turns[idx].outcome == TurnOutcome::kPending || turns[idx].outcome == TurnOutcome::kAnswered) {
    turns[idx].outcome = TurnOutcome::kSpeculationMissed;
  }
  StopPlaybackLocked();
}

void CallSession::Core::StopPlaybackLocked() {
  playout.Stop(stream_ms.load(), /*send_clear=*/!closed.load());
}

void CallSession::Core::BargeIn() {
  SpeculationPending(/*now=*/true);
  barged = true;
  int idx;
  {
    std::lock_guard lock(mu);
    StopPlaybackLocked();
    idx = active_turn;
    if (active_cancel) active_cancel->Cancel();
    if (idx >= 0) {
      turns[idx].ledger.barge_in = NowMs();
      turns[idx].outcome = TurnOutcome::kBargeIn;
    }
    if (answer_turn == idx) answer_pending = false;
    action = AfterSpeech::kNone;  // an interrupted goodbye does not hang up
    action_armed = false;
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
