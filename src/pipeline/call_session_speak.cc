// The speaking half of CallSession::Core (speak strand): a turn's pieces of text through the
// call's Speaker (pipeline/speaker.h: audio cache or streaming TTS, line rate, codec) into the
// Playout, with the ledger's stamps, the model's pacing, and the turn's end (its mark, then a
// hang-up or transfer once it has played).
#include "common/log.h"
#include "pipeline/call_session_core.h"

namespace hotline::pipeline {

void CallSession::Core::PaceModel(int idx) {
  const MonoTime now = clock->Now();
  std::optional<AnswerInFlight::Pace> pace;
  int64_t ahead_ms = 0;
  {
    std::lock_guard lock(mu);
    pace = answer_in_flight.Paced(idx, now);
    if (!pace) return;
    ahead_ms = std::max<int64_t>(0, playout.end_ms() - stream_ms.load());
  }
  // The next sentence is due when the queued audio ends, less the time the last one took to
  // arrive (generation and synthesis on this machine now), so it is ready before the silence.
  const MonoTime::duration lead = now - pace->previous;
  pace->schedule->Playing(now + std::chrono::milliseconds(ahead_ms) - lead, now);
}

void CallSession::Core::Stamp(int idx, double TurnLedger::*field) {
  std::lock_guard lock(mu);
  if (idx >= 0 && book.at(idx).ledger.*field < 0) book.at(idx).ledger.*field = NowMs();
}

void CallSession::Core::PostSpeak(int idx, std::shared_ptr<CancelToken> token,
                                  std::vector<std::string> pieces, bool personal, bool finish,
                                  AfterSpeech after, std::string reason,
                                  std::shared_ptr<void> busy) {
  auto self = shared_from_this();
  Status s = speak.Post([self, idx, token, pieces = std::move(pieces), personal, finish, after,
                         reason = std::move(reason), busy] {
    self->RunSpeak(idx, token, pieces, personal, finish, after, reason);
  });
  if (!s.ok()) {
    Error(idx, "overload", s);
    FinishTurn(idx);
  }
}

Speaker::Output CallSession::Core::SpeakOutput(int idx, const CancelToken& token) {
  Speaker::Output out;
  out.speaking = [this, idx] { Stamp(idx, &TurnLedger::first_sentence); };
  out.first_audio = [this, idx] { Stamp(idx, &TurnLedger::tts_first_audio); };
  out.frames = [this, idx, &token](std::deque<Playout::Frame> frames) {
    return SendFrames(idx, token, frames);
  };
  return out;
}

void CallSession::Core::RunSpeak(int idx, const std::shared_ptr<CancelToken>& token,
                                 const std::vector<std::string>& pieces, bool personal,
                                 bool finish, AfterSpeech after, const std::string& reason) {
  if (closed.load() || token->cancelled()) {
    speaker->Reset();
    FinishTurn(idx);
    return;
  }
  const Speaker::Output out = SpeakOutput(idx, *token);
  Status status;
  for (const std::string& text : pieces) {
    // The listen strand tells a caller saying these words back from one interrupting them.
    (void)listen.Post(
        [self = shared_from_this(), idx, text] { self->listener->AgentSays(idx, text); });
    const bool first_piece = chunked_turn != idx;
    chunked_turn = idx;
    for (const std::string& chunk : speaker->ChunksOf(first_piece, text)) {
      status = speaker->Say(chunk, *token, out);
      if (!status.ok()) break;
    }
    if (!status.ok()) break;
    PaceModel(idx);
  }
  if (token->cancelled() || closed.load()) {
    speaker->Reset();
    FinishTurn(idx);
    return;
  }
  if (!status.ok()) {
    const bool timeout = status.code() == StatusCode::kDeadlineExceeded;
    Error(idx, timeout ? "tts_timeout" : "tts", status);
    // One spoken fallback; if the fallback itself fails the turn ends silently.
    bool is_fallback = pieces.size() == 1 && pieces[0] == res.call.error_text;
    if (!is_fallback) (void)speaker->Say(res.call.error_text, *token, out);
  }
  if (!finish) return;
  // End of the turn's speech: the last partial frame; the turn's audio may now be shared with
  // other calls, unless it carries this caller's data.
  (void)speaker->Finish(*token, out);
  speaker->Commit(/*shareable=*/!personal);
  {
    std::lock_guard lock(mu);
    if (!token->cancelled() && !closed.load()) {
      playout.Mark("turn-" + std::to_string(idx));  // after held audio, if a pause holds any
      if (after != AfterSpeech::kNone)
        pending_end.Arm(after, reason, playout.StartOfNext(stream_ms.load()));
    }
  }
  Stamp(idx, &TurnLedger::turn_done);
  FinishTurn(idx);
}

Status CallSession::Core::SendFrames(int idx, const CancelToken& token,
                                     std::deque<Playout::Frame>& frames) {
  const size_t count = frames.size();
  bool first = false;
  {
    // Under mu so that a barge-in's Clear() is never overtaken by audio of the cancelled turn.
    std::lock_guard lock(mu);
    if (token.cancelled() || closed.load()) return CancelledError("speech cancelled");
    playout.Send(frames, stream_ms.load());  // held instead while a pause lasts
    if (idx >= 0 && book.at(idx).ledger.first_audio_sent < 0) {
      book.at(idx).ledger.first_audio_sent = NowMs();
      first = true;
    }
  }
  frames_out.fetch_add(count);
  if (first) HLOG_DEBUG("call {}: turn {} first audio sent", info.call_id, idx);
  return Status::Ok();
}

}  // namespace hotline::pipeline
