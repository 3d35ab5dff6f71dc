#include "engine/ggml_types.h"

#include <cctype>
#include <limits>
#include <string>

namespace hotline::engine {
namespace {

struct Entry {
  uint32_t id;
  GgmlTypeInfo info;
};

// Geometry per the ggml block structs (see quant_blocks.h for the byte layouts).
constexpr Entry kTypes[] = {
    {0, {"f32", 1, 4, true}},
    {1, {"f16", 1, 2, true}},
    {2, {"q4_0", kQK, 18, true}},
    {3, {"q4_1", kQK, 20, true}},
    {6, {"q5_0", kQK, 22, true}},
    {7, {"q5_1", kQK, 24, true}},
    {8, {"q8_0", kQK, 34, true}},
    {9, {"q8_1", kQK, 36, false}},
    {10, {"q2_k", kQKK, 84, false}},
    {11, {"q3_k", kQKK, 110, false}},
    {12, {"q4_k", kQKK, 144, true}},
    {13, {"q5_k", kQKK, 176, true}},
    {14, {"q6_k", kQKK, 210, true}},
    {15, {"q8_k", kQKK, 292, false}},
    {30, {"bf16", 1, 2, true}},
};

}  // namespace

const GgmlTypeInfo* GetTypeInfo(uint32_t raw_type) {
  for (const Entry& e : kTypes) {
    if (e.id == raw_type) return &e.info;
  }
  return nullptr;
}

const char* TypeName(GgmlType t) {
  const GgmlTypeInfo* info = GetTypeInfo(t);
  return info ? info->name : "unknown";
}

Result<GgmlType> ParseTypeName(const char* name) {
  std::string lower;
  for (const char* p = name; p && *p; ++p) {
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(*p))));
  }
  for (const Entry& e : kTypes) {
    if (lower == e.info.name) return static_cast<GgmlType>(e.id);
  }
  return InvalidArgumentError("unknown tensor type '" + std::string(name ? name : "") +
                              "' (expected f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q4_k, "
                              "q5_k or q6_k)");
}

Result<int64_t> RowBytes(GgmlType t, int64_t n_elems) {
  const GgmlTypeInfo* info = GetTypeInfo(t);
  if (info == nullptr) {
    return InvalidArgumentError("unknown GGML type id " +
                                std::to_string(static_cast<uint32_t>(t)));
  }
  if (n_elems < 0) {
    return InvalidArgumentError("negative element count " + std::to_string(n_elems));
  }
  if (n_elems % info->block_elems != 0) {
    return InvalidArgumentError("a row of " + std::to_string(n_elems) + " elements is not a " +
                                "whole number of " + info->name + " blocks of " +
                                std::to_string(info->block_elems));
  }
  const int64_t blocks = n_elems / info->block_elems;
  if (blocks > std::numeric_limits<int64_t>::max() / info->block_bytes) {
    return InvalidArgumentError("row of " + std::to_string(n_elems) + " elements is too large");
  }
  return blocks * info->block_bytes;
}

float F16ToF32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf / NaN (payload kept)
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {
    // Subnormal: normalize.
    int shift = 0;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      ++shift;
    }
    mant &= 0x3ffu;
    bits = sign | (static_cast<uint32_t>(113 - shift) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t F32ToF16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return sign | 0x7e00u;  // NaN
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // rounds to >= 65520: infinity
  if (abs >= 0x38800000u) {
    // Normal half: rebias exponent, round mantissa to nearest even.
    uint32_t v = abs - (112u << 23);
    v += 0x0fffu + ((v >> 13) & 1u);
    return sign | static_cast<uint16_t>(v >> 13);
  }
  if (abs < 0x33000000u) return sign;  // below half the smallest subnormal: zero
  // Subnormal half.
  const uint32_t e = abs >> 23;
  const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - e;  // 14 + (113 - e) - 1 ... yields a 10-bit field
  const uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  uint32_t r = q;
  if (rem > half || (rem == half && (q & 1u))) ++r;
  return sign | static_cast<uint16_t>(r);
}

}  // namespace hotline::engine
