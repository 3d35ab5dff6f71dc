// The speaking half of CallSession::Core (speak strand): a turn's pieces of text through the
// call's Speaker (pipeline/speaker.h: audio cache or streaming TTS, line rate, codec) into the
// Playout, with the ledger's stamps, the model's pacing, and the turn's end (its mark, then a
// hang-up or transfer once it has played).
#include <algorithm>
#include <cmath>
#include <vector>

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
      {
        std::lock_guard lock(mu);
        if (spoken.turn != idx) spoken = SpokenText{idx, {}, {}};
        spoken.pieces.push_back(chunk);
        spoken.frames.push_back(0);
      }
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

std::string CallSession::Core::HeardTextLocked(int idx) const {
  const Playout::Place heard = playout.heard();
  if (idx < 0 || heard.turn != idx || spoken.turn != idx || heard.piece < 0 ||
      static_cast<size_t>(heard.piece) >= spoken.pieces.size()) {
    return "";
  }
  std::string text;
  auto append = [&text](std::string_view words) {
    if (words.empty()) return;
    if (!text.empty()) text += ' ';
    text += words;
  };
  for (int p = 0; p < heard.piece; ++p) append(spoken.pieces[static_cast<size_t>(p)]);
  // Of the piece playing: its words in proportion to its frames played (speech runs at a roughly
  // even pace), whole words only.
  const std::string& piece = spoken.pieces[static_cast<size_t>(heard.piece)];
  const int frames = std::max(1, spoken.frames[static_cast<size_t>(heard.piece)]);
  std::vector<size_t> word_ends;  // offset just past each word
  for (size_t i = 0; i < piece.size(); ++i) {
    if (piece[i] != ' ' && (i + 1 == piece.size() || piece[i + 1] == ' '))
      word_ends.push_back(i + 1);
  }
  const size_t keep = std::min(
      word_ends.size(), static_cast<size_t>(std::lround(static_cast<double>(word_ends.size()) *
                                                        (heard.index + 1) / frames)));
  const size_t end = keep == 0 ? 0 : word_ends[keep - 1];
  append(std::string_view(piece).substr(0, end));
  return text;
}

Status CallSession::Core::SendFrames(int idx, const CancelToken& token,
                                     std::deque<Playout::Frame>& frames) {
  const size_t count = frames.size();
  bool first = false;
  {
    // Under mu so that a barge-in's Clear() is never overtaken by audio of the cancelled turn.
    std::lock_guard lock(mu);
    if (token.cancelled() || closed.load()) return CancelledError("speech cancelled");
    if (spoken.turn == idx && !spoken.pieces.empty()) {
      const int piece = static_cast<int>(spoken.pieces.size()) - 1;
      for (Playout::Frame& f : frames) f.place = {idx, piece, spoken.frames.back()++};
    }
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
