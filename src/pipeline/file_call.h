// A file transport: a recorded caller played into a CallSession as a telephone line would
// deliver it, and the agent's channel recorded as the caller would hear it. Used by
// `hotline call`, `hotline demo` and the end-to-end tests.
//
// The caller's segments (8 kHz) are sent as μ-law 20 ms frames — in real time by default, so
// every ledger stamp is honest wall time — each followed by silence until the agent has finished
// its reply (or hung up / transferred). RecordingSink places each agent frame on the call's
// timeline at the moment it was sent (after the audio already queued, as a transport plays it),
// silence in between; Clear() (barge-in) drops what had not played yet.
//
// Threads: RunFileCall blocks the calling thread for the length of the call (real time) and
// uses the resources' pools for the session. RecordingSink is thread-safe.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "audio/pcm.h"
#include "pipeline/call_session.h"

namespace hotline::pipeline {

class RecordingSink final : public CallSink {
 public:
  // `now_ms`: the line's current time (ms of caller audio sent), owned by the feeder.
  explicit RecordingSink(const std::atomic<int64_t>& now_ms) : now_ms_(now_ms) {}

  void SendAudio(std::span<const uint8_t> payload) override;
  void SendMark(std::string_view name) override;
  void Clear() override;
  void Hangup(std::string_view reason) override;
  void Transfer(std::string_view reason) override;
  void Event(std::string_view type, std::string_view json) override;

  // The agent channel so far (8 kHz PCM16).
  audio::AudioBuffer Reply() const;
  std::string hangup_reason() const;
  std::string transfer_reason() const;
  std::vector<std::pair<std::string, std::string>> events() const;

 private:
  const std::atomic<int64_t>& now_ms_;
  mutable std::mutex mu_;
  std::vector<int16_t> reply_;  // 8 kHz
  size_t cursor_ = 0;           // end of queued agent audio, in samples
  std::string hangup_, transfer_;
  std::vector<std::pair<std::string, std::string>> events_;
};

struct FileCallOptions {
  // Send the caller's audio in real time (20 ms per 20 ms frame). Off: as fast as the session
  // takes it — quicker, but agent audio lands earlier on the timeline than a caller would hear it.
  bool realtime = true;
  // Let the greeting play before the caller's first segment.
  bool wait_for_greeting = true;
  // Silence the caller leaves after the agent's reply before the next segment.
  int reply_gap_ms = 600;
  // Longest wait (wall time) for the agent to finish a reply.
  int max_reply_wait_ms = 60000;
  // Silence after the last reply, before the caller hangs up.
  int trailing_silence_ms = 500;
};

struct FileCallResult {
  std::vector<TurnReport> turns;
  audio::AudioBuffer reply;  // 8 kHz: the agent's channel
  std::string hangup_reason;
  std::string transfer_reason;
  SessionStats stats;
  std::vector<std::pair<std::string, std::string>> events;
  double wall_ms = 0;
};

// Plays `segments` (mono, any rate; resampled to 8 kHz) as the caller of one call.
// REQUIRES: info.format is μ-law 8 kHz (a telephone line).
Result<FileCallResult> RunFileCall(const CallResources& resources, CallInfo info,
                                   const std::vector<audio::AudioBuffer>& segments,
                                   const FileCallOptions& options = {});

}  // namespace hotline::pipeline
