#include "pipeline/listener.h"

#include <algorithm>
#include <utility>

#include "pipeline/call_session.h"  // PhraseText
#include "pipeline/dialogue_acts.h"

namespace hotline::pipeline {
namespace {

Listener::Event Of(Listener::EventKind kind) {
  Listener::Event e;
  e.kind = kind;
  return e;
}

Listener::Event Failed(std::string kind, Status error) {
  Listener::Event e = Of(Listener::EventKind::kError);
  e.error_kind = std::move(kind);
  e.error = std::move(error);
  return e;
}

}  // namespace

Result<std::unique_ptr<Listener>> Listener::Create(const ListenerOptions& options,
                                                   asr::Recognizer* recognizer) {
  if (recognizer == nullptr) return InvalidArgumentError("listener: no recognizer");
  if (options.preroll_ms < 0) return InvalidArgumentError("listener: negative pre-roll");
  RETURN_IF_ERROR(options.endpointer.Validate().WithContext("endpointer"));
  RETURN_IF_ERROR(options.barge_in.Validate().WithContext("barge_in"));
  ASSIGN_OR_RETURN(audio::Vad vad, audio::Vad::Create(options.vad, options.sample_rate_hz));
  ASSIGN_OR_RETURN(audio::FrameChunker chunker,
                   audio::FrameChunker::Create(options.sample_rate_hz));
  return std::unique_ptr<Listener>(
      new Listener(options, recognizer, std::move(vad), std::move(chunker)));
}

Listener::Listener(const ListenerOptions& options, asr::Recognizer* recognizer, audio::Vad vad,
                   audio::FrameChunker chunker)
    : options_(options),
      recognizer_(recognizer),
      vad_(std::move(vad)),
      chunker_(std::move(chunker)),
      endpointer_(options.endpointer),
      barge_(options.barge_in) {
  if (options_.turn_model) turn_.emplace(options_.turn, options_.turn_model);
  const size_t frames = static_cast<size_t>(options_.preroll_ms / audio::kFrameMs);
  preroll_.assign(
      frames, std::vector<int16_t>(audio::SamplesForMs(options_.sample_rate_hz, audio::kFrameMs)));
}

void Listener::Hear(audio::AudioView frame, Playback playback, std::vector<Event>& events) {
  auto verdict = vad_.Process(frame);
  if (!verdict.ok()) {
    events.push_back(Failed("vad", verdict.status()));
    return;
  }
  DetectBargeIn(*verdict, playback, events);
  RememberPreroll(frame);
  // While the agent's audio plays, the line carries its echo: only speech above that echo is the
  // caller's (the barge-in detector's test), so the echo neither opens an utterance nor keeps
  // one open.
  const bool speech = playback.playing ? barge_.caller_speech() : verdict->speech;
  const audio::EndpointUpdate u = endpointer_.Push(speech);
  switch (u.event) {
    case audio::EndpointEvent::kSpeechStart:
      StartUtterance(frame, playback.playing, events);
      break;
    case audio::EndpointEvent::kEndOfTurn:
    case audio::EndpointEvent::kMaxLength: {
      Event e = Of(EventKind::kEndOfTurn);
      e.update = u;
      if (stream_) e.text = stream_->partial().text;
      e.echo = overlapped_ && !barged_;
      events.push_back(std::move(e));
      overlapped_ = barged_ = false;
      hinted_phrase_.clear();
      words_ = audio::BargeInDetector::Words::kUnknown;
      break;
    }
    case audio::EndpointEvent::kDiscarded: {
      stream_.reset();
      overlapped_ = barged_ = false;
      hinted_phrase_.clear();
      words_ = audio::BargeInDetector::Words::kUnknown;
      Event e = Of(EventKind::kDiscarded);
      e.update = u;
      events.push_back(std::move(e));
      break;
    }
    case audio::EndpointEvent::kNone:
      if (endpointer_.in_utterance() && stream_)
        ContinueUtterance(frame, *verdict, u.now_ms, events);
      break;
  }
}

Result<asr::AsrResult> Listener::FinishUtterance() {
  if (!stream_) return UnavailableError("no ASR stream");
  Result<asr::AsrResult> final = stream_->Finish();
  stream_.reset();
  return final;
}

void Listener::HintComplete(const std::string& phrase) {
  if (!endpointer_.in_utterance() || !stream_ || PhraseText(stream_->partial().text) != phrase) {
    return;
  }
  endpointer_.SetLooksComplete(true);
  hinted_phrase_ = phrase;
}

void Listener::DetectBargeIn(const audio::VadFrame& verdict, Playback playback,
                             std::vector<Event>& events) {
  if (playback.playing) {
    switch (barge_.Process(verdict, playback.level_dbfs, words_)) {
      case audio::BargeInEvent::kPause:
        events.push_back(Of(EventKind::kPause));
        break;
      case audio::BargeInEvent::kResume:
        words_ = audio::BargeInDetector::Words::kUnknown;  // the next run's words are judged anew
        events.push_back(Of(EventKind::kResume));
        break;
      case audio::BargeInEvent::kBargeIn:
        barged_ = true;
        events.push_back(Of(EventKind::kBargeIn));
        break;
      case audio::BargeInEvent::kNone:
        break;
    }
  } else if (was_playing_) {
    barge_.Reset();
  }
  was_playing_ = playback.playing;
}

void Listener::JudgeWords(const std::string& partial) {
  if (barged_) return;
  using Words = audio::BargeInDetector::Words;
  switch (ReadOverlap(PhraseText(partial), agent_words_)) {
    case Overlap::kBackchannel:
      if (words_ != Words::kCue) words_ = Words::kUnknown;
      break;
    case Overlap::kWords:
      if (words_ != Words::kCue) words_ = Words::kOther;
      break;
    case Overlap::kCue:
      // Kept until the speech is over: a later partial often loses a short "wait" again.
      words_ = Words::kCue;
      break;
  }
}

void Listener::AgentSays(int turn, std::string_view text) {
  if (turn != agent_turn_) {
    agent_turn_ = turn;
    agent_words_.clear();
  }
  const std::string phrase = PhraseText(text);
  for (size_t i = 0; i < phrase.size();) {
    const size_t end = std::min(phrase.find(' ', i), phrase.size());
    if (end > i) agent_words_.emplace(phrase, i, end - i);
    i = end + 1;
  }
}

void Listener::RememberPreroll(audio::AudioView frame) {
  if (preroll_.empty()) return;
  std::copy(frame.samples.begin(), frame.samples.end(), preroll_[preroll_next_].begin());
  preroll_next_ = (preroll_next_ + 1) % preroll_.size();
  preroll_count_ = std::min(preroll_count_ + 1, preroll_.size());
}

void Listener::StartUtterance(audio::AudioView frame, bool playing, std::vector<Event>& events) {
  overlapped_ = playing;
  barged_ = barged_ && playing;  // a barge-in may have fired on this very frame
  partial_revision_ = 0;
  words_ = audio::BargeInDetector::Words::kUnknown;
  if (turn_) turn_->Reset();
  hinted_phrase_.clear();
  stream_.reset();
  events.push_back(Of(EventKind::kSpeechStart));
  auto stream = recognizer_->CreateStream(options_.sample_rate_hz);
  if (!stream.ok()) return StreamFailed(stream.status(), events);
  stream_ = std::move(*stream);
  // Feed the pre-roll (which ends with this frame) so the first phoneme is not lost.
  const size_t n = preroll_.empty() ? 0 : preroll_count_;
  Status s;
  if (n == 0) s = stream_->AcceptFrames(frame);
  for (size_t k = 0; k < n && s.ok(); ++k) {
    const auto& f = preroll_[(preroll_next_ + preroll_.size() - n + k) % preroll_.size()];
    s = stream_->AcceptFrames(audio::AudioView(f, options_.sample_rate_hz));
  }
  if (!s.ok()) StreamFailed(s, events);
}

void Listener::ContinueUtterance(audio::AudioView frame, const audio::VadFrame& verdict,
                                 int64_t now_ms, std::vector<Event>& events) {
  if (turn_) turn_->OnFrame(frame, verdict.speech, now_ms);
  if (Status s = stream_->AcceptFrames(frame); !s.ok()) return StreamFailed(s, events);
  const asr::AsrPartial& partial = stream_->partial();
  if (partial.revision != partial_revision_) {
    partial_revision_ = partial.revision;
    if (turn_) turn_->OnPartial(partial.text, now_ms);
    // Over the agent, the words decide whether this is an interruption or a backchannel.
    JudgeWords(partial.text);
    // The caller said more than the question the hint was for: back to the full silence.
    if (!hinted_phrase_.empty() && PhraseText(partial.text) != hinted_phrase_) {
      endpointer_.SetLooksComplete(false);
      hinted_phrase_.clear();
    }
    if (partial.stable) {
      Event e = Of(EventKind::kPartial);
      e.text = partial.text;
      events.push_back(std::move(e));
    }
  }
  if (turn_) endpointer_.SetSilenceNeededMs(turn_->WaitMs(now_ms));
}

void Listener::StreamFailed(const Status& s, std::vector<Event>& events) {
  stream_.reset();
  events.push_back(Failed("asr", s));
}

}  // namespace hotline::pipeline
