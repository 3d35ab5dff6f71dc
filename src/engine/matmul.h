// MatMul: the engine's weight x activation products, the hot path of every forward pass.
//
// Weights stay in their GGUF format (mmap'ed, never dequantized as a whole). For quantized
// weight types the activations are quantized per block to 8 bits first (a Q8_0-like block of 32
// for Q4_0/Q4_1/Q5_0/Q5_1/Q8_0 weights, a Q8_K-like block of 256 for the K-quants) and the
// kernels compute integer dot products; F32/F16/BF16 weights multiply float activations.
//
// Code paths: a portable scalar path (any CPU, the reference), AVX2+FMA+F16C, AVX2 with
// AVX-VNNI, and AVX-512 (F/BW/VL/VNNI); the best one the CPU supports is chosen at run time (see
// SetKernelIsa). Tests hold every path equal to the scalar one within float-rounding tolerance.
//
// Packed weights: the AVX-512 path multiplies Q4_0 and Q8_0 matrices fastest from a copy whose
// rows are interleaved 16 at a time (PackWeights), so that one 512-bit VPDPBUSD advances sixteen
// rows at once and every row's block scale arrives in one load. The model packs its matrices at
// load when that path is active; MatMul uses `WeightMatrix::packed` when the active path reads
// that layout and the plain rows otherwise (and always for the last rows % 16).
//
// Threading: the rows of W are split over the ComputePool's threads (dynamic chunks). For
// n_tokens > 1 each chunk of rows is kept in cache while every token is multiplied against it,
// so each weight row is streamed from memory once per call, not once per token.
//
// Thread-safety: MatMul may be called from one thread per ComputePool at a time (the pool is the
// unit of concurrency). It allocates only when a call needs a larger activation buffer than any
// earlier call on the same thread (steady state: no allocation).
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "common/status.h"
#include "engine/compute_pool.h"
#include "engine/ggml_types.h"

namespace hotline::engine {

// A weight matrix in ggml layout: `rows` rows of `cols` elements each (GGUF ne[0] = cols,
// ne[1] = rows), row-major, each row RowBytes(type, cols) bytes, rows contiguous. Not owned.
struct WeightMatrix {
  GgmlType type;
  const void* data;
  int64_t rows;
  int64_t cols;
  // Optional PackWeights() copy of the same weights (not owned; nullptr = none). Kernels that
  // do not read the packed layout ignore it.
  const uint8_t* packed = nullptr;
};

// OK when MatMul can use `w`: supported type, cols a multiple of the block size, rows/cols > 0,
// data non-null. The model loader calls this once per tensor.
Status CheckWeightMatrix(const WeightMatrix& w);

// y[t * rows + r] = dot(W row r, x + t * cols) for t in [0, n_tokens).
// `x` holds n_tokens x cols floats, `y` n_tokens x rows floats; they must not overlap.
// REQUIRES: CheckWeightMatrix(w).ok(), n_tokens >= 0. (If violated, y is filled with NaN.)
// Blocking: returns when the product is complete; runs on every thread of `pool`.
void MatMul(const WeightMatrix& w, const float* x, int n_tokens, float* y, ComputePool& pool);

// ys[i] = W_i x for several matrices that read the same activations (a layer's Q/K/V, or its
// gate/up), as one parallel region: one fork/join and one activation quantization instead of
// one per matrix. Matrices with different column counts or activation formats are multiplied
// one after another. Same contract as MatMul per matrix; ws.size() == ys.size().
void MatMulMany(std::span<const WeightMatrix* const> ws, const float* x, int n_tokens,
                std::span<float* const> ys, ComputePool& pool);

// Instruction-set paths of the kernels.
enum class KernelIsa { kScalar = 0, kAvx2 = 1, kAvxVnni = 2, kAvx512 = 3 };
const char* KernelIsaName(KernelIsa isa);

// The best path this CPU supports.
KernelIsa BestKernelIsa();
// The path MatMul uses (default: BestKernelIsa()). Setting a path the CPU lacks is refused.
// Meant for start-up and benchmarks (thread-safe, but a call racing a MatMul may use either).
Status SetKernelIsa(KernelIsa isa);
KernelIsa ActiveKernelIsa();
// Parses "auto", "scalar", "avx2", "avxvnni", "avx512".
Result<KernelIsa> ParseKernelIsa(const char* name);

// MatMul on an explicit path (tests compare paths with this). REQUIRES: the CPU supports `isa`.
void MatMulWithIsa(const WeightMatrix& w, const float* x, int n_tokens, float* y,
                   ComputePool& pool, KernelIsa isa);
void MatMulManyWithIsa(std::span<const WeightMatrix* const> ws, const float* x, int n_tokens,
                       std::span<float* const> ys, ComputePool& pool, KernelIsa isa);

// out[i] = f16 value h[i] as float, for i < n, on the active path (F16C where the CPU has it).
// For the attention's reads of an F16 KV cache. Thread-safe; no allocation.
void HalfRowToFloat(const uint16_t* h, float* out, int64_t n);

// Attention's vector steps, on the active path. Rows of n floats, c rows:
//   DotRows:        s[j] = dot(q, k + j * n) * scale
//   WeightedRowSum: acc[d] += sum_j p[j] * v[j * n + d]
// Thread-safe; no allocation.
void DotRows(const float* q, const float* k, int c, int n, float scale, float* s);
void WeightedRowSum(const float* p, const float* v, int c, int n, float* acc);
//   ExpShifted:     s[j] = exp(s[j] - m) for j < c, returns their sum. REQUIRES: m >= s[j]
//                   (the softmax maximum); SIMD paths use a polynomial exp (~2 ulp).
float ExpShifted(float* s, int c, float m);

// gate[i] = silu(gate[i]) * up[i] (SwiGLU), silu(g) = g / (1 + exp(-g)); SIMD paths use the
// same polynomial exp as ExpShifted. Thread-safe; no allocation.
void SwiGlu(float* gate, const float* up, int64_t n);

// The four functions above on one path, resolved once: attention calls them hundreds of
// thousands of times per step and takes this table once per call instead of looking the
// active path up on every call.
struct VectorKernels {
  void (*half_to_float)(const uint16_t* h, float* out, int64_t n);
  void (*dot_rows)(const float* q, const float* k, int c, int n, float scale, float* s);
  void (*weighted_row_sum)(const float* p, const float* v, int c, int n, float* acc);
  float (*exp_shifted)(float* s, int c, float m);
};
VectorKernels ActiveVectorKernels();

// ---- packed weights ----------------------------------------------------------------------------

// Rows interleaved per packed group.
inline constexpr int kPackRows = 16;

struct AlignedBytesDeleter {
  void operator()(uint8_t* p) const;
};
// 64-byte aligned bytes owned by the caller of PackWeights.
using PackedBytes = std::unique_ptr<uint8_t[], AlignedBytesDeleter>;

// True when `isa` runs on this CPU and reads packed weights (then the model should pack its
// matrices at load).
bool KernelIsaUsesPackedWeights(KernelIsa isa);

// Bytes of the packed copy of `w`; 0 when its type has no packed layout (only Q4_0 and Q8_0
// have one) or it has fewer than kPackRows rows.
int64_t PackedWeightBytes(const WeightMatrix& w);

// A packed copy of the first rows / kPackRows * kPackRows rows of `w` (the rest stay in `w`),
// or nullptr when PackedWeightBytes(w) == 0. The caller sets w.packed = result.get() and keeps
// the result alive as long as w is used. REQUIRES: CheckWeightMatrix(w).ok().
// Errors: allocation failure. Allocates PackedWeightBytes(w) bytes; reads every byte of w.
Result<PackedBytes> PackWeights(const WeightMatrix& w);

}  // namespace hotline::engine
