// ITU-T G.711 μ-law and A-law: the codecs telephone networks speak (Twilio, SIP PCMU/PCMA).
//
// Bit-exact with ITU-T G.711 as given by the reference implementation of ITU-T G.191 (STL
// g711.c): μ-law compresses the top 14 bits of a 16-bit sample, A-law the top 13 bits, and
// expansion returns the segment midpoint scaled back to 16 bits (μ-law ±32124, A-law ±32256 at
// full scale). A-law code words carry the even-bit inversion (XOR 0x55); μ-law code words are
// inverted (0xFF is +0).
//
// The per-sample functions are table look-ups (a 64 Ki-entry encode table and a 256-entry decode
// table per law, built at compile time); the span functions loop over them. The *Reference
// functions compute the same values the long way and exist for tests.
//
// Thread-safety: all functions are pure; call from any thread. No allocation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace hotline::audio {

namespace g711_internal {
extern const std::array<uint8_t, 65536> kLinearToMulaw;  // index: uint16_t(sample)
extern const std::array<uint8_t, 65536> kLinearToAlaw;
extern const std::array<int16_t, 256> kMulawToLinear;
extern const std::array<int16_t, 256> kAlawToLinear;
}  // namespace g711_internal

inline uint8_t LinearToMulaw(int16_t sample) {
  return g711_internal::kLinearToMulaw[static_cast<uint16_t>(sample)];
}
inline int16_t MulawToLinear(uint8_t code) { return g711_internal::kMulawToLinear[code]; }
inline uint8_t LinearToAlaw(int16_t sample) {
  return g711_internal::kLinearToAlaw[static_cast<uint16_t>(sample)];
}
inline int16_t AlawToLinear(uint8_t code) { return g711_internal::kAlawToLinear[code]; }

// Span versions. REQUIRES: out.size() >= in.size(); exactly in.size() values are written.
void EncodeMulaw(std::span<const int16_t> in, std::span<uint8_t> out);
void DecodeMulaw(std::span<const uint8_t> in, std::span<int16_t> out);
void EncodeAlaw(std::span<const int16_t> in, std::span<uint8_t> out);
void DecodeAlaw(std::span<const uint8_t> in, std::span<int16_t> out);

// Straightforward arithmetic versions of the G.191 algorithms (no tables). Same results as the
// table versions; used to build the tables and to test them.
uint8_t LinearToMulawReference(int16_t sample);
int16_t MulawToLinearReference(uint8_t code);
uint8_t LinearToAlawReference(int16_t sample);
int16_t AlawToLinearReference(uint8_t code);

}  // namespace hotline::audio
