// The codecs Hotline puts on the wire and in files, behind one API: PCM16 little-endian and the
// two G.711 laws (g711.h holds the per-sample tables).
//
//   std::vector<uint8_t> bytes(EncodedBytes(codec, pcm.size()));
//   Encode(codec, pcm, bytes);
//   std::vector<int16_t> back(DecodedSamples(codec, bytes.size()));
//   Decode(codec, bytes, back);
//
// PCM16 is signed 16-bit little-endian whatever the host's byte order (WAV, Asterisk AudioSocket
// "slin", the softphone); μ-law and A-law are one byte per sample.
//
// Thread-safety: all functions are pure; call from any thread. No allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "common/status.h"

namespace hotline::audio {

// Codecs Hotline writes (to files and to the wire).
enum class Codec : uint8_t { kPcm16, kMulaw, kAlaw };

// "pcm16", "mulaw", "alaw".
std::string_view CodecName(Codec codec);
// Parses "pcm16" | "mulaw" | "alaw" (also "ulaw", "pcmu", "pcma", "slin", "s16le"); the error
// lists the choices.
Result<Codec> ParseCodec(std::string_view name);

// Bytes per sample: 2 for PCM16, 1 for the G.711 laws.
constexpr size_t BytesPerSample(Codec codec) { return codec == Codec::kPcm16 ? 2 : 1; }
// Bytes that `samples` samples encode to, and whole samples in `bytes` bytes (a trailing odd
// PCM16 byte is not a sample).
constexpr size_t EncodedBytes(Codec codec, size_t samples) {
  return samples * BytesPerSample(codec);
}
constexpr size_t DecodedSamples(Codec codec, size_t bytes) { return bytes / BytesPerSample(codec); }

// REQUIRES: out.size() >= EncodedBytes(codec, in.size()); exactly that many bytes are written.
void Encode(Codec codec, std::span<const int16_t> in, std::span<uint8_t> out);
// REQUIRES: out.size() >= DecodedSamples(codec, in.size()); exactly that many samples are
// written (a trailing odd PCM16 byte is ignored).
void Decode(Codec codec, std::span<const uint8_t> in, std::span<int16_t> out);

// PCM16 little-endian alone, with the same contracts as Encode/Decode.
void EncodePcm16Le(std::span<const int16_t> in, std::span<uint8_t> out);
void DecodePcm16Le(std::span<const uint8_t> in, std::span<int16_t> out);

}  // namespace hotline::audio
