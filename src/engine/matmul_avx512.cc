// AVX-512 (F, BW, VL, VNNI) kernels. deps.cmake compiles this file (only) with those instruction
// sets; MatMul enters it only after GetCpuFeatures() confirmed them. Other targets build an empty
// table.
//
// Every type gets the shared x86 kernels (matmul_x86_impl.h, 256-bit, EVEX VPDPBUSD). Q4_0 and
// Q8_0 weights packed by PackWeights (layout in matmul_kernels.h) get the 512-bit kernels below:
// sixteen rows per register, so per block of 32 values one VPDPBUSD per 4 values advances all
// sixteen rows, the activation's 4 bytes ride in as an embedded broadcast, and the sixteen rows'
// scales arrive in one 32-byte load. That is about 30 instructions per 512 multiply-adds in
// decode, against about 170 for the row-at-a-time kernels on the GGUF layout, which leaves a
// decode step bound by memory rather than by instruction issue.
#include "engine/matmul_kernels.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__AVX512VNNI__) && defined(__FMA__) && defined(__F16C__)
// GCC 12's own avx512fintrin.h trips -Wmaybe-uninitialized through _mm512_undefined_*() once its
// conversions are inlined (GCC bug 105593); the warning is about the header, not this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <cmath>
#include <cstring>

namespace hotline::engine::matmul_internal {
namespace {
#define HOTLINE_X86_VNNI 2
#include "engine/matmul_x86_impl.h"
#undef HOTLINE_X86_VNNI

inline int32_t Load32(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// 16 rows x NT tokens over all blocks of one packed group.
//
// Arithmetic per block, row r, token t: the stored codes are u = q + kBias (kBias = 8 for Q4_0,
// whose nibbles are q + 8 already; 128 for Q8_0, stored shifted), so
//   sum_j q_j a_j = sum_j u_j a_j - kBias * sum_j a_j,
// and with the activation block's d and s = d * sum_j a_j the block contributes
//   d_w * (d * sum_j u_j a_j - kBias * s).
// sum_j u_j a_j is exact in int32 (|.| <= 255 * 127 * 32).
template <bool kQ8, int NT>
inline void PackedMicro(const uint8_t* codes, const uint8_t* scales, int64_t nb, const uint8_t* act,
                        int64_t act_stride, float* y, int64_t y_stride) {
  constexpr int64_t kCodeBytes = kQ8 ? 512 : 256;
  constexpr int64_t kPrefetchBytes = 4 * kCodeBytes;
  const __m512 neg_bias = _mm512_set1_ps(kQ8 ? -128.0f : -8.0f);
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  const __m512i mf0 = _mm512_set1_epi8(static_cast<char>(0xF0));
  __m512 acc[NT];
  for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
  const ActQ8* a_base[NT];
  for (int t = 0; t < NT; ++t) a_base[t] = reinterpret_cast<const ActQ8*>(act + t * act_stride);

  for (int64_t b = 0; b < nb; ++b, codes += kCodeBytes, scales += 32) {
    // w[k] holds, for every row, the codes of values 4k .. 4k+3 of this block.
    // Prefetch a few blocks ahead: one thread streaming alone does not reach the bus's rate on
    // the hardware prefetcher's ramp-up within each group.
    _mm_prefetch(reinterpret_cast<const char*>(codes + kPrefetchBytes), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(codes + kPrefetchBytes + 64), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(codes + kPrefetchBytes + 128), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(codes + kPrefetchBytes + 192), _MM_HINT_T0);
    if constexpr (kQ8) {
      _mm_prefetch(reinterpret_cast<const char*>(codes + kPrefetchBytes + 256), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(codes + kPrefetchBytes + 320), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(codes + kPrefetchBytes + 384), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(codes + kPrefetchBytes + 448), _MM_HINT_T0);
    }
    // Fully unrolled so that w[] lives in registers (GCC keeps a rolled loop's array on the stack).
    __m512i w[8];
    if constexpr (kQ8) {
#pragma GCC unroll 8
      for (int k = 0; k < 8; ++k) w[k] = _mm512_load_si512(codes + 64 * k);
    } else {
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) {
        const __m512i q = _mm512_load_si512(codes + 64 * k);
        w[k] = _mm512_and_si512(q, m4);       // values 4k .. 4k+3
        w[k + 4] = _mm512_and_si512(q, mf0);  // 16 x values 16+4k .. 16+4k+3, used in place
      }
    }
    const __m512 wd = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales)));
    // Unrolled for the same reason: rolled, GCC keeps acc[] and a_base[] on the stack and every
    // token's accumulator makes a store-to-load round trip per block (a third of the time of a
    // 16-token step went to that before).
#pragma GCC unroll 8
    for (int t = 0; t < NT; ++t) {
      const ActQ8& a = a_base[t][b];
      // Two independent chains halve the VPDPBUSD latency on the critical path.
      __m512i s0 =
          _mm512_dpbusd_epi32(_mm512_setzero_si512(), w[0], _mm512_set1_epi32(Load32(a.qs)));
      __m512i s1 =
          _mm512_dpbusd_epi32(_mm512_setzero_si512(), w[4], _mm512_set1_epi32(Load32(a.qs + 16)));
#pragma GCC unroll 4
      for (int k = 1; k < 4; ++k) {
        s0 = _mm512_dpbusd_epi32(s0, w[k], _mm512_set1_epi32(Load32(a.qs + 4 * k)));
        s1 = _mm512_dpbusd_epi32(s1, w[k + 4], _mm512_set1_epi32(Load32(a.qs + 16 + 4 * k)));
      }
      // Q4_0's high nibbles entered as 16 q (|sum| <= 240 * 127 * 16, exact): one exact shift
      // per token instead of four shifts per block.
      if constexpr (!kQ8) s1 = _mm512_srai_epi32(s1, 4);
      const __m512 dot = _mm512_cvtepi32_ps(_mm512_add_epi32(s0, s1));
      const __m512 block =
          _mm512_fmadd_ps(dot, _mm512_set1_ps(a.d), _mm512_mul_ps(neg_bias, _mm512_set1_ps(a.s)));
      acc[t] = _mm512_fmadd_ps(wd, block, acc[t]);
    }
  }
  for (int t = 0; t < NT; ++t) _mm512_storeu_ps(y + t * y_stride, acc[t]);
}

template <bool kQ8>
void PackedTile(const uint8_t* codes, const uint8_t* scales, int n_groups, const uint8_t* act,
                int64_t act_stride, int nt, int64_t cols, float* y, int64_t y_stride) {
  constexpr int64_t kCodeBytes = kQ8 ? 512 : 256;
  const int64_t nb = cols / kQK;
  for (int g = 0; g < n_groups; ++g) {
    const uint8_t* c = codes + g * nb * kCodeBytes;
    const uint8_t* s = scales + g * nb * 32;
    float* yg = y + int64_t{g} * 16;
    // Eight (then four) tokens share each unpacked block: the weights are read from memory
    // once per call and from L1 once per eight tokens, and their unpacking is paid once per
    // eight tokens (batched decode and prompt passes are bound by instruction issue, not by
    // memory).
    int t = 0;
    for (; t + 8 <= nt; t += 8) {
      PackedMicro<kQ8, 8>(c, s, nb, act + t * act_stride, act_stride, yg + t * y_stride, y_stride);
    }
    for (; t + 4 <= nt; t += 4) {
      PackedMicro<kQ8, 4>(c, s, nb, act + t * act_stride, act_stride, yg + t * y_stride, y_stride);
    }
    const uint8_t* at = act + t * act_stride;
    float* yt = yg + t * y_stride;
    switch (nt - t) {
      case 3: PackedMicro<kQ8, 3>(c, s, nb, at, act_stride, yt, y_stride); break;
      case 2: PackedMicro<kQ8, 2>(c, s, nb, at, act_stride, yt, y_stride); break;
      case 1: PackedMicro<kQ8, 1>(c, s, nb, at, act_stride, yt, y_stride); break;
      default: break;
    }
  }
}

// The scalar QuantizeQ8's arithmetic, sixteen lanes at a time: the same scale, the same
// round-to-nearest-even conversion (MXCSR default, like lrintf), non-finite products as 0, so
// every path quantizes an activation row to the same bytes.
void QuantizeQ8Avx512(const float* x, ActQ8* out, int64_t nb) {
  const __m512 inf = _mm512_set1_ps(__builtin_inff());
  const __m512 lim = _mm512_set1_ps(127.0f);
  const __m256i ones = _mm256_set1_epi8(1);
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    const __m512 x0 = _mm512_loadu_ps(x);
    const __m512 x1 = _mm512_loadu_ps(x + 16);
    // max(|x|, m) returns m where |x| is NaN, like std::fmax in the scalar path.
    __m512 m = _mm512_max_ps(_mm512_abs_ps(x0), _mm512_setzero_ps());
    m = _mm512_max_ps(_mm512_abs_ps(x1), m);
    const float amax = _mm512_reduce_max_ps(m);
    const float d = amax / 127;
    const float id = d > 0 ? 1.0f / d : 0.0f;
    const __m512 vid = _mm512_set1_ps(id);
    __m512i q[2];
    const __m512 xs[2] = {x0, x1};
    for (int h = 0; h < 2; ++h) {
      __m512 v = _mm512_mul_ps(xs[h], vid);
      const __mmask16 finite = _mm512_cmp_ps_mask(_mm512_abs_ps(v), inf, _CMP_LT_OQ);
      v = _mm512_maskz_mov_ps(finite, v);
      v = _mm512_min_ps(lim, _mm512_max_ps(_mm512_sub_ps(_mm512_setzero_ps(), lim), v));
      q[h] = _mm512_cvtps_epi32(v);
    }
    const __m256i qs = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi32_epi8(q[0])),
                                               _mm512_cvtepi32_epi8(q[1]), 1);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[i].qs), qs);
    // Sums of each 4 codes (u8 1 x s8 q), then -8x for the Q4_0 seed.
    const __m256i sum4 = _mm256_dpbusd_epi32(_mm256_setzero_si256(), ones, qs);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out[i].neg8),
                        _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(sum4, 3)));
    out[i].d = d;
    out[i].s = d * static_cast<float>(HorizontalSumI32(sum4));
  }
}

}  // namespace

const KernelTable* Avx512Kernels() {
  static const KernelTable table = [] {
    KernelTable k = MakeX86Table();
    k.quantize_q8 = QuantizeQ8Avx512;
    k.packed_tile[static_cast<int>(GgmlType::Q4_0)] = PackedTile<false>;
    k.packed_tile[static_cast<int>(GgmlType::Q8_0)] = PackedTile<true>;
    return k;
  }();
  return &table;
}

}  // namespace hotline::engine::matmul_internal
#else
namespace hotline::engine::matmul_internal {
const KernelTable* Avx512Kernels() { return nullptr; }
}  // namespace hotline::engine::matmul_internal
#endif
