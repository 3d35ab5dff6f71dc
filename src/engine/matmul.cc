#include "engine/matmul.h"

#include <algorithm>
#include <array>
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

// The CPU is asked first: building a path's table runs code compiled for that path (its static
// initializer may use the path's own registers), so a table is only touched where it can run.
bool CpuRuns(KernelIsa isa) {
  const CpuFeatures& f = GetCpuFeatures();
  switch (isa) {
    case KernelIsa::kScalar: return true;
    case KernelIsa::kAvx2: return f.avx2 && f.fma && f.f16c;
    case KernelIsa::kAvxVnni: return f.avx2 && f.fma && f.f16c && f.avx_vnni;
    case KernelIsa::kAvx512: return f.avx2 && f.fma && f.f16c && f.avx512_vnni;
  }
  return false;
}

bool IsaAvailable(KernelIsa isa) { return CpuRuns(isa) && TableFor(isa) != nullptr; }

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
  const WeightMatrix* ws[] = {&w};
  float* ys[] = {y};
  MatMulManyWithIsa(ws, x, n_tokens, ys, pool, isa);
}

void MatMulMany(std::span<const WeightMatrix* const> ws, const float* x, int n_tokens,
                std::span<float* const> ys, ComputePool& pool) {
  MatMulManyWithIsa(ws, x, n_tokens, ys, pool, ActiveKernelIsa());
}

namespace {

// One matrix of a MatMulMany call, with everything its row chunks need.
struct RowJob {
  const WeightMatrix* w = nullptr;
  float* y = nullptr;
  matmul_internal::TileFn tile = nullptr;
  matmul_internal::PackedTileFn packed_tile = nullptr;  // nullptr: plain rows only
  int64_t w_stride = 0;
  int64_t packed_rows = 0;  // rows [0, packed_rows) come from w->packed
  int64_t code_group_bytes = 0;
  int64_t scale_group_bytes = 0;
  const uint8_t* scales_base = nullptr;
  int64_t first_item = 0;  // index of this matrix's first chunk among all chunks of the call
};

RowJob MakeRowJob(const WeightMatrix& w, float* y, const KernelTable& table) {
  RowJob j;
  j.w = &w;
  j.y = y;
  j.tile = table.tile[static_cast<int>(w.type)];
  j.w_stride = RowBytes(w.type, w.cols).value();
  j.packed_tile = w.packed != nullptr ? table.packed_tile[static_cast<int>(w.type)] : nullptr;
  if (j.packed_tile != nullptr) {
    j.packed_rows = w.rows / kPackRows * kPackRows;
    j.code_group_bytes = matmul_internal::PackedCodeBytes(w.type) * (w.cols / kQK);
    j.scale_group_bytes = 32 * (w.cols / kQK);
    j.scales_base = w.packed + (j.packed_rows / kPackRows) * j.code_group_bytes;
  }
  return j;
}

// Rows [r0, r1) of one matrix for every token. REQUIRES: r0 % kPackRows == 0.
void RunRows(const RowJob& j, int64_t r0, int64_t r1, const uint8_t* act, int64_t act_stride,
             int n_tokens) {
  const WeightMatrix& w = *j.w;
  const auto* wbytes = static_cast<const uint8_t*>(w.data);
  const int64_t pr = std::min(r1, j.packed_rows);  // [r0, pr) is whole packed groups
  for (int t0 = 0; t0 < n_tokens; t0 += kTokenBlock) {
    const int nt = std::min(kTokenBlock, n_tokens - t0);
    int64_t r = r0;
    if (pr > r0) {
      const int64_t g0 = r0 / kPackRows;
      j.packed_tile(w.packed + g0 * j.code_group_bytes, j.scales_base + g0 * j.scale_group_bytes,
                    static_cast<int>((pr - r0) / kPackRows), act + t0 * act_stride, act_stride, nt,
                    w.cols, j.y + t0 * w.rows + r0, w.rows);
      r = pr;
    }
    if (r < r1) {
      j.tile(wbytes + r * j.w_stride, j.w_stride, static_cast<int>(r1 - r), act + t0 * act_stride,
             act_stride, nt, w.cols, j.y + t0 * w.rows + r, w.rows);
    }
  }
}

// Matrices one parallel region serves at most (Q/K/V is the largest group the model forms).
constexpr size_t kMaxMany = 4;

}  // namespace

void MatMulManyWithIsa(std::span<const WeightMatrix* const> ws, const float* x, int n_tokens,
                       std::span<float* const> ys, ComputePool& pool, KernelIsa isa) {
  if (n_tokens <= 0 || ws.empty()) return;
  const KernelTable* table = IsaAvailable(isa) ? TableFor(isa) : nullptr;
  const size_t n = std::min(ws.size(), ys.size());
  // Matrices that cannot be multiplied get NaN; the rest form the call.
  std::array<RowJob, kMaxMany> jobs;
  size_t n_jobs = 0;
  bool shared = true;  // same columns and activation format: one quantization, one region
  for (size_t i = 0; i < n; ++i) {
    const WeightMatrix& w = *ws[i];
    if (table == nullptr || !CheckWeightMatrix(w).ok() ||
        table->tile[static_cast<int>(w.type)] == nullptr) {
      if (w.rows > 0) FillNaN(ys[i], w.rows * n_tokens);
      continue;
    }
    if (n_jobs > 0 &&
        (w.cols != jobs[0].w->cols || ActFormatFor(w.type) != ActFormatFor(jobs[0].w->type))) {
      shared = false;
    }
    if (n_jobs == kMaxMany) {
      shared = false;
      break;
    }
    jobs[n_jobs++] = MakeRowJob(w, ys[i], *table);
  }
  if (n_jobs == 0) return;
  if (!shared) {  // rare (mixed-format layers): one region per matrix
    for (size_t i = 0; i < n; ++i) {
      MatMulManyWithIsa(ws.subspan(i, 1), x, n_tokens, ys.subspan(i, 1), pool, isa);
    }
    return;
  }
  const int64_t cols = jobs[0].w->cols;
  const ActFormat fmt = ActFormatFor(jobs[0].w->type);
  const int64_t act_stride = ActRowBytes(fmt, cols);

  // Quantize the activations once per call (each token's row independently).
  const uint8_t* act = reinterpret_cast<const uint8_t*>(x);
  if (fmt != ActFormat::kF32) {
    uint8_t* buf = ActBuffer(static_cast<size_t>(act_stride * n_tokens));
    auto quantize = [&](int64_t t0, int64_t t1, int) {
      for (int64_t t = t0; t < t1; ++t) {
        if (fmt == ActFormat::kQ8) {
          table->quantize_q8(x + t * cols, reinterpret_cast<ActQ8*>(buf + t * act_stride),
                             cols / kQK);
        } else {
          table->quantize_q8k(x + t * cols, reinterpret_cast<BlockQ8_K*>(buf + t * act_stride),
                              cols / kQKK);
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

  // Chunks of `grain` rows, numbered across the matrices; each starts at a multiple of
  // kPackRows within its matrix.
  int64_t total_rows = 0;
  for (size_t i = 0; i < n_jobs; ++i) total_rows += jobs[i].w->rows;
  const int64_t grain = RowGrain(total_rows, pool.num_threads());
  int64_t items = 0;
  for (size_t i = 0; i < n_jobs; ++i) {
    jobs[i].first_item = items;
    items += (jobs[i].w->rows + grain - 1) / grain;
  }
  pool.ParallelFor(items, 1, [&](int64_t b, int64_t e, int) {
    for (int64_t item = b; item < e; ++item) {
      size_t m = n_jobs - 1;
      while (jobs[m].first_item > item) --m;
      const int64_t r0 = (item - jobs[m].first_item) * grain;
      RunRows(jobs[m], r0, std::min(jobs[m].w->rows, r0 + grain), act, act_stride, n_tokens);
    }
  });
}

void HalfRowToFloat(const uint16_t* h, float* out, int64_t n) {
  TableFor(ActiveKernelIsa())->half_to_float(h, out, n);
}

void DotRows(const float* q, const float* k, int c, int n, float scale, float* s) {
  TableFor(ActiveKernelIsa())->dot_rows(q, k, c, n, scale, s);
}

void WeightedRowSum(const float* p, const float* v, int c, int n, float* acc) {
  TableFor(ActiveKernelIsa())->weighted_row_sum(p, v, c, n, acc);
}

float ExpShifted(float* s, int c, float m) {
  return TableFor(ActiveKernelIsa())->exp_shifted(s, c, m);
}

void SwiGlu(float* gate, const float* up, int64_t n) {
  TableFor(ActiveKernelIsa())->swiglu(gate, up, n);
}

VectorKernels ActiveVectorKernels() {
  const KernelTable* t = TableFor(ActiveKernelIsa());
  return VectorKernels{t->half_to_float, t->dot_rows, t->weighted_row_sum, t->exp_shifted};
}

void AlignedBytesDeleter::operator()(uint8_t* p) const {
  ::operator delete[](p, std::align_val_t{64});
}

bool KernelIsaUsesPackedWeights(KernelIsa isa) {
  const KernelTable* table = IsaAvailable(isa) ? TableFor(isa) : nullptr;
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
