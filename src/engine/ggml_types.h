// GGML tensor element types as stored in GGUF files: ids, block geometry and half-precision
// conversions.
//
// Every GGML type packs elements in fixed-size blocks (1 element for F32/F16/BF16, 32 for the
// "legacy" quants Q4_0..Q8_1, 256 for the K-quants). A tensor row must hold a whole number of
// blocks; RowBytes() checks that. Ids and layouts follow the public GGUF/ggml specification so
// files interoperate with other GGUF tools.
//
// Thread-safety: everything here is a pure function or reads constant tables.
#pragma once

#include <cstdint>
#include <cstring>

#include "common/status.h"

namespace hotline::engine {

// GGUF type ids (the numbers are on-disk values; never renumber).
enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  BF16 = 30,
};

struct GgmlTypeInfo {
  const char* name;     // "q4_0", as ggml spells it
  int64_t block_elems;  // elements per block
  int64_t block_bytes;  // bytes per block
  // True when DequantizeRow and MatMul handle this type (weights of this type can be loaded).
  // Known-but-unsupported types (Q2_K, Q3_K, Q8_1, Q8_K as weights) have a name and geometry so
  // that files holding them can be listed and refused with a clear message.
  bool supported;
};

// nullptr for ids that are not a known GGML type.
const GgmlTypeInfo* GetTypeInfo(uint32_t raw_type);
inline const GgmlTypeInfo* GetTypeInfo(GgmlType t) { return GetTypeInfo(static_cast<uint32_t>(t)); }

// Name for messages ("q4_0"); "unknown(<id>)" style text is the caller's job for unknown ids.
const char* TypeName(GgmlType t);

// Parses "f32", "f16", "bf16", "q4_0", "q4_k", ... (case-insensitive).
Result<GgmlType> ParseTypeName(const char* name);

// Bytes of one row of `n_elems` elements. Errors: unknown type, n_elems < 0, n_elems not a
// multiple of the block size, or a size that would overflow int64.
Result<int64_t> RowBytes(GgmlType t, int64_t n_elems);

// Block sizes used by the quantized formats.
inline constexpr int64_t kQK = 32;    // legacy quants (Q4_0 .. Q8_1)
inline constexpr int64_t kQKK = 256;  // K-quants (super-blocks)

// IEEE 754 binary16 <-> binary32, round-to-nearest-even, with infinities, NaNs and subnormals.
float F16ToF32(uint16_t h);
uint16_t F32ToF16(float f);

// bfloat16 <-> float. BF16 is the top half of a float; rounding is to nearest even, NaNs stay
// NaN (quiet).
inline float BF16ToF32(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint16_t F32ToBF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

}  // namespace hotline::engine
