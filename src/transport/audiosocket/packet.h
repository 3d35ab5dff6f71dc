// Asterisk AudioSocket: the TCP packet format Asterisk's AudioSocket() dialplan application
// speaks (see /work/shared/PROTOCOLS.md and docs/protocols.md), as a pure codec with no sockets.
//
// Every packet is 1 byte of type, 2 bytes of payload length (big-endian), then the payload:
//   0x00 hang-up (no payload)          0x01 call UUID (16 bytes, always the first packet)
//   0x03 DTMF digit (1 ASCII byte)     0x10 audio: signed 16-bit little-endian PCM, 8 kHz mono
//   0xff error (optional 1-byte code)
//
// PacketParser takes the byte stream as it arrives (any split: a packet over several reads,
// several packets in one) and hands back whole, validated packets. It checks each header as soon
// as its 3 bytes are in, so an unknown type or an oversized length fails before the payload is
// waited for; a payload that does not fit its type (a UUID that is not 16 bytes, an odd number of
// audio bytes, a DTMF byte that is not a keypad digit) is an InvalidArgument naming the problem,
// an audio payload over the limit ResourceExhausted. After an error the parser stays failed: the
// stream cannot be resynchronized, so the connection must be closed.
//
// Thread-safety: a PacketParser belongs to one connection, used from one thread at a time. The
// Encode* functions are pure. Steady state does not allocate: the parser's buffer and the
// caller's Packet payload keep their capacity.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace hotline::transport::audiosocket {

enum class PacketType : uint8_t {
  kHangup = 0x00,
  kUuid = 0x01,
  kDtmf = 0x03,
  kAudio = 0x10,
  kError = 0xff,
};
std::string_view PacketTypeName(PacketType type);

inline constexpr size_t kHeaderBytes = 3;
inline constexpr size_t kUuidBytes = 16;
// One 20 ms frame of 8 kHz 16-bit mono.
inline constexpr size_t kFrameBytes = 320;
inline constexpr int kSampleRateHz = 8000;

struct PacketLimits {
  // Largest audio payload accepted (bytes). Asterisk sends 320 (20 ms); 3200 = 200 ms leaves room
  // for other packetizations while bounding what one packet can make the server buffer.
  size_t max_audio_bytes = 3200;
};

struct Packet {
  PacketType type = PacketType::kHangup;
  std::string payload;  // reused between packets
};

using Uuid = std::array<uint8_t, kUuidBytes>;

class PacketParser {
 public:
  explicit PacketParser(PacketLimits limits = {}) : limits_(limits) {}

  // Appends received bytes. Fails (and stays failed) when a complete header is invalid.
  Status Feed(std::string_view bytes);
  // Moves the next whole packet into `out`: true when one was ready, false when more bytes are
  // needed; an error for a malformed packet (the parser then stays failed).
  Result<bool> Next(Packet& out);
  // At the end of the stream: an error when a packet was cut off (header or payload incomplete).
  Status Finish() const;
  // Bytes received but not yet returned as packets.
  size_t buffered() const { return buffer_.size() - pos_; }

 private:
  Status CheckHeader();

  PacketLimits limits_;
  std::string buffer_;
  size_t pos_ = 0;  // start of the first unconsumed byte in buffer_
  Status error_;
};

// Whole packets, appended to `out` (no allocation when `out` has the capacity).
Status AppendPacket(PacketType type, std::span<const uint8_t> payload, std::string& out);
std::string EncodeHangup();
std::string EncodeUuid(const Uuid& uuid);
std::string EncodeDtmf(char digit);
// `pcm16le`: little-endian samples, even length. REQUIRES: at most 65535 bytes (aborts).
std::string EncodeAudio(std::span<const uint8_t> pcm16le);
std::string EncodeError(std::optional<uint8_t> code = std::nullopt);

// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lower case.
std::string FormatUuid(std::span<const uint8_t> bytes);
// Parses the canonical text form (hyphens optional, any case).
Result<Uuid> ParseUuid(std::string_view text);

}  // namespace hotline::transport::audiosocket
