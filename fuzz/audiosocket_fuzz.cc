// Asterisk AudioSocket framing (transport/audiosocket/packet.h): the PacketParser the AudioSocket
// server runs over each TCP connection, fed the stream in the pieces socket reads return. Input:
// one byte choosing how the stream is cut into reads (fuzz_input.h, StreamChunker), then the
// stream.
// Properties: the packets and the error do not depend on how the stream was cut; every packet
// re-encodes to bytes that parse back to it; a call UUID prints and parses back to itself.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "transport/audiosocket/packet.h"

namespace {

namespace as = hotline::transport::audiosocket;

struct Parsed {
  std::vector<std::pair<as::PacketType, std::string>> packets;
  bool failed = false;
  bool cut_off = false;  // the stream ended inside a packet
};

// Feeds `next()`'s pieces until it returns an empty one, taking packets out after each read as
// the server does, and stopping at the first error as the server closes the connection.
template <typename NextPiece>
Parsed Parse(NextPiece next) {
  Parsed out;
  as::PacketParser parser;
  as::Packet packet;
  for (std::string_view piece = next(); !piece.empty(); piece = next()) {
    if (!parser.Feed(piece).ok()) {
      out.failed = true;
      return out;
    }
    for (;;) {
      auto more = parser.Next(packet);
      if (!more.ok()) {
        out.failed = true;
        return out;
      }
      if (!*more) break;
      HOTLINE_FUZZ_CHECK(packet.type != as::PacketType::kAudio || packet.payload.size() % 2 == 0);
      out.packets.emplace_back(packet.type, packet.payload);
    }
  }
  out.cut_off = !parser.Finish().ok();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hotline::fuzz::StreamChunker chunker(data, size);
  const Parsed pieces = Parse([&] { return chunker.Next(); });
  bool given = false;
  const Parsed whole = Parse([&] {
    if (given) return std::string_view();
    given = true;
    return chunker.stream();
  });
  HOTLINE_FUZZ_CHECK(pieces.failed == whole.failed);
  HOTLINE_FUZZ_CHECK(pieces.cut_off == whole.cut_off);
  HOTLINE_FUZZ_CHECK(pieces.packets == whole.packets);

  std::string encoded;
  for (const auto& [type, payload] : whole.packets) {
    const auto* p = reinterpret_cast<const uint8_t*>(payload.data());
    HOTLINE_FUZZ_CHECK(as::AppendPacket(type, {p, payload.size()}, encoded).ok());
    if (type == as::PacketType::kUuid) {
      auto uuid = as::ParseUuid(as::FormatUuid({p, payload.size()}));
      HOTLINE_FUZZ_CHECK(uuid.ok() && std::equal(uuid->begin(), uuid->end(), p));
    }
  }
  bool again_given = false;
  const Parsed again = Parse([&] {
    if (again_given) return std::string_view();
    again_given = true;
    return std::string_view(encoded);
  });
  HOTLINE_FUZZ_CHECK(!again.failed && !again.cut_off && again.packets == whole.packets);
  return 0;
}
