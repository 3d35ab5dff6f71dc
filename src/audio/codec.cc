#include "audio/codec.h"

#include <string>

#include "audio/g711.h"

namespace hotline::audio {

std::string_view CodecName(Codec codec) {
  switch (codec) {
    case Codec::kPcm16: return "pcm16";
    case Codec::kMulaw: return "mulaw";
    case Codec::kAlaw: return "alaw";
  }
  return "unknown";
}

Result<Codec> ParseCodec(std::string_view name) {
  if (name == "pcm16" || name == "slin" || name == "s16le") return Codec::kPcm16;
  if (name == "mulaw" || name == "ulaw" || name == "pcmu") return Codec::kMulaw;
  if (name == "alaw" || name == "pcma") return Codec::kAlaw;
  return InvalidArgumentError("unknown codec '" + std::string(name) +
                              "'; choose pcm16, mulaw or alaw");
}

void EncodePcm16Le(std::span<const int16_t> in, std::span<uint8_t> out) {
  for (size_t i = 0; i < in.size(); ++i) {
    const auto v = static_cast<uint16_t>(in[i]);
    out[2 * i] = static_cast<uint8_t>(v & 0xff);
    out[2 * i + 1] = static_cast<uint8_t>(v >> 8);
  }
}

void DecodePcm16Le(std::span<const uint8_t> in, std::span<int16_t> out) {
  const size_t n = in.size() / 2;
  for (size_t i = 0; i < n; ++i) {
    out[i] = static_cast<int16_t>(static_cast<uint16_t>(in[2 * i]) |
                                  static_cast<uint16_t>(in[2 * i + 1] << 8));
  }
}

void Encode(Codec codec, std::span<const int16_t> in, std::span<uint8_t> out) {
  switch (codec) {
    case Codec::kPcm16: EncodePcm16Le(in, out); return;
    case Codec::kMulaw: EncodeMulaw(in, out); return;
    case Codec::kAlaw: EncodeAlaw(in, out); return;
  }
}

void Decode(Codec codec, std::span<const uint8_t> in, std::span<int16_t> out) {
  switch (codec) {
    case Codec::kPcm16: DecodePcm16Le(in, out); return;
    case Codec::kMulaw: DecodeMulaw(in, out); return;
    case Codec::kAlaw: DecodeAlaw(in, out); return;
  }
}

}  // namespace hotline::audio
