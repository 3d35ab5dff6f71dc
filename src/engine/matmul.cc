#include "engine/matmul.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
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
  }
  return false;
}

void FillNaN(float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::numeric_limits<float>::quiet_NaN();
}

// Rows per work item handed to a thread. Small enough that two threads share even the smallest
// matrices evenly (and a preempted thread does not hold up the call), large enough that the
// per-chunk overhead stays negligible.
constexpr int64_t kRowGrain = 16;
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
  }
  return "unknown";
}

KernelIsa BestKernelIsa() {
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
  return InvalidArgumentError("unknown kernel path '" + s +
                              "' (expected auto, scalar, avx2 or avxvnni)");
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
  pool.ParallelFor(rows, kRowGrain, [&](int64_t r0, int64_t r1, int) {
    for (int t0 = 0; t0 < n_tokens; t0 += kTokenBlock) {
      const int nt = std::min(kTokenBlock, n_tokens - t0);
      tile(wbytes + r0 * w_stride, w_stride, static_cast<int>(r1 - r0), act + t0 * act_stride,
           act_stride, nt, w.cols, y + t0 * rows + r0, rows);
    }
  });
}

}  // namespace hotline::engine
