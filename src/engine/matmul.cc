#include "engine/matmul.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "engine/cpu_features.h"
#include "engine/matmul_kernels.h"

namespace hotline::engine {
namespace {

using matmul_internal::ActFormat;
using matmul_internal::ActFormatFor;
using matmul_internal::ActQ8;
using matmul_internal::ActRowBytes;
using matmul_internal::KernelTable;

std::atomic<int> g_active_isa{-1};  // -1: not chosen yet

const KernelTable* TableFor(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kScalar: return &matmul_internal::ScalarKernels();
    case KernelIsa::kAvx2: return matmul_internal::Avx2Kernels();
    case KernelIsa::kAvxVnni: return matmul_internal::AvxVnniKernels();
    case KernelIsa::kAvx512: return matmul_internal::Avx512Kernels();
  }
  return nullptr;
}

bool IsaAvailable(KernelIsa isa) {
  const CpuFeatures& f = GetCpuFeatures();
  if (TableFor(isa) == nullptr) return false;
  switch (isa) {
    case KernelIsa::kScalar: return true;
    case KernelIsa::kAvx2: return f.avx2 && f.fma && f.f16c;
    case KernelIsa::kAvxVnni: return f.avx2 && f.fma && f.f16c && f.avx_vnni;
    case KernelIsa::kAvx512: return f.avx2 && f.fma && f.f16c && f.avx512_vnni;
  }
  return false;
}

void FillNaN(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::numeric_limits<float>::quiet_NaN();
}

// Rows per work item handed to a thread: about kChunksPerThread items per thread, a multiple of
// kPackRows (so a chunk never splits a packed group) and at least kPackRows. Enough items that a
// thread preempted by another process does not hold up the call, few enough that handing them
// out (one shared atomic each) stays negligible even for the 151936-row output projection.
constexpr int64_t kChunksPerThread = 8;
int64_t RowGrain(int64_t rows, int threads) {
  const int64_t per = rows / (int64_t{threads} * kChunksPerThread);
  return std::max<int64_t>(kPackRows, (per + kPackRows - 1) / kPackRows * kPackRows);
}
// Tokens multiplied against one chunk of rows before moving on: the chunk's weights stay in
// L1/L2 while the tokens' activations stream past them.
constexpr int kTokenBlock = 64;

// Per-thread activation buffer, grown on demand (steady state: no allocation).
uint8_t* ActBuffer(size_t bytes) {
  thread_local std::vector<uint8_t> buffer;
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

}  // namespace

Status CheckWeightMatrix(const WeightMatrix& w) {
  const GgmlTypeInfo* info = GetTypeInfo(w.type);
  if (info == nullptr) {
    return InvalidArgumentError("unknown weight type id " +
                                std::to_string(static_cast<uint32_t>(w.type)));
  }
  if (!info->supported || matmul_internal::ScalarKernels().tile[static_cast<int>(w.type)] == nullptr) {
    return UnimplementedError(std::string("weights of type ") + info->name +
                              " are not supported (re-quantize the model to q4_0, q4_k, q5_0, "
                              "q6_k, q8_0, f16 or f32)");
  }
  if (w.rows <= 0 || w.cols <= 0) {
    return InvalidArgumentError("weight matrix must have rows > 0 and cols > 0, got " +
                                std::to_string(w.rows) + "x" + std::to_string(w.cols));
  }
  if (w.rows > std::numeric_limits<int32_t>::max()) {
    return InvalidArgumentError("weight matrix has too many rows: " + std::to_string(w.rows));
  }
  RETURN_IF_ERROR(RowBytes(w.type, w.cols).status());
  if (w.data == nullptr) return InvalidArgumentError("weight matrix has no data");
  return Status::Ok();
}

const char* KernelIsaName(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kScalar: return "scalar";
    case KernelIsa::kAvx2: return "avx2";
    case KernelIsa::kAvxVnni: return "avxvnni";
    case KernelIsa::kAvx512: return "avx512";
  }
  return "unknown";
}

KernelIsa BestKernelIsa() {
  if (IsaAvailable(KernelIsa::kAvx512)) return KernelIsa::kAvx512;
  if (IsaAvailable(KernelIsa::kAvxVnni)) return KernelIsa::kAvxVnni;
  if (IsaAvailable(KernelIsa::kAvx2)) return KernelIsa::kAvx2;
  return KernelIsa::kScalar;
}

Status SetKernelIsa(KernelIsa isa) {
  if (!IsaAvailable(isa)) {
    return FailedPreconditionError(std::string("kernel path '") + KernelIsaName(isa) +
                                   "' is not available on this CPU (best: " +
                                   KernelIsaName(BestKernelIsa()) + ")");
  }
  g_active_isa.store(static_cast<int>(isa), std::memory_order_relaxed);
  return Status::Ok();
}

KernelIsa ActiveKernelIsa() {
  int v = g_active_isa.load(std::memory_order_relaxed);
  if (v < 0) {
    v = static_cast<int>(BestKernelIsa());
    g_active_isa.store(v, std::memory_order_relaxed);
  }
  return static_cast<KernelIsa>(v);
}

Result<KernelIsa> ParseKernelIsa(const char* name) {
  const std::string s = name ? name : "";
  if (s == "auto") return BestKernelIsa();
  if (s == "scalar") return KernelIsa::kScalar;
  if (s == "avx2") return KernelIsa::kAvx2;
  if (s == "avxvnni") return KernelIsa::kAvxVnni;
  if (s == "avx512") return KernelIsa::kAvx512;
  return InvalidArgumentError("unknown kernel path '" + s +
                              "' (expected auto, scalar, avx2, avxvnni or avx512)");
}

void MatMul(const WeightMatrix& w, const float* x, int n_tokens, float* y, ComputePool& pool) {
  MatMulWithIsa(w, x, n_tokens, y, pool, ActiveKernelIsa());
}

void MatMulWithIsa(const WeightMatrix& w, const float* x, int n_tokens, float* y,
                   ComputePool& pool, KernelIsa isa) {
  if (n_tokens <= 0) return;
  const KernelTable* table = IsaAvailable(isa) ? TableFor(isa) : nullptr;
  if (table == nullptr || !CheckWeightMatrix(w).ok() ||
      table->tile[static_cast<int>(w.type)] == nullptr) {
    if (w.rows > 0) FillNaN(y, w.rows * n_tokens);
    return;
  }
  const matmul_internal::TileFn tile = table->tile[static_cast<int>(w.type)];
  const int64_t w_stride = RowBytes(w.type, w.cols).value();
  const ActFormat fmt = ActFormatFor(w.type);
  const int64_t act_stride = ActRowBytes(fmt, w.cols);

  // Quantize the activations once per call (each token's row independently).
  const uint8_t* act = reinterpret_cast<const uint8_t*>(x);
  if (fmt != ActFormat::kF32) {
    uint8_t* buf = ActBuffer(static_cast<size_t>(act_stride * n_tokens));
    auto quantize = [&](int64_t t0, int64_t t1, int) {
      for (int64_t t = t0; t < t1; ++t) {
        if (fmt == ActFormat::kQ8) {
          table->quantize_q8(x + t * w.cols, reinterpret_cast<ActQ8*>(buf + t * act_stride),
                             w.cols / kQK);
        } else {
          table->quantize_q8k(x + t * w.cols, reinterpret_cast<BlockQ8_K*>(buf + t * act_stride),
                              w.cols / kQKK);
        }
      }
    };
    if (n_tokens >= 8) {
      pool.ParallelFor(n_tokens, 1, quantize);
    } else {
      quantize(0, n_tokens, 0);
    }
    act = buf;
  }

  const auto* wbytes = static_cast<const uint8_t*>(w.data);
  const int64_t rows = w.rows;
  // Rows [0, packed_rows) come from the packed copy when this path reads it.
  const matmul_internal::PackedTileFn packed_tile =
      w.packed != nullptr ? table->packed_tile[static_cast<int>(w.type)] : nullptr;
  const int64_t packed_rows = packed_tile != nullptr ? rows / kPackRows * kPackRows : 0;
  const int64_t code_group_bytes = matmul_internal::PackedCodeBytes(w.type) * (w.cols / kQK);
  const int64_t scale_group_bytes = 32 * (w.cols / kQK);
  const uint8_t* scales_base =
      packed_rows > 0 ? w.packed + (packed_rows / kPackRows) * code_group_bytes : nullptr;
  pool.ParallelFor(rows, RowGrain(rows, pool.num_threads()), [&](int64_t r0, int64_t r1, int) {
    // r0 is a multiple of kPackRows (see RowGrain), so [r0, pr) is whole groups.
    const int64_t pr = std::min(r1, packed_rows);
    for (int t0 = 0; t0 < n_tokens; t0 += kTokenBlock) {
      const int nt = std::min(kTokenBlock, n_tokens - t0);
      int64_t r = r0;
      if (pr > r0) {
        const int64_t g0 = r0 / kPackRows;
        packed_tile(w.packed + g0 * code_group_bytes, scales_base + g0 * scale_group_bytes,
                    static_cast<int>((pr - r0) / kPackRows), act + t0 * act_stride, act_stride,
                    nt, w.cols, y + t0 * rows + r0, rows);
        r = pr;
      }
      if (r < r1) {
        tile(wbytes + r * w_stride, w_stride, static_cast<int>(r1 - r), act + t0 * act_stride,
             act_stride, nt, w.cols, y + t0 * rows + r, rows);
      }
    }
  });
}

void HalfRowToFloat(const uint16_t* h, float* out, int64_t n) {
  TableFor(ActiveKernelIsa())->half_to_float(h, out, n);
}

void AlignedBytesDeleter::operator()(uint8_t* p) const {
  ::operator delete[](p, std::align_val_t{64});
}

bool KernelIsaUsesPackedWeights(KernelIsa isa) {
  const KernelTable* table = TableFor(isa);
  if (table == nullptr) return false;
  for (matmul_internal::PackedTileFn f : table->packed_tile) {
    if (f != nullptr) return true;
  }
  return false;
}

int64_t PackedWeightBytes(const WeightMatrix& w) {
  const int64_t code_bytes = matmul_internal::PackedCodeBytes(w.type);
  if (code_bytes == 0 || w.rows < kPackRows || w.cols % kQK != 0) return 0;
  return (w.rows / kPackRows) * (w.cols / kQK) * (code_bytes + 2 * kPackRows);
}

Result<PackedBytes> PackWeights(const WeightMatrix& w) {
  const int64_t bytes = PackedWeightBytes(w);
  if (bytes == 0) return PackedBytes();
  RETURN_IF_ERROR(CheckWeightMatrix(w));
  auto* raw = static_cast<uint8_t*>(
      ::operator new[](static_cast<size_t>(bytes), std::align_val_t{64}, std::nothrow));
  if (raw == nullptr) {
    return ResourceExhaustedError("cannot allocate " + std::to_string(bytes) +
                                  " bytes for packed weights");
  }
  PackedBytes out(raw);
  const bool q8 = w.type == GgmlType::Q8_0;
  const int64_t code_bytes = matmul_internal::PackedCodeBytes(w.type);
  const int64_t block_bytes = q8 ? 34 : 18;  // f16 scale + codes, per the GGUF layouts
  const int64_t nb = w.cols / kQK;
  const int64_t groups = w.rows / kPackRows;
  const int64_t row_bytes = nb * block_bytes;
  const auto* src = static_cast<const uint8_t*>(w.data);
  uint8_t* scales = raw + groups * nb * code_bytes;
  for (int64_t g = 0; g < groups; ++g) {
    for (int64_t b = 0; b < nb; ++b) {
      uint8_t* codes = raw + (g * nb + b) * code_bytes;
      uint8_t* sc = scales + (g * nb + b) * 2 * kPackRows;
      for (int r = 0; r < kPackRows; ++r) {
        const uint8_t* block = src + (g * kPackRows + r) * row_bytes + b * block_bytes;
        std::memcpy(sc + 2 * r, block, 2);
        for (int64_t k = 0; k < code_bytes / 64; ++k) {
          uint8_t* dst = codes + 64 * k + 4 * r;
          for (int j = 0; j < 4; ++j) {
            const uint8_t q = block[2 + 4 * k + j];
            dst[j] = q8 ? static_cast<uint8_t>(q ^ 0x80u) : q;  // int8 q -> q + 128
          }
        }
      }
    }
  }
  return out;
}

}  // namespace hotline::engine
