// Byte layouts of the GGML quantized blocks (public GGUF/ggml specification). All fields are
// little-endian; `d`/`m`/`dmin` are IEEE half floats stored as uint16_t. The structs have no
// padding (checked below), so a tensor's bytes can be read as an array of them.
//
// Dequantized value of element j of a block:
//   Q4_0: d * (nibble_j - 8)                       nibbles: qs[i] low = elem i, high = elem i+16
//   Q4_1: d * nibble_j + m
//   Q5_0: d * ((nibble_j | bit_j << 4) - 16)       bit_j = bit j of qh (as uint32 LE)
//   Q5_1: d * (nibble_j | bit_j << 4) + m
//   Q8_0: d * qs[j]
//   Q4_K/Q5_K: 8 sub-blocks of 32 with 6-bit scale sc and min mn (packed in `scales`):
//              d * sc * q - dmin * mn
//   Q6_K: 16 sub-blocks of 16 with int8 scales: d * scales[s] * (q - 32), q 6 bits
//   Q8_K: d * qs[j]; bsums[k] = sum of qs[16k .. 16k+15] (activations only)
#pragma once

#include <cstdint>

namespace hotline::engine {

struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[16];
};
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qs[16];
};
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ5_1 {
  uint16_t d;
  uint16_t m;
  uint8_t qh[4];
  uint8_t qs[16];
};
struct BlockQ8_0 {
  uint16_t d;
  int8_t qs[32];
};
struct BlockQ4_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qs[128];
};
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];
  uint8_t qh[32];
  uint8_t qs[128];
};
struct BlockQ6_K {
  uint8_t ql[128];
  uint8_t qh[64];
  int8_t scales[16];
  uint16_t d;
};
struct BlockQ8_K {
  float d;
  int8_t qs[256];
  int16_t bsums[16];
};

static_assert(sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22);
static_assert(sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ4_K) == 144);
static_assert(sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ8_K) == 292);

// Unpacks the 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K block.
inline void GetScaleMinK4(int j, const uint8_t* q, uint8_t* sc, uint8_t* mn) {
  if (j < 4) {
    *sc = q[j] & 63;
    *mn = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *mn = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

}  // namespace hotline::engine
