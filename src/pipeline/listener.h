// Listener: the listening stage of one call. The line's payloads are decoded into 20 ms frames;
// each frame goes through the VAD, the barge-in detector (while the agent's audio plays), the
// endpointer (with the transcript's "looks complete" hint, or the learned turn detector's wait)
// and the recognizer stream, which starts on the pre-roll so the first phoneme is not lost. What
// it hears comes out as typed events, in order, for the call's turn logic; the Listener knows
// nothing of turns, answers or playback beyond what the caller is told each frame.
//
//   auto listener = Listener::Create(options, recognizer);      // once per call
//   listener->Decode(payload, [&](audio::AudioView frame) {
//     events.clear();
//     listener->Hear(frame, {playing, level}, events);
//     for (const Listener::Event& e : events) ...                // kEndOfTurn: FinishUtterance()
//   });
//
// Thread-compatible: one strand (the call's listen strand) calls everything.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "asr/recognizer.h"
#include "asr/turn_detector.h"
#include "audio/barge_in.h"
#include "audio/codec.h"
#include "audio/endpointer.h"
#include "audio/frame_chunker.h"
#include "audio/vad.h"
#include "common/status.h"

namespace hotline::pipeline {

struct ListenerOptions {
  audio::Codec codec = audio::Codec::kMulaw;
  int sample_rate_hz = 8000;  // the line's rate: VAD, endpointer and recognizer all take it
  audio::VadConfig vad;
  audio::EndpointerConfig endpointer;
  audio::BargeInConfig barge_in;
  int preroll_ms = 0;  // audio before the VAD's onset fed to a new recognizer stream
  // Optional: the learned end-of-turn decision; null keeps the endpointer's fixed rule.
  std::shared_ptr<const asr::TurnEndModel> turn_model;
  asr::TurnDetectorConfig turn;
};

class Listener {
 public:
  // What the agent's audio is doing at the frame being heard (the call's Playout).
  struct Playback {
    bool playing = false;  // playing or paused for a probable barge-in
    float level_dbfs = -120.0f;
  };

  enum class EventKind {
    kPause,        // caller speech over the agent: pause its audio while it is confirmed
    kResume,       // ... it was not a barge-in after all (echo, a cough): resume
    kBargeIn,      // the caller is talking over the agent: stop it
    kSpeechStart,  // an utterance begins (a recognizer stream is open)
    kPartial,      // a stable partial transcript (`text`)
    kEndOfTurn,    // the utterance is over: call FinishUtterance() for its final transcript
    kDiscarded,    // the utterance was too short to be speech
    kError,        // `error_kind` ("vad", "asr") failed with `error`; the frame goes on
  };

  struct Event {
    EventKind kind = EventKind::kSpeechStart;
    // kEndOfTurn: the endpointer's times (kMaxLength: cut at the utterance's maximum length).
    audio::EndpointUpdate update;
    std::string text;  // kPartial: the partial; kEndOfTurn: the last partial ("" if none)
    // kEndOfTurn: the utterance began while the agent played and never became a barge-in
    // (echo of the agent, or a backchannel such as "mm-hm").
    bool echo = false;
    std::string error_kind;  // kError
    Status error;            // kError
  };

  // InvalidArgument for a bad configuration or rate. `recognizer` must outlive the Listener.
  static Result<std::unique_ptr<Listener>> Create(const ListenerOptions& options,
                                                  asr::Recognizer* recognizer);

  // Decodes `payload` (the line's codec) and calls on_frame(audio::AudioView) for each complete
  // 20 ms frame; a partial frame waits for the next payload.
  template <typename F>
  void Decode(std::span<const uint8_t> payload, F&& on_frame) {
    decoded_.resize(audio::DecodedSamples(options_.codec, payload.size()));
    audio::Decode(options_.codec, payload, decoded_);
    chunker_.Push(std::span<const int16_t>(decoded_), std::forward<F>(on_frame));
  }

  // Hears one frame; appends what it made of it to `events`, in order: a barge-in stage (only
  // while the agent plays), then the utterance's start, a stable partial, its end or discard.
  void Hear(audio::AudioView frame, Playback playback, std::vector<Event>& events);

  // After kEndOfTurn: the recognizer's final pass over the utterance (blocks for it; a
  // time-bounded recognizer returns kDeadlineExceeded at its limit). Closes the stream.
  // Unavailable when the utterance has no stream (its recognizer failed).
  Result<asr::AsrResult> FinishUtterance();

  // A cached answer exists for `phrase` (PhraseText of a partial): if the open utterance's
  // partial still reads so, its end needs only the endpointer's shorter complete_silence_ms; a
  // partial that reads differently later takes the hint back.
  void HintComplete(const std::string& phrase);

  // The agent's turn `turn` is saying `text` (each piece as it is spoken): a caller who only says
  // its words back ("five to seven days?") over the agent is not interrupting
  // (BargeInConfig::check_words). A new turn forgets the last one's words.
  void AgentSays(int turn, std::string_view text);

  bool in_utterance() const { return endpointer_.in_utterance(); }

 private:
  Listener(const ListenerOptions& options, asr::Recognizer* recognizer, audio::Vad vad,
           audio::FrameChunker chunker);

  void DetectBargeIn(const audio::VadFrame& verdict, Playback playback, std::vector<Event>& events);
  void RememberPreroll(audio::AudioView frame);
  void StartUtterance(audio::AudioView frame, bool playing, std::vector<Event>& events);
  void ContinueUtterance(audio::AudioView frame, const audio::VadFrame& verdict, int64_t now_ms,
                         std::vector<Event>& events);
  void StreamFailed(const Status& s, std::vector<Event>& events);
  // A new partial: what do the caller's words do to the agent's turn (barge-in's check_words)?
  void JudgeWords(const std::string& partial);

  ListenerOptions options_;
  asr::Recognizer* recognizer_;
  std::vector<int16_t> decoded_;
  audio::Vad vad_;
  audio::FrameChunker chunker_;
  audio::Endpointer endpointer_;
  audio::BargeInDetector barge_;
  std::optional<asr::TurnDetector> turn_;  // when options_.turn_model is set
  std::unique_ptr<asr::RecognizerStream> stream_;
  uint64_t partial_revision_ = 0;
  std::vector<std::vector<int16_t>> preroll_;  // ring of 20 ms frames at the line rate
  size_t preroll_next_ = 0;
  size_t preroll_count_ = 0;
  bool was_playing_ = false;
  bool overlapped_ = false;    // the open utterance began while the agent was playing
  bool barged_ = false;        // ... and became a barge-in
  std::string hinted_phrase_;  // the partial whose cached answer told the endpointer "complete"
  // What the open utterance's words do to the agent's turn (barge-in's check_words).
  audio::BargeInDetector::Words words_ = audio::BargeInDetector::Words::kUnknown;
  int agent_turn_ = -1;
  std::unordered_set<std::string> agent_words_;  // PhraseText words of agent_turn_'s speech
};

}  // namespace hotline::pipeline
