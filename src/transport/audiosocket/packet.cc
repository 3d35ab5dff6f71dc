#include "transport/audiosocket/packet.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

namespace hotline::transport::audiosocket {

namespace {

std::string Hex(uint8_t v) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "0x%02x", v);
  return buf;
}

bool IsKnownType(uint8_t t) {
  switch (static_cast<PacketType>(t)) {
    case PacketType::kHangup:
    case PacketType::kUuid:
    case PacketType::kDtmf:
    case PacketType::kAudio:
    case PacketType::kError:
      return true;
  }
  return false;
}

bool IsDtmfDigit(char c) {
  return (c >= '0' && c <= '9') || c == '*' || c == '#' || (c >= 'A' && c <= 'D');
}

}  // namespace

std::string_view PacketTypeName(PacketType type) {
  switch (type) {
    case PacketType::kHangup:
      return "hangup";
    case PacketType::kUuid:
      return "uuid";
    case PacketType::kDtmf:
      return "dtmf";
    case PacketType::kAudio:
      return "audio";
    case PacketType::kError:
      return "error";
  }
  return "unknown";
}

Status PacketParser::Feed(std::string_view bytes) {
  if (!error_.ok()) return error_;
  // Compact once the consumed prefix dominates: keeps the buffer near one packet's size.
  if (pos_ > 0 && pos_ * 2 >= buffer_.size()) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
  buffer_.append(bytes.data(), bytes.size());
  if (buffered() >= kHeaderBytes) return CheckHeader();
  return Status::Ok();
}

Status PacketParser::CheckHeader() {
  const auto* h = reinterpret_cast<const uint8_t*>(buffer_.data() + pos_);
  const uint8_t type = h[0];
  const size_t length = (static_cast<size_t>(h[1]) << 8) | h[2];
  Status s;
  if (!IsKnownType(type)) {
    s = InvalidArgumentError("unknown AudioSocket packet type " + Hex(type) + " (length " +
                             std::to_string(length) +
                             "); known: 0x00 hangup, 0x01 uuid, 0x03 dtmf, 0x10 audio, 0xff error");
  } else {
    switch (static_cast<PacketType>(type)) {
      case PacketType::kHangup:
        if (length != 0) {
          s = InvalidArgumentError("hangup packet with a " + std::to_string(length) +
                                   "-byte payload (expected none)");
        }
        break;
      case PacketType::kUuid:
        if (length != kUuidBytes) {
          s = InvalidArgumentError("uuid packet of " + std::to_string(length) +
                                   " bytes (expected 16)");
        }
        break;
      case PacketType::kDtmf:
        if (length != 1) {
          s = InvalidArgumentError("dtmf packet of " + std::to_string(length) +
                                   " bytes (expected 1 digit)");
        }
        break;
      case PacketType::kAudio:
        if (length > limits_.max_audio_bytes) {
          s = ResourceExhaustedError(
              "audio packet of " + std::to_string(length) + " bytes is over the limit of " +
              std::to_string(limits_.max_audio_bytes) + " (AudioSocket sends 320 bytes per 20 ms)");
        } else if (length % 2 != 0) {
          s = InvalidArgumentError("audio packet of " + std::to_string(length) +
                                   " bytes: not a whole number of 16-bit samples");
        }
        break;
      case PacketType::kError:
        if (length > 1) {
          s = InvalidArgumentError("error packet of " + std::to_string(length) +
                                   " bytes (expected at most a 1-byte code)");
        }
        break;
    }
  }
  if (!s.ok()) error_ = s;
  return s;
}

Result<bool> PacketParser::Next(Packet& out) {
  if (!error_.ok()) return error_;
  if (buffered() < kHeaderBytes) return false;
  RETURN_IF_ERROR(CheckHeader());
  const auto* h = reinterpret_cast<const uint8_t*>(buffer_.data() + pos_);
  const size_t length = (static_cast<size_t>(h[1]) << 8) | h[2];
  if (buffered() < kHeaderBytes + length) return false;
  if (static_cast<PacketType>(h[0]) == PacketType::kDtmf &&
      !IsDtmfDigit(static_cast<char>(h[kHeaderBytes]))) {
    error_ = InvalidArgumentError("dtmf packet with byte " + Hex(h[kHeaderBytes]) +
                                  ", not a keypad digit (0-9, *, #, A-D)");
    return error_;
  }
  out.type = static_cast<PacketType>(h[0]);
  out.payload.assign(buffer_.data() + pos_ + kHeaderBytes, length);
  pos_ += kHeaderBytes + length;
  if (pos_ == buffer_.size()) {
    buffer_.clear();
    pos_ = 0;
  }
  return true;
}

Status PacketParser::Finish() const {
  if (!error_.ok()) return error_;
  const size_t left = buffered();
  if (left == 0) return Status::Ok();
  if (left < kHeaderBytes) {
    return DataLossError("stream ended inside a packet header (" + std::to_string(left) +
                         " of 3 bytes)");
  }
  const auto* h = reinterpret_cast<const uint8_t*>(buffer_.data() + pos_);
  const size_t length = (static_cast<size_t>(h[1]) << 8) | h[2];
  return DataLossError("stream ended inside a packet of type " +
                       std::string(PacketTypeName(static_cast<PacketType>(h[0]))) + " (" +
                       std::to_string(left - kHeaderBytes) + " of " + std::to_string(length) +
                       " payload bytes)");
}

Status AppendPacket(PacketType type, std::span<const uint8_t> payload, std::string& out) {
  if (payload.size() > 0xffff) {
    return InvalidArgumentError("AudioSocket payload of " + std::to_string(payload.size()) +
                                " bytes does not fit the 16-bit length");
  }
  out.push_back(static_cast<char>(type));
  out.push_back(static_cast<char>(payload.size() >> 8));
  out.push_back(static_cast<char>(payload.size() & 0xff));
  out.append(reinterpret_cast<const char*>(payload.data()), payload.size());
  return Status::Ok();
}

namespace {
// The Encode* payloads are the caller's own (REQUIRES: at most 65535 bytes); a larger one is a
// programming error, stopped here rather than sent cut short.
std::string Encode(PacketType type, std::span<const uint8_t> payload) {
  std::string out;
  out.reserve(kHeaderBytes + payload.size());
  if (Status s = AppendPacket(type, payload, out); !s.ok()) {
    std::fprintf(stderr, "audiosocket: %s\n", s.message().c_str());
    std::abort();
  }
  return out;
}
}  // namespace

std::string EncodeHangup() { return Encode(PacketType::kHangup, {}); }
std::string EncodeUuid(const Uuid& uuid) { return Encode(PacketType::kUuid, uuid); }
std::string EncodeDtmf(char digit) {
  const uint8_t b = static_cast<uint8_t>(digit);
  return Encode(PacketType::kDtmf, std::span<const uint8_t>(&b, 1));
}
std::string EncodeAudio(std::span<const uint8_t> pcm16le) {
  return Encode(PacketType::kAudio, pcm16le);
}
std::string EncodeError(std::optional<uint8_t> code) {
  if (!code) return Encode(PacketType::kError, {});
  const uint8_t b = *code;
  return Encode(PacketType::kError, std::span<const uint8_t>(&b, 1));
}

std::string FormatUuid(std::span<const uint8_t> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0xf]);
  }
  return out;
}

Result<Uuid> ParseUuid(std::string_view text) {
  Uuid out{};
  size_t n = 0;
  int high = -1;
  for (char c : text) {
    if (c == '-') continue;
    int v;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      v = c - 'A' + 10;
    } else {
      return InvalidArgumentError("not a UUID: '" + std::string(text.substr(0, 64)) + "'");
    }
    if (high < 0) {
      high = v;
      continue;
    }
    if (n == kUuidBytes) break;
    out[n++] = static_cast<uint8_t>(high << 4 | v);
    high = -1;
  }
  if (n != kUuidBytes || high >= 0 || text.size() > 36 + 4) {
    return InvalidArgumentError("not a UUID (32 hex digits): '" + std::string(text.substr(0, 64)) +
                                "'");
  }
  return out;
}

}  // namespace hotline::transport::audiosocket
