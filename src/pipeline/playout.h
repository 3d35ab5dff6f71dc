// Playout: the agent's audio between a call and its transport — what has been sent and when it
// plays, the pause of a probable barge-in, and the turn-end marks by which the transport reports
// what has played.
//
// Times are the call's inbound audio clock (milliseconds of caller audio received), the clock the
// barge-in detector and the endpointer run on: a frame sent when nothing is queued starts playing
// "now", one sent behind others after them.
//
//   Playout out(sink);
//   out.Send(frames, now);            // audio of a turn, in order (held instead while paused)
//   out.Mark("turn-3");               // the turn's end: the transport echoes it once played
//   out.Pause(now);                   // the caller may be barging in: Clear(), hold what is left
//   out.Resume(now);                  // ... it was not a barge-in: send the held audio again
//   out.Stop(now);                    // it was: drop everything
//   out.MarkPlayed("turn-3", now);    // the transport's echo beats the estimate
//
// A pause keeps the frames that had not started and everything sent meanwhile; a resume sends
// them as one burst and re-sends the turn-end mark under a new name ("turn-3-r1"), since the
// transport may still report the cleared one. Not thread-safe: the session calls it under its
// mutex, on whichever strand holds that.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/call_sink.h"

namespace hotline::pipeline {

class Playout {
 public:
  // One 20 ms frame of agent audio, encoded for the transport.
  // Where a frame is in the agent's text: its turn, the piece of text (in the order spoken) and
  // its place among that piece's frames. -1: not known.
  struct Place {
    int turn = -1;
    int piece = -1;
    int index = 0;
  };

  struct Frame {
    int64_t start_ms = 0;  // when it starts playing (set by Send)
    float level_dbfs = -120.0f;
    std::vector<uint8_t> bytes;
    Place place;
  };

  // `sink` must outlive the playout.
  explicit Playout(CallSink& sink) : sink_(sink) {}

  // Sends `frames` after what is queued (held instead while paused). Empties `frames`.
  void Send(std::deque<Frame>& frames, int64_t now_ms);
  // The end of a turn's audio: sent now, or after the held audio once a pause resumes.
  void Mark(std::string name);
  // The transport reports `name` played: audio up to it is over, whatever the estimate said.
  // Other names (a mark cleared by a pause, an old turn's) are ignored.
  void MarkPlayed(std::string_view name, int64_t now_ms);

  // A probable barge-in: Clear() at the transport; the frames that had not started playing are
  // held (the one playing is dropped), and so is what Send gets until Resume or Stop.
  void Pause(int64_t now_ms);
  // Not a barge-in after all: the held audio is sent again, then the held mark under a new name.
  void Resume(int64_t now_ms);
  // Drops all agent audio — Clear() at the transport unless a pause already did (or
  // `send_clear` is false, for a call whose transport is gone), the held frames, the timeline,
  // the marks. Ends a pause.
  void Stop(int64_t now_ms, bool send_clear = true);
  // A new turn supersedes what a pause holds: it never plays (the pause itself stays).
  void DropHeld();

  bool paused() const { return paused_; }
  // Audio is playing at `now_ms`; a pause counts (the caller still talks over the agent).
  bool Playing(int64_t now_ms) const { return paused_ || end_ms_ > now_ms; }
  // When the audio sent so far ends playing (not after now: max(end, now) is when new audio
  // would start).
  int64_t end_ms() const { return end_ms_; }
  int64_t StartOfNext(int64_t now_ms) const { return end_ms_ > now_ms ? end_ms_ : now_ms; }
  // The level of the frame playing at `now_ms` (-120 dBFS when none); forgets frames played.
  float Level(int64_t now_ms);
  // The last frame that started playing (by the last Level, Pause, Stop or MarkPlayed): how far
  // into its text the caller heard the agent.
  Place heard() const { return heard_; }

 private:
  CallSink& sink_;
  int64_t end_ms_ = 0;
  std::deque<Frame> playing_;  // sent and not yet played, in order
  bool paused_ = false;
  std::deque<Frame> held_;
  std::string last_mark_;
  bool mark_outstanding_ = false;  // last_mark_ sent, not yet reported played
  bool mark_held_ = false;         // last_mark_ to send after the held audio
  int resumes_ = 0;                // makes marks sent after a resume unique
  Place heard_;

  // Notes the frames of playing_ that started before `now_ms` as heard.
  void HeardBefore(int64_t now_ms);
};

}  // namespace hotline::pipeline
