#include "audio/g711.h"

namespace hotline::audio {
namespace {

// μ-law compression as in G.191's ulaw_compress: work on the 14-bit magnitude (one's complement
// for negative samples, so -1 maps next to +0), add the bias of 33, find the segment, keep four
// mantissa bits, invert.
constexpr uint8_t MulawEncode(int16_t x) {
  int32_t absno = x < 0 ? ((~static_cast<int32_t>(x)) >> 2) : (static_cast<int32_t>(x) >> 2);
  absno += 33;
  if (absno > 0x1FFF) absno = 0x1FFF;
  int32_t i = absno >> 6;
  int32_t segno = 1;
  while (i != 0) {
    ++segno;
    i >>= 1;
  }
  const int32_t high_nibble = 0x0008 - segno;
  const int32_t low_nibble = 0x000F - ((absno >> segno) & 0x000F);
  int32_t out = (high_nibble << 4) | low_nibble;
  if (x >= 0) out |= 0x0080;
  return static_cast<uint8_t>(out);
}

// μ-law expansion as in G.191's ulaw_expand: segment midpoint minus the bias, in 16-bit units.
constexpr int16_t MulawDecode(uint8_t code) {
  const int32_t sign = code < 0x80 ? -1 : 1;
  const int32_t inverted = (~static_cast<int32_t>(code)) & 0xFF;
  const int32_t exponent = (inverted >> 4) & 0x07;
  const int32_t mantissa = inverted & 0x0F;
  const int32_t step = 4 << (exponent + 1);
  const int32_t magnitude = (0x0080 << exponent) + step * mantissa + step / 2 - 4 * 33;
  return static_cast<int16_t>(sign * magnitude);
}

// A-law compression as in G.191's alaw_compress: 12-bit magnitude (one's complement for negative
// samples), segment search, then the even-bit inversion.
constexpr uint8_t AlawEncode(int16_t x) {
  int32_t ix = x < 0 ? ((~static_cast<int32_t>(x)) >> 4) : (static_cast<int32_t>(x) >> 4);
  if (ix > 15) {
    int32_t iexp = 1;
    while (ix > 16 + 15) {
      ix >>= 1;
      ++iexp;
    }
    ix -= 16;
    ix += iexp << 4;
  }
  if (x >= 0) ix |= 0x0080;
  return static_cast<uint8_t>(ix ^ 0x0055);
}

// A-law expansion as in G.191's alaw_expand.
constexpr int16_t AlawDecode(uint8_t code) {
  const int32_t ix = (code ^ 0x0055) & 0x007F;
  const int32_t iexp = ix >> 4;
  int32_t mant = ix & 0x000F;
  if (iexp > 0) mant += 16;
  mant = (mant << 4) + 0x0008;
  if (iexp > 1) mant <<= (iexp - 1);
  return static_cast<int16_t>(code > 127 ? mant : -mant);
}

template <typename T, T (*F)(int16_t)>
constexpr std::array<T, 65536> MakeEncodeTable() {
  std::array<T, 65536> t{};
  for (int32_t i = 0; i < 65536; ++i) t[static_cast<size_t>(i)] = F(static_cast<int16_t>(static_cast<uint16_t>(i)));
  return t;
}

template <int16_t (*F)(uint8_t)>
constexpr std::array<int16_t, 256> MakeDecodeTable() {
  std::array<int16_t, 256> t{};
  for (int i = 0; i < 256; ++i) t[static_cast<size_t>(i)] = F(static_cast<uint8_t>(i));
  return t;
}

}  // namespace

namespace g711_internal {
constexpr std::array<uint8_t, 65536> kLinearToMulaw = MakeEncodeTable<uint8_t, MulawEncode>();
constexpr std::array<uint8_t, 65536> kLinearToAlaw = MakeEncodeTable<uint8_t, AlawEncode>();
constexpr std::array<int16_t, 256> kMulawToLinear = MakeDecodeTable<MulawDecode>();
constexpr std::array<int16_t, 256> kAlawToLinear = MakeDecodeTable<AlawDecode>();
}  // namespace g711_internal

// Known code points, checked at compile time so a broken table cannot build.
static_assert(MulawEncode(0) == 0xFF && MulawEncode(-1) == 0x7F);
static_assert(MulawDecode(0x80) == 32124 && MulawDecode(0x00) == -32124 && MulawDecode(0xFF) == 0);
static_assert(AlawEncode(0) == 0xD5 && AlawEncode(-1) == 0x55);
static_assert(AlawDecode(0xAA) == 32256 && AlawDecode(0x2A) == -32256 && AlawDecode(0xD5) == 8);

void EncodeMulaw(std::span<const int16_t> in, std::span<uint8_t> out) {
  const uint8_t* table = g711_internal::kLinearToMulaw.data();
  for (size_t i = 0; i < in.size(); ++i) out[i] = table[static_cast<uint16_t>(in[i])];
}
void DecodeMulaw(std::span<const uint8_t> in, std::span<int16_t> out) {
  const int16_t* table = g711_internal::kMulawToLinear.data();
  for (size_t i = 0; i < in.size(); ++i) out[i] = table[in[i]];
}
void EncodeAlaw(std::span<const int16_t> in, std::span<uint8_t> out) {
  const uint8_t* table = g711_internal::kLinearToAlaw.data();
  for (size_t i = 0; i < in.size(); ++i) out[i] = table[static_cast<uint16_t>(in[i])];
}
void DecodeAlaw(std::span<const uint8_t> in, std::span<int16_t> out) {
  const int16_t* table = g711_internal::kAlawToLinear.data();
  for (size_t i = 0; i < in.size(); ++i) out[i] = table[in[i]];
}

uint8_t LinearToMulawReference(int16_t sample) { return MulawEncode(sample); }
int16_t MulawToLinearReference(uint8_t code) { return MulawDecode(code); }
uint8_t LinearToAlawReference(int16_t sample) { return AlawEncode(sample); }
int16_t AlawToLinearReference(uint8_t code) { return AlawDecode(code); }

}  // namespace hotline::audio
