// Twilio Media Streams: the JSON messages Twilio (and look-alikes) exchange with Hotline over a
// WebSocket, as a pure codec with no sockets (see /work/shared/PROTOCOLS.md and docs/server.md).
//
// Inbound (Twilio -> Hotline): `connected`, `start` (call and stream ids, tracks, custom
// parameters, media format), `media` (base64 μ-law, 8 kHz mono, ~20 ms per message, with sequence
// number, chunk number and timestamp), `dtmf`, `mark` (audio before it has been played), `stop`.
// MediaStreamDecoder parses and validates each into an InboundMessage; anything malformed is an
// InvalidArgument naming the field, an oversized message or payload ResourceExhausted. Events it
// does not know are not errors (Twilio may add some): they come back as kUnknown and are counted.
//
// Outbound (Hotline -> Twilio): `media` (base64 μ-law), `mark` (learn when the caller has heard a
// chunk) and `clear` (drop queued audio on barge-in), built by the Encode* functions.
//
// Thread-safety: a MediaStreamDecoder keeps per-stream state (stream id, last sequence number,
// counters) and belongs to one call; use it from one thread (the call's strand) at a time. The
// Encode* functions are pure. Decoding a media message reuses the message's payload buffer when
// the caller passes the same InboundMessage back in, so steady-state audio does not allocate
// beyond the JSON parser's own work.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace hotline::transport::twilio {

struct MediaStreamLimits {
  // Largest inbound message (bytes of JSON). A 20 ms media message is ~300 bytes; `start` with
  // custom parameters a few KiB.
  size_t max_message_bytes = 64 << 10;
  // Largest decoded audio payload in one media message (8000 bytes = 1 s of 8 kHz μ-law).
  size_t max_payload_bytes = 8000;
  // Most custom parameters in `start`, and the longest key or value.
  size_t max_custom_parameters = 64;
  size_t max_string_bytes = 1024;
};

enum class EventType { kConnected, kStart, kMedia, kDtmf, kMark, kStop, kUnknown };
std::string_view EventTypeName(EventType type);

struct MediaFormat {
  std::string encoding;  // "audio/x-mulaw"
  int sample_rate_hz = 0;
  int channels = 0;
};

struct InboundMessage {
  EventType event = EventType::kUnknown;
  std::string event_name;   // as sent (useful for kUnknown)
  std::string stream_sid;   // every event but `connected`
  int64_t sequence_number = -1;  // -1 when the message has none

  // connected
  std::string protocol;
  std::string version;
  // start
  std::string account_sid;  // also stop
  std::string call_sid;     // also stop
  std::vector<std::string> tracks;
  std::vector<std::pair<std::string, std::string>> custom_parameters;  // in message order
  MediaFormat media_format;
  // media
  std::string track;        // also dtmf ("inbound" / "inbound_track")
  int64_t chunk = -1;
  int64_t timestamp_ms = -1;  // since the stream started
  std::string payload;       // raw μ-law bytes
  // dtmf
  char digit = 0;  // '0'-'9', '*', '#', 'A'-'D'
  // mark
  std::string mark_name;
};

struct DecoderStats {
  uint64_t messages = 0;        // decoded successfully
  uint64_t media_messages = 0;
  uint64_t unknown_events = 0;  // well-formed but not understood; ignored
  uint64_t sequence_gaps = 0;   // a sequence number skipped ahead (lost messages)
  uint64_t out_of_order = 0;    // a sequence number at or below the last one (reordered/repeated)
  uint64_t payload_bytes = 0;
};

class MediaStreamDecoder {
 public:
  explicit MediaStreamDecoder(MediaStreamLimits limits = {}) : limits_(limits) {}

  // Parses one text message into `out` (its previous contents are overwritten; its payload
  // buffer is reused). Errors: InvalidArgument (bad JSON, wrong type, missing field, bad base64,
  // a media/mark/... event for another stream or before `start`), ResourceExhausted (message or
  // payload over the limits). After an error the decoder stays usable.
  Status Decode(std::string_view text, InboundMessage& out);
  Result<InboundMessage> Decode(std::string_view text);

  // The stream id from `start` ("" before it).
  const std::string& stream_sid() const { return stream_sid_; }
  bool started() const { return started_; }
  bool stopped() const { return stopped_; }
  const DecoderStats& stats() const { return stats_; }
  const MediaStreamLimits& limits() const { return limits_; }

 private:
  // After a message's fields are read: its place in the stream (after 'start', on this stream,
  // not after 'stop'), and the stream's counters.
  Status CheckStream(const InboundMessage& out);
  void CountMessage(const InboundMessage& out);

  MediaStreamLimits limits_;
  std::string stream_sid_;
  bool started_ = false;
  bool stopped_ = false;
  int64_t last_sequence_ = -1;
  DecoderStats stats_;
};

// Outbound messages. `mulaw` is raw 8 kHz mono μ-law (no header); it is base64-encoded here.
std::string EncodeMedia(std::string_view stream_sid, std::string_view mulaw);
std::string EncodeMark(std::string_view stream_sid, std::string_view name);
std::string EncodeClear(std::string_view stream_sid);

}  // namespace hotline::transport::twilio
