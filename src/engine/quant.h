// Row conversions between float and the GGML weight formats (see quant_blocks.h for layouts).
//
// DequantizeRow is what the loader and the float reference paths use; QuantizeRow is what the
// quantizer (`hotline engine quantize`), the random-model generator and the tests use. Both are
// portable scalar code: correctness first, the hot path is MatMul (matmul.h), which never
// dequantizes whole rows.
//
// Thread-safety: pure functions; call from any thread. No allocation.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "engine/ggml_types.h"

namespace hotline::engine {

// Writes `n` floats to `dst` from one row of type `t` at `src`.
// REQUIRES: GetTypeInfo(t)->supported and n % block_elems == 0 (the GGUF loader validates both
// for every tensor; RowBytes() gives the row's byte size). If violated, `dst` is filled with NaN
// so the bug shows up in the output rather than as a crash.
void DequantizeRow(GgmlType t, const void* src, float* dst, int64_t n);

// Encodes `n` floats as one row of type `t` (RowBytes(t, n) bytes at `dst`).
// Supported targets: F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K.
// Errors: unsupported target type, or n not a multiple of the block size. Non-finite inputs are
// encoded as 0 in the quantized formats (a NaN scale would poison the whole block).
Status QuantizeRow(GgmlType t, const float* src, void* dst, int64_t n);

// True when QuantizeRow can produce type `t`.
bool CanQuantizeTo(GgmlType t);

}  // namespace hotline::engine
