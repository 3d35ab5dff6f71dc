// Portable kernels: the reference every other path is tested against, and the fallback on CPUs
// without AVX2. Integer dot products per block, then one float multiply-add per block, the same
// arithmetic as the SIMD paths.
#include <cmath>
#include <cstring>

#include "engine/matmul_kernels.h"

namespace hotline::engine::matmul_internal {
namespace {

void QuantizeQ8(const float* x, ActQ8* out, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    const float d = amax / 127;
    const float id = d > 0 ? 1.0f / d : 0.0f;
    int sum = 0;
    for (int j = 0; j < 32; ++j) {
      float v = x[j] * id;
      v = std::isfinite(v) ? v : 0.0f;  // NaN/inf activations would be UB in the conversion
      const int q = static_cast<int>(std::lrintf(std::fmin(127.0f, std::fmax(-127.0f, v))));
      out[i].qs[j] = static_cast<int8_t>(q);
      sum += q;
    }
    for (int k = 0; k < 8; ++k) {
      out[i].neg8[k] = -8 * (out[i].qs[4 * k] + out[i].qs[4 * k + 1] + out[i].qs[4 * k + 2] +
                             out[i].qs[4 * k + 3]);
    }
    out[i].d = d;
    out[i].s = d * static_cast<float>(sum);
  }
}

void QuantizeQ8K(const float* x, BlockQ8_K* out, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQKK) {
    float amax = 0;
    for (int j = 0; j < 256; ++j) amax = std::fmax(amax, std::fabs(x[j]));
    const float d = amax / 127;
    const float id = d > 0 ? 1.0f / d : 0.0f;
    for (int j = 0; j < 256; ++j) {
      float v = x[j] * id;
      v = std::isfinite(v) ? v : 0.0f;
      out[i].qs[j] = static_cast<int8_t>(std::lrintf(std::fmin(127.0f, std::fmax(-127.0f, v))));
    }
    for (int k = 0; k < 16; ++k) {
      int s = 0;
      for (int j = 0; j < 16; ++j) s += out[i].qs[16 * k + j];
      out[i].bsums[k] = static_cast<int16_t>(s);
    }
    out[i].d = d;
  }
}

// ---- dot products of one weight row with one token ------------------------------------------

float DotF32(const uint8_t* w, const uint8_t* a, int64_t n) {
  const auto* wf = reinterpret_cast<const float*>(w);
  const auto* af = reinterpret_cast<const float*>(a);
  float s = 0;
  for (int64_t i = 0; i < n; ++i) s += wf[i] * af[i];
  return s;
}
float DotF16(const uint8_t* w, const uint8_t* a, int64_t n) {
  const auto* af = reinterpret_cast<const float*>(a);
  float s = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, w + 2 * i, 2);
    s += F16ToF32(h) * af[i];
  }
  return s;
}
float DotBF16(const uint8_t* w, const uint8_t* a, int64_t n) {
  const auto* af = reinterpret_cast<const float*>(a);
  float s = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, w + 2 * i, 2);
    s += BF16ToF32(h) * af[i];
  }
  return s;
}

float DotQ4_0(const uint8_t* w, const uint8_t* a, int64_t n) {
  const auto* b = reinterpret_cast<const BlockQ4_0*>(w);
  const auto* q = reinterpret_cast<const ActQ8*>(a);
  float s = 0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int sum = 0;
    for (int j = 0; j < 16; ++j) {
      sum += ((b[i].qs[j] & 0xF) - 8) * q[i].qs[j] + ((b[i].qs[j] >> 4) - 8) * q[i].qs[j + 16];
    }
    s += F16ToF32(b[i].d) * q[i].d * static_cast<float>(sum);
  }
  return s;
}
float DotQ4_1(const uint8_t* w, const uint8_t* a, int64_t n) {
  const auto* b = reinterpret_cast<const BlockQ4_1*>(w);
  const auto* q = reinterpret_cast<const ActQ8*>(a);
  float s = 0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int sum = 0;
    for (int j = 0; j < 16; ++j) {
      sum += (b[i].qs[j] & 0xF) * q[i].qs[j] + (b[i].qs[j] >> 4) * q[i].qs[j + 16];
    }
    s += F16ToF32(b[i].d) * q[i].d * static_cast<float>(sum) + F16ToF32(b[i].m) * q[i].s;
  }
  return s;
}
template <class Block>
int DotQ5Codes(const Block& b, const ActQ8& q, int offset) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);
  int sum = 0;
  for (int j = 0; j < 16; ++j) {
    const int lo = (b.qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1u) << 4);
    const int hi = (b.qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
    sum += (lo - offset) * q.qs[j] + (hi - offset) * q.qs[j + 16];
  }
  return sum;
}
float DotQ5_0(const uint8_t* w, const uint8_t* a, int64_t n) {
  const auto* b = reinterpret_cast<const BlockQ5_0*>(w);
  const auto* q = reinterpret_cast<const ActQ8*>(a);
  float s = 0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    s += F16ToF32(b[i].d) * q[i].d * static_cast<float>(DotQ5Codes(b[i], q[i], 16));
  }
  return s;
}
float DotQ5_1(const uint8_t* w, const uint8_t* a, int64_t n) {
  const auto* b = reinterpret_cast<const BlockQ5_1*>(w);
  const auto* q = reinterpret_cast<const ActQ8*>(a);
  float s = 0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    s += F16ToF32(b[i].d) * q[i].d * static_cast<float>(DotQ5Codes(b[i], q[i], 0)) +
         F16ToF32(b[i].m) * q[i].s;
  }
  return s;
}
float DotQ8_0(const uint8_t* w, const uint8_t* a, int64_t n) {
  const auto* b = reinterpret_cast<const BlockQ8_0*>(w);
  const auto* q = reinterpret_cast<const ActQ8*>(a);
  float s = 0;
  for (int64_t i = 0; i < n / kQK; ++i) {
    int sum = 0;
    for (int j = 0; j < 32; ++j) sum += b[i].qs[j] * q[i].qs[j];
    s += F16ToF32(b[i].d) * q[i].d * static_cast<float>(sum);
  }
  return s;
}

// Q4_K/Q5_K: value = d*sc*q - dmin*mn per 32-element sub-block, so
// dot = d*da * sum_j sc_j * (q . qa)_j  -  dmin*da * sum_j mn_j * sum(qa)_j.
template <bool kFive>
float DotQ45_K(const uint8_t* w, const uint8_t* a, int64_t n) {
  const auto* q = reinterpret_cast<const BlockQ8_K*>(a);
  const int64_t bytes = kFive ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K);
  float s = 0;
  for (int64_t i = 0; i < n / kQKK; ++i) {
    const uint8_t* blk = w + i * bytes;
    uint16_t dh, dminh;
    std::memcpy(&dh, blk, 2);
    std::memcpy(&dminh, blk + 2, 2);
    const uint8_t* scales = blk + 4;
    const uint8_t* qh = kFive ? blk + 16 : nullptr;
    const uint8_t* ql = kFive ? blk + 48 : blk + 16;
    int sum_q = 0, sum_m = 0;
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, mn;
      GetScaleMinK4(j, scales, &sc, &mn);
      const uint8_t* qs = ql + 32 * (j / 2);
      const int shift = (j % 2) * 4;
      int dot = 0;
      for (int l = 0; l < 32; ++l) {
        int code = (qs[l] >> shift) & 0xF;
        if (kFive) code |= ((qh[l] >> j) & 1) << 4;
        dot += code * q[i].qs[32 * j + l];
      }
      sum_q += sc * dot;
      sum_m += mn * (q[i].bsums[2 * j] + q[i].bsums[2 * j + 1]);
    }
    s += q[i].d * (F16ToF32(dh) * static_cast<float>(sum_q) -
                   F16ToF32(dminh) * static_cast<float>(sum_m));
  }
  return s;
}

float DotQ6_K(const uint8_t* w, const uint8_t* a, int64_t n) {
  const auto* b = reinterpret_cast<const BlockQ6_K*>(w);
  const auto* q = reinterpret_cast<const BlockQ8_K*>(a);
  float s = 0;
  for (int64_t i = 0; i < n / kQKK; ++i) {
    int sum = 0;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = b[i].ql + 64 * half;
      const uint8_t* qh = b[i].qh + 32 * half;
      const int8_t* sc = b[i].scales + 8 * half;
      const int8_t* qa = q[i].qs + 128 * half;
      int sub[8] = {};
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        sub[is] += (((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32) * qa[l];
        sub[is + 2] += (((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32) * qa[l + 32];
        sub[is + 4] += (((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32) * qa[l + 64];
        sub[is + 6] += (((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32) * qa[l + 96];
      }
      for (int k = 0; k < 8; ++k) sum += sc[k] * sub[k];
    }
    s += F16ToF32(b[i].d) * q[i].d * static_cast<float>(sum);
  }
  return s;
}

template <float (*kDot)(const uint8_t*, const uint8_t*, int64_t)>
void Tile(const uint8_t* w, int64_t w_stride, int nr, const uint8_t* act, int64_t act_stride,
          int nt, int64_t cols, float* y, int64_t y_stride) {
  for (int t = 0; t < nt; ++t) {
    for (int r = 0; r < nr; ++r) {
      y[t * y_stride + r] = kDot(w + r * w_stride, act + t * act_stride, cols);
    }
  }
}

void HalfToFloat(const uint16_t* h, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = F16ToF32(h[i]);
}

void DotRows(const float* q, const float* k, int c, int n, float scale, float* s) {
  for (int j = 0; j < c; ++j, k += n) {
    float p[8] = {};  // eight partial sums: vectorizable without reassociating one chain
    int i = 0;
    for (; i + 8 <= n; i += 8) {
      for (int l = 0; l < 8; ++l) p[l] += q[i + l] * k[i + l];
    }
    float sum = ((p[0] + p[4]) + (p[1] + p[5])) + ((p[2] + p[6]) + (p[3] + p[7]));
    for (; i < n; ++i) sum += q[i] * k[i];
    s[j] = sum * scale;
  }
}

void WeightedRowSum(const float* p, const float* v, int c, int n, float* acc) {
  for (int j = 0; j < c; ++j, v += n) {
    for (int d = 0; d < n; ++d) acc[d] += p[j] * v[d];
  }
}

float ExpShifted(float* s, int c, float m) {
  float sum = 0;
  for (int j = 0; j < c; ++j) {
    s[j] = std::exp(s[j] - m);
    sum += s[j];
  }
  return sum;
}

void SwiGlu(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

KernelTable MakeTable() {
  KernelTable k;
  k.exp_shifted = ExpShifted;
  k.swiglu = SwiGlu;
  k.half_to_float = HalfToFloat;
  k.dot_rows = DotRows;
  k.weighted_row_sum = WeightedRowSum;
  k.tile[static_cast<int>(GgmlType::F32)] = Tile<DotF32>;
  k.tile[static_cast<int>(GgmlType::F16)] = Tile<DotF16>;
  k.tile[static_cast<int>(GgmlType::BF16)] = Tile<DotBF16>;
  k.tile[static_cast<int>(GgmlType::Q4_0)] = Tile<DotQ4_0>;
  k.tile[static_cast<int>(GgmlType::Q4_1)] = Tile<DotQ4_1>;
  k.tile[static_cast<int>(GgmlType::Q5_0)] = Tile<DotQ5_0>;
  k.tile[static_cast<int>(GgmlType::Q5_1)] = Tile<DotQ5_1>;
  k.tile[static_cast<int>(GgmlType::Q8_0)] = Tile<DotQ8_0>;
  k.tile[static_cast<int>(GgmlType::Q4_K)] = Tile<DotQ45_K<false>>;
  k.tile[static_cast<int>(GgmlType::Q5_K)] = Tile<DotQ45_K<true>>;
  k.tile[static_cast<int>(GgmlType::Q6_K)] = Tile<DotQ6_K>;
  k.quantize_q8 = QuantizeQ8;
  k.quantize_q8k = QuantizeQ8K;
  return k;
}

}  // namespace

const KernelTable& ScalarKernels() {
  static const KernelTable table = MakeTable();
  return table;
}

}  // namespace hotline::engine::matmul_internal
