#include "engine/quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/quant_blocks.h"

namespace hotline::engine {
namespace {

inline float Finite(float x) { return std::isfinite(x) ? x : 0.0f; }
inline int NearestInt(float x) { return static_cast<int>(std::lrintf(x)); }

// ---------------------------------------------------------------------------------------------
// Dequantization.

void DequantQ4_0(const BlockQ4_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = F16ToF32(b[i].d);
    for (int j = 0; j < 16; ++j) {
      y[j] = static_cast<float>((b[i].qs[j] & 0xF) - 8) * d;
      y[j + 16] = static_cast<float>((b[i].qs[j] >> 4) - 8) * d;
    }
  }
}

void DequantQ4_1(const BlockQ4_1* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = F16ToF32(b[i].d);
    const float m = F16ToF32(b[i].m);
    for (int j = 0; j < 16; ++j) {
      y[j] = static_cast<float>(b[i].qs[j] & 0xF) * d + m;
      y[j + 16] = static_cast<float>(b[i].qs[j] >> 4) * d + m;
    }
  }
}

template <class Block>
void Q5Values(const Block& b, int* q /*32*/) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);
  for (int j = 0; j < 16; ++j) {
    q[j] = (b.qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1u) << 4);
    q[j + 16] = (b.qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1u) << 4);
  }
}

void DequantQ5_0(const BlockQ5_0* b, float* y, int64_t nb) {
  int q[32];
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = F16ToF32(b[i].d);
    Q5Values(b[i], q);
    for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(q[j] - 16) * d;
  }
}

void DequantQ5_1(const BlockQ5_1* b, float* y, int64_t nb) {
  int q[32];
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = F16ToF32(b[i].d);
    const float m = F16ToF32(b[i].m);
    Q5Values(b[i], q);
    for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(q[j]) * d + m;
  }
}

void DequantQ8_0(const BlockQ8_0* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = F16ToF32(b[i].d);
    for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(b[i].qs[j]) * d;
  }
}

void DequantQ4_K(const BlockQ4_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = F16ToF32(b[i].d);
    const float dmin = F16ToF32(b[i].dmin);
    const uint8_t* q = b[i].qs;
    for (int j = 0; j < 4; ++j, q += 32) {  // 64 elements per step: two sub-blocks
      uint8_t sc, mn;
      GetScaleMinK4(2 * j, b[i].scales, &sc, &mn);
      const float d1 = d * sc, m1 = dmin * mn;
      GetScaleMinK4(2 * j + 1, b[i].scales, &sc, &mn);
      const float d2 = d * sc, m2 = dmin * mn;
      for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
    }
  }
}

void DequantQ5_K(const BlockQ5_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = F16ToF32(b[i].d);
    const float dmin = F16ToF32(b[i].dmin);
    const uint8_t* ql = b[i].qs;
    const uint8_t* qh = b[i].qh;
    for (int j = 0; j < 4; ++j, ql += 32) {
      uint8_t sc, mn;
      GetScaleMinK4(2 * j, b[i].scales, &sc, &mn);
      const float d1 = d * sc, m1 = dmin * mn;
      GetScaleMinK4(2 * j + 1, b[i].scales, &sc, &mn);
      const float d2 = d * sc, m2 = dmin * mn;
      const uint8_t u1 = static_cast<uint8_t>(1u << (2 * j));
      const uint8_t u2 = static_cast<uint8_t>(2u << (2 * j));
      for (int l = 0; l < 32; ++l) {
        *y++ = d1 * static_cast<float>((ql[l] & 0xF) + ((qh[l] & u1) ? 16 : 0)) - m1;
      }
      for (int l = 0; l < 32; ++l) {
        *y++ = d2 * static_cast<float>((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
      }
    }
  }
}

void DequantQ6_K(const BlockQ6_K* b, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = F16ToF32(b[i].d);
    const uint8_t* ql = b[i].ql;
    const uint8_t* qh = b[i].qh;
    const int8_t* sc = b[i].scales;
    for (int n = 0; n < 2; ++n, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * sc[is] * static_cast<float>(q1);
        y[l + 32] = d * sc[is + 2] * static_cast<float>(q2);
        y[l + 64] = d * sc[is + 4] * static_cast<float>(q3);
        y[l + 96] = d * sc[is + 6] * static_cast<float>(q4);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Quantization. Straightforward round-to-nearest encoders: the scale maps the block's extreme
// value onto the end of the code range (as ggml's reference quantizers do).

void QuantQ4_0(const float* x, BlockQ4_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float amax = 0, max = 0;  // value with the largest magnitude, with its sign
    for (int j = 0; j < 32; ++j) {
      const float v = Finite(x[j]);
      if (std::fabs(v) > amax) {
        amax = std::fabs(v);
        max = v;
      }
    }
    const float d = max / -8;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    b[i].d = F32ToF16(d);
    for (int j = 0; j < 16; ++j) {
      const int q0 = std::clamp(NearestInt(Finite(x[j]) * id) + 8, 0, 15);
      const int q1 = std::clamp(NearestInt(Finite(x[j + 16]) * id) + 8, 0, 15);
      b[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

void QuantQ4_1(const float* x, BlockQ4_1* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float mn = std::numeric_limits<float>::max(), mx = -mn;
    for (int j = 0; j < 32; ++j) {
      mn = std::min(mn, Finite(x[j]));
      mx = std::max(mx, Finite(x[j]));
    }
    const float d = (mx - mn) / 15;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    b[i].d = F32ToF16(d);
    b[i].m = F32ToF16(mn);
    const float m = F16ToF32(b[i].m);
    for (int j = 0; j < 16; ++j) {
      const int q0 = std::clamp(NearestInt((Finite(x[j]) - m) * id), 0, 15);
      const int q1 = std::clamp(NearestInt((Finite(x[j + 16]) - m) * id), 0, 15);
      b[i].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
    }
  }
}

template <class Block>
void PackQ5(const int* q /*32 values 0..31*/, Block& b) {
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    b.qs[j] = static_cast<uint8_t>((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
    qh |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
    qh |= static_cast<uint32_t>((q[j + 16] >> 4) & 1) << (j + 16);
  }
  std::memcpy(b.qh, &qh, 4);
}

void QuantQ5_0(const float* x, BlockQ5_0* b, int64_t nb) {
  int q[32];
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float amax = 0, max = 0;
    for (int j = 0; j < 32; ++j) {
      const float v = Finite(x[j]);
      if (std::fabs(v) > amax) {
        amax = std::fabs(v);
        max = v;
      }
    }
    const float d = max / -16;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    b[i].d = F32ToF16(d);
    for (int j = 0; j < 32; ++j) q[j] = std::clamp(NearestInt(Finite(x[j]) * id) + 16, 0, 31);
    PackQ5(q, b[i]);
  }
}

void QuantQ5_1(const float* x, BlockQ5_1* b, int64_t nb) {
  int q[32];
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float mn = std::numeric_limits<float>::max(), mx = -mn;
    for (int j = 0; j < 32; ++j) {
      mn = std::min(mn, Finite(x[j]));
      mx = std::max(mx, Finite(x[j]));
    }
    const float d = (mx - mn) / 31;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    b[i].d = F32ToF16(d);
    b[i].m = F32ToF16(mn);
    const float m = F16ToF32(b[i].m);
    for (int j = 0; j < 32; ++j) q[j] = std::clamp(NearestInt((Finite(x[j]) - m) * id), 0, 31);
    PackQ5(q, b[i]);
  }
}

void QuantQ8_0(const float* x, BlockQ8_0* b, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(Finite(x[j])));
    const float d = amax / 127;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    b[i].d = F32ToF16(d);
    for (int j = 0; j < 32; ++j) {
      b[i].qs[j] = static_cast<int8_t>(std::clamp(NearestInt(Finite(x[j]) * id), -127, 127));
    }
  }
}

// Packs 8 six-bit scales and mins into the 12-byte Q4_K/Q5_K layout (inverse of GetScaleMinK4).
void PackScalesK4(const uint8_t* sc, const uint8_t* mn, uint8_t* out) {
  for (int j = 0; j < 4; ++j) {
    out[j] = static_cast<uint8_t>((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    out[j + 4] = static_cast<uint8_t>((mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
    out[j + 8] = static_cast<uint8_t>((sc[j + 4] & 0xF) | ((mn[j + 4] & 0xF) << 4));
  }
}

// Scale and (non-negative) min of a 32-value sub-block for codes 0..nmax, with a small search
// over candidate ranges that minimizes the squared error (the full-range choice is a candidate,
// so the search never does worse than plain min/max).
void FitScaleMin(const float* x, int nmax, float* scale, float* min_out) {
  float mn = 0, mx = 0;  // the min is clamped to <= 0: the format stores -min as unsigned
  for (int l = 0; l < 32; ++l) {
    mn = std::min(mn, x[l]);
    mx = std::max(mx, x[l]);
  }
  if (mx <= mn) {
    *scale = 0;
    *min_out = 0;
    return;
  }
  float best_err = std::numeric_limits<float>::max();
  float best_s = (mx - mn) / nmax, best_m = -mn;
  for (int step = 0; step <= 8; ++step) {
    const float s = (mx - mn) / (nmax + 0.25f * static_cast<float>(step - 2));
    if (s <= 0) continue;
    const float is = 1.0f / s;
    float err = 0;
    for (int l = 0; l < 32; ++l) {
      const int q = std::clamp(NearestInt((x[l] - mn) * is), 0, nmax);
      const float e = s * static_cast<float>(q) + mn - x[l];
      err += e * e;
    }
    if (err < best_err) {
      best_err = err;
      best_s = s;
      best_m = -mn;
    }
  }
  *scale = best_s;
  *min_out = best_m;
}

template <class Block, int kNmax>
void QuantKWithMin(const float* x_in, Block* b, int64_t nb, int* codes /*256*/) {
  float x[256];
  for (int64_t i = 0; i < nb; ++i, x_in += kQKK) {
    for (int l = 0; l < 256; ++l) x[l] = Finite(x_in[l]);
    float scales[8], mins[8];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
      FitScaleMin(x + 32 * j, kNmax, &scales[j], &mins[j]);
      max_scale = std::max(max_scale, scales[j]);
      max_min = std::max(max_min, mins[j]);
    }
    const float d = max_scale / 63, dmin = max_min / 63;
    b[i].d = F32ToF16(d);
    b[i].dmin = F32ToF16(dmin);
    const float d_h = F16ToF32(b[i].d), dmin_h = F16ToF32(b[i].dmin);
    uint8_t sc[8], mn[8];
    for (int j = 0; j < 8; ++j) {
      sc[j] = static_cast<uint8_t>(d_h > 0 ? std::clamp(NearestInt(scales[j] / d_h), 0, 63) : 0);
      mn[j] = static_cast<uint8_t>(dmin_h > 0 ? std::clamp(NearestInt(mins[j] / dmin_h), 0, 63) : 0);
      const float ds = d_h * sc[j], dm = dmin_h * mn[j];
      for (int l = 0; l < 32; ++l) {
        codes[32 * j + l] = ds > 0 ? std::clamp(NearestInt((x[32 * j + l] + dm) / ds), 0, kNmax) : 0;
      }
    }
    PackScalesK4(sc, mn, b[i].scales);
    if constexpr (kNmax == 15) {
      for (int j = 0; j < 4; ++j) {
        for (int l = 0; l < 32; ++l) {
          b[i].qs[32 * j + l] =
              static_cast<uint8_t>(codes[64 * j + l] | (codes[64 * j + 32 + l] << 4));
        }
      }
    } else {
      std::memset(b[i].qh, 0, sizeof(b[i].qh));
      for (int j = 0; j < 4; ++j) {
        for (int l = 0; l < 32; ++l) {
          const int lo = codes[64 * j + l], hi = codes[64 * j + 32 + l];
          b[i].qs[32 * j + l] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
          b[i].qh[l] |= static_cast<uint8_t>(((lo >> 4) << (2 * j)) | ((hi >> 4) << (2 * j + 1)));
        }
      }
    }
  }
}

void QuantQ6_K(const float* x_in, BlockQ6_K* b, int64_t nb) {
  float x[256];
  for (int64_t i = 0; i < nb; ++i, x_in += kQKK) {
    for (int l = 0; l < 256; ++l) x[l] = Finite(x_in[l]);
    float scales[16];
    float max_abs_scale = 0, max_scale = 0;
    for (int s = 0; s < 16; ++s) {
      float amax = 0, max = 0;
      for (int l = 0; l < 16; ++l) {
        if (std::fabs(x[16 * s + l]) > amax) {
          amax = std::fabs(x[16 * s + l]);
          max = x[16 * s + l];
        }
      }
      scales[s] = max / -32;  // extreme value maps onto code -32
      if (std::fabs(scales[s]) > max_abs_scale) {
        max_abs_scale = std::fabs(scales[s]);
        max_scale = scales[s];
      }
    }
    const float d = max_scale / -128;
    b[i].d = F32ToF16(d);
    const float d_h = F16ToF32(b[i].d);
    int codes[256];
    for (int s = 0; s < 16; ++s) {
      const int sc = d_h != 0 ? std::clamp(NearestInt(scales[s] / d_h), -128, 127) : 0;
      b[i].scales[s] = static_cast<int8_t>(sc);
      const float ds = d_h * static_cast<float>(sc);
      for (int l = 0; l < 16; ++l) {
        const int q = ds != 0 ? std::clamp(NearestInt(x[16 * s + l] / ds), -32, 31) : 0;
        codes[16 * s + l] = q + 32;
      }
    }
    // Two halves of 128: ql holds low nibbles of (l, l+64) and (l+32, l+96); qh the top 2 bits.
    for (int n = 0; n < 2; ++n) {
      uint8_t* ql = b[i].ql + 64 * n;
      uint8_t* qh = b[i].qh + 32 * n;
      const int* c = codes + 128 * n;
      for (int l = 0; l < 32; ++l) {
        const int q1 = c[l], q2 = c[l + 32], q3 = c[l + 64], q4 = c[l + 96];
        ql[l] = static_cast<uint8_t>((q1 & 0xF) | ((q3 & 0xF) << 4));
        ql[l + 32] = static_cast<uint8_t>((q2 & 0xF) | ((q4 & 0xF) << 4));
        qh[l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) |
                                     ((q4 >> 4) << 6));
      }
    }
  }
}

}  // namespace

void DequantizeRow(GgmlType t, const void* src, float* dst, int64_t n) {
  const GgmlTypeInfo* info = GetTypeInfo(t);
  if (info == nullptr || !info->supported || n < 0 || n % info->block_elems != 0) {
    for (int64_t i = 0; i < n; ++i) dst[i] = std::numeric_limits<float>::quiet_NaN();
    return;
  }
  const int64_t nb = n / info->block_elems;
  switch (t) {
    case GgmlType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      return;
    case GgmlType::F16: {
      const auto* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = F16ToF32(h[i]);
      return;
    }
    case GgmlType::BF16: {
      const auto* h = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = BF16ToF32(h[i]);
      return;
    }
    case GgmlType::Q4_0: return DequantQ4_0(static_cast<const BlockQ4_0*>(src), dst, nb);
    case GgmlType::Q4_1: return DequantQ4_1(static_cast<const BlockQ4_1*>(src), dst, nb);
    case GgmlType::Q5_0: return DequantQ5_0(static_cast<const BlockQ5_0*>(src), dst, nb);
    case GgmlType::Q5_1: return DequantQ5_1(static_cast<const BlockQ5_1*>(src), dst, nb);
    case GgmlType::Q8_0: return DequantQ8_0(static_cast<const BlockQ8_0*>(src), dst, nb);
    case GgmlType::Q4_K: return DequantQ4_K(static_cast<const BlockQ4_K*>(src), dst, nb);
    case GgmlType::Q5_K: return DequantQ5_K(static_cast<const BlockQ5_K*>(src), dst, nb);
    case GgmlType::Q6_K: return DequantQ6_K(static_cast<const BlockQ6_K*>(src), dst, nb);
    default:
      for (int64_t i = 0; i < n; ++i) dst[i] = std::numeric_limits<float>::quiet_NaN();
  }
}

bool CanQuantizeTo(GgmlType t) {
  switch (t) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
    case GgmlType::Q4_0:
    case GgmlType::Q4_1:
    case GgmlType::Q5_0:
    case GgmlType::Q5_1:
    case GgmlType::Q8_0:
    case GgmlType::Q4_K:
    case GgmlType::Q5_K:
    case GgmlType::Q6_K:
      return true;
    default:
      return false;
  }
}

Status QuantizeRow(GgmlType t, const float* src, void* dst, int64_t n) {
  if (!CanQuantizeTo(t)) {
    return UnimplementedError(std::string("cannot quantize to ") + TypeName(t) +
                              " (supported: f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q4_k, "
                              "q5_k, q6_k)");
  }
  RETURN_IF_ERROR(RowBytes(t, n).status());
  const int64_t nb = n / GetTypeInfo(t)->block_elems;
  switch (t) {
    case GgmlType::F32:
      std::memcpy(dst, src, static_cast<size_t>(n) * 4);
      break;
    case GgmlType::F16: {
      auto* h = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = F32ToF16(src[i]);
      break;
    }
    case GgmlType::BF16: {
      auto* h = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) h[i] = F32ToBF16(src[i]);
      break;
    }
    case GgmlType::Q4_0: QuantQ4_0(src, static_cast<BlockQ4_0*>(dst), nb); break;
    case GgmlType::Q4_1: QuantQ4_1(src, static_cast<BlockQ4_1*>(dst), nb); break;
    case GgmlType::Q5_0: QuantQ5_0(src, static_cast<BlockQ5_0*>(dst), nb); break;
    case GgmlType::Q5_1: QuantQ5_1(src, static_cast<BlockQ5_1*>(dst), nb); break;
    case GgmlType::Q8_0: QuantQ8_0(src, static_cast<BlockQ8_0*>(dst), nb); break;
    case GgmlType::Q4_K: {
      int codes[256];
      QuantKWithMin<BlockQ4_K, 15>(src, static_cast<BlockQ4_K*>(dst), nb, codes);
      break;
    }
    case GgmlType::Q5_K: {
      int codes[256];
      QuantKWithMin<BlockQ5_K, 31>(src, static_cast<BlockQ5_K*>(dst), nb, codes);
      break;
    }
    case GgmlType::Q6_K: QuantQ6_K(src, static_cast<BlockQ6_K*>(dst), nb); break;
    default: break;
  }
  return Status::Ok();
}

}  // namespace hotline::engine
