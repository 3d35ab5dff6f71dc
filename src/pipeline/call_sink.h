// CallSink: what a transport implements so a CallSession can talk back to the caller.
//
// pipeline/ knows nothing of sockets: a Twilio WebSocket, an AudioSocket TCP connection, a
// browser softphone or a WAV file recorder each implement this interface and feed the session
// through CallSession::PushAudio/PushDtmf/MarkPlayed/Hangup.
//
// Threads: every method is called from the session's worker threads (never from the transport's
// own thread), possibly from two workers at once (the speaking worker sends audio while the
// listening worker calls Clear() on barge-in). Implementations must be thread-safe and must not
// block: queue the data for the transport's I/O thread and return.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace hotline::pipeline {

class CallSink {
 public:
  virtual ~CallSink() = default;

  // Agent audio in the call's media format (CallInfo::format: μ-law bytes, or PCM16 little-endian
  // bytes), a whole number of 20 ms frames (CallConfig::output_chunk_ms). The transport queues and
  // paces it; the bytes are only valid during the call.
  virtual void SendAudio(std::span<const uint8_t> payload) = 0;
  // A named marker after the audio sent so far; the transport calls CallSession::MarkPlayed(name)
  // when playback reaches it (Twilio "mark"). Transports without marks may ignore it.
  virtual void SendMark(std::string_view name) = 0;
  // Drops every queued, not yet played audio frame (barge-in: the caller talks over the agent).
  virtual void Clear() = 0;
  // The agent ends the call (goodbye, no response, fatal error). No further audio follows.
  // `reason` is free text for logs, except the kHangup* values below, which a transport may
  // count apart.
  virtual void Hangup(std::string_view reason) = 0;
  // The agent hands the call to a human agent; the transport carries it out or records it.
  virtual void Transfer(std::string_view reason) = 0;
  // A JSON object for displays and logs: "transcript", "answer", "turn" (ledger), "barge_in",
  // "error". `json` is one complete JSON text.
  virtual void Event(std::string_view type, std::string_view json) = 0;
};

// Hangup reasons of the session's own endings: silence through the re-prompts
// (call.reprompt_max), and the call's longest length (CallInfo::max_call_ms).
inline constexpr std::string_view kHangupNoResponse = "no response from caller";
inline constexpr std::string_view kHangupTimeLimit = "time limit reached";

}  // namespace hotline::pipeline
