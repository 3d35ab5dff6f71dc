// The browser softphone's WebSocket protocol (docs/protocols.md#browser-softphone) as a pure codec:
// no sockets. The server's SoftphoneEndpoint owns the connection.
//
// Browser → Hotline, in this order:
//   text   {"type":"start","sample_rate":16000,"caller_id":"..."}   first and once
//   binary PCM16 little-endian mono at sample_rate, 10..max_frame_ms ms per message, whole samples
//   text   {"type":"mark","name":"..."}       playback reached a mark the server placed
//   text   {"type":"dtmf","digit":"5"}        a keypad digit
//   text   {"type":"hangup"}                  the caller ends the call; nothing may follow
// Hotline → browser: binary PCM16 at the same rate (the agent's voice) and JSON text events, built
// by the Encode* functions below.
//
// ClientDecoder enforces the order and every bound; an error is InvalidArgument (or
// ResourceExhausted for an oversized text message) naming what was wrong. The decoder stays
// usable after an error, but the endpoint closes the call on the first one.
//
// Thread-safety: a ClientDecoder belongs to one connection (its strand); the encoders are pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace hotline::transport::softphone {

inline constexpr int kProtocolVersion = 1;
// Text messages from the browser are small; anything bigger is refused before parsing.
inline constexpr size_t kMaxTextBytes = 4096;
inline constexpr size_t kMaxCallerIdBytes = 64;
inline constexpr size_t kMaxMarkNameBytes = 64;
// Audio frames: at least 10 ms, at most kMaxFrameMs ms of audio per binary message.
inline constexpr int kMinFrameMs = 10;
inline constexpr int kMaxFrameMs = 200;

enum class ClientMessageType { kStart, kAudio, kMark, kDtmf, kHangup };

struct ClientMessage {
  ClientMessageType type = ClientMessageType::kStart;
  int sample_rate_hz = 0;          // kStart: 8000 or 16000
  std::string caller_id;           // kStart: optional, printable ASCII
  std::span<const uint8_t> audio;  // kAudio: views the decoded message's bytes
  std::string mark_name;           // kMark
  char digit = 0;                  // kDtmf
};

class ClientDecoder {
 public:
  // Decodes one WebSocket message (`binary`: a binary frame). `out.audio` views `data`.
  Status Decode(std::string_view data, bool binary, ClientMessage& out);

  bool started() const { return sample_rate_hz_ != 0; }
  bool hung_up() const { return hung_up_; }
  int sample_rate_hz() const { return sample_rate_hz_; }
  // Bytes of one audio message at the declared rate: [min, max].
  size_t min_audio_bytes() const;
  size_t max_audio_bytes() const;

 private:
  Status DecodeText(std::string_view data, ClientMessage& out);
  Status DecodeAudio(std::string_view data, ClientMessage& out);

  int sample_rate_hz_ = 0;
  bool hung_up_ = false;
};

// Hotline → browser text events. Every one is a JSON object with "type".
// {"type":"started","version":1,"call_id":..,"sample_rate":..}
std::string EncodeStarted(std::string_view call_id, int sample_rate_hz);
// {"type":<type>,"data":<json>} for the session's events (partial, transcript, turn, barge_in,
// error); `json` must be one complete JSON text (CallSink::Event's contract).
std::string EncodeSessionEvent(std::string_view type, std::string_view json);
// {"type":"mark","name":..}: echo it back as {"type":"mark","name":..} once played up to here.
std::string EncodeMark(std::string_view name);
// {"type":"clear"}: drop every queued, unplayed sample now (barge-in).
std::string EncodeClear();
// {"type":"hangup"|"transfer"|"busy","reason":..}: the call ends (after the queued audio).
std::string EncodeEnd(std::string_view kind, std::string_view reason);
// {"type":"error","message":..}: the call is closed for bad input or a server failure.
std::string EncodeError(std::string_view message);

}  // namespace hotline::transport::softphone
