// Internal interface between the MatMul driver (matmul.cc) and the per-ISA kernel files
// (matmul_scalar.cc, matmul_x86_impl.h compiled into matmul_avx2.cc / matmul_avxvnni.cc /
// matmul_avx512.cc, and the packed kernels of matmul_avx512.cc).
// Not for use outside src/engine/matmul*.
#pragma once

#include <cstdint>

#include "engine/ggml_types.h"
#include "engine/quant_blocks.h"

namespace hotline::engine::matmul_internal {

// Activation block for the legacy weight formats (blocks of 32).
struct ActQ8 {
  float d;          // scale: x ~= d * qs
  float s;          // d * sum(qs), for formats with a per-block minimum (Q4_1, Q5_1)
  int8_t qs[32];
  int32_t neg8[8];  // -8 * (sum of qs[4k .. 4k+3]): seeds VPDPBUSD so unsigned nibble codes
                    // come out as signed (q - 8); Q5_0 uses twice this.
};
static_assert(sizeof(ActQ8) == 72);

// Activations of the K-quants: BlockQ8_K (d float, qs[256], bsums of 16).

enum class ActFormat { kF32, kQ8, kQ8K };
inline ActFormat ActFormatFor(GgmlType t) {
  switch (t) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
      return ActFormat::kF32;
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K:
      return ActFormat::kQ8K;
    default:
      return ActFormat::kQ8;
  }
}
// Bytes of one token's activations in `f` for `cols` columns.
inline int64_t ActRowBytes(ActFormat f, int64_t cols) {
  switch (f) {
    case ActFormat::kF32: return cols * 4;
    case ActFormat::kQ8: return cols / kQK * static_cast<int64_t>(sizeof(ActQ8));
    case ActFormat::kQ8K: return cols / kQKK * static_cast<int64_t>(sizeof(BlockQ8_K));
  }
  return 0;
}

// Computes y[t * y_stride + r] = dot(weight row r, activations of token t) for r < nr, t < nt.
// Weight row r starts at w + r * w_stride; token t's activations at act + t * act_stride.
using TileFn = void (*)(const uint8_t* w, int64_t w_stride, int nr, const uint8_t* act,
                        int64_t act_stride, int nt, int64_t cols, float* y, int64_t y_stride);

// Packed layout (PackWeights, Q4_0 and Q8_0 only). Rows are grouped kPackRows = 16 at a time;
// with nb = cols / 32 blocks per row, group g of a matrix is:
//   codes:  at codes_base + g * nb * CodeBytes, for each block b (CodeBytes each), for each
//           k in [0, CodeBytes / 64), for each row r of the group: 4 bytes = bytes 4k..4k+3 of
//           row r's block b quantities (Q4_0: its 16 nibble bytes; Q8_0: its 32 codes + 128,
//           i.e. stored unsigned so that VPDPBUSD multiplies them directly);
//   scales: at scales_base + g * nb * 32, for each block b, the 16 rows' f16 scales.
// codes_base is the start of the packed buffer and scales_base follows all groups' codes, so
// every 64-byte code load is aligned. CodeBytes = 256 (Q4_0) or 512 (Q8_0).
inline int64_t PackedCodeBytes(GgmlType t) {
  return t == GgmlType::Q4_0 ? 256 : t == GgmlType::Q8_0 ? 512 : 0;
}

// Computes y[t * y_stride + 16 g + r] for the n_groups packed groups starting at codes/scales
// (already offset to the first group), r < 16, t < nt.
using PackedTileFn = void (*)(const uint8_t* codes, const uint8_t* scales, int n_groups,
                              const uint8_t* act, int64_t act_stride, int nt, int64_t cols,
                              float* y, int64_t y_stride);

struct KernelTable {
  TileFn tile[31] = {};  // indexed by GGUF type id; nullptr = not handled by this path
  PackedTileFn packed_tile[31] = {};  // nullptr = this path does not read packed weights
  void (*quantize_q8)(const float* x, ActQ8* out, int64_t n_blocks) = nullptr;
  void (*quantize_q8k)(const float* x, BlockQ8_K* out, int64_t n_blocks) = nullptr;
  void (*half_to_float)(const uint16_t* h, float* out, int64_t n) = nullptr;
  void (*dot_rows)(const float* q, const float* k, int c, int n, float scale, float* s) = nullptr;
  void (*weighted_row_sum)(const float* p, const float* v, int c, int n, float* acc) = nullptr;
  float (*exp_shifted)(float* s, int c, float m) = nullptr;
  void (*swiglu)(float* gate, const float* up, int64_t n) = nullptr;
};

const KernelTable& ScalarKernels();
// nullptr when this build has no such path (non-x86 targets).
const KernelTable* Avx2Kernels();
const KernelTable* AvxVnniKernels();
const KernelTable* Avx512Kernels();

}  // namespace hotline::engine::matmul_internal
