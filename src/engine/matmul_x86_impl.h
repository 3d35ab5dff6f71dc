// x86 SIMD kernels, written once and compiled three times: by matmul_avx2.cc (AVX2+FMA+F16C), by
// matmul_avxvnni.cc (the same plus AVX-VNNI, HOTLINE_X86_VNNI=1) and by matmul_avx512.cc (AVX-512
// with VNNI, HOTLINE_X86_VNNI=2, the 256-bit VPDPBUSD in its EVEX form). Each includes this file
// inside its own anonymous namespace, so the builds never share a symbol (no ODR mix-up between
// code compiled with different instruction sets).
//
// REQUIRES before inclusion: <immintrin.h>, <cmath>, engine/matmul_kernels.h,
// HOTLINE_X86_VNNI defined, inside
// namespace hotline::engine::matmul_internal { namespace { ... } }.
//
// Kernel shapes: the legacy formats (blocks of 32) use register tiles of 4 rows x 2 tokens (4x1
// for a single token): each weight block is unpacked once and used for both tokens, each
// activation block is loaded once for four rows. The K-quants use one row x one token per call
// with the super-block's scales applied in integer arithmetic (one float FMA per 256 values).

// ---- small helpers -------------------------------------------------------------------------

inline float HalfToFloat(uint16_t h) { return _cvtsh_ss(h); }

inline uint16_t LoadU16(const uint8_t* p) {
  uint16_t v;
  __builtin_memcpy(&v, p, 2);
  return v;
}

inline float HorizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline int HorizontalSumI32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
  return _mm_cvtsi128_si32(s);
}

// acc + sum over groups of 4 of u8(u) * s8(s), as 8 int32 lanes.
inline __m256i DotU8S8(__m256i acc, __m256i u, __m256i s) {
#if HOTLINE_X86_VNNI == 2
  return _mm256_dpbusd_epi32(acc, u, s);  // AVX512-VNNI + VL encoding (no AVX-VNNI needed)
#elif HOTLINE_X86_VNNI
  return _mm256_dpbusd_avx_epi32(acc, u, s);
#else
  // u <= 128 and |s| <= 127 in every use here, so the int16 pair sums cannot saturate.
  const __m256i pairs = _mm256_maddubs_epi16(u, s);
  return _mm256_add_epi32(acc, _mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
#endif
}

// 32 nibbles of a 16-byte array: element j < 16 = low nibble of q[j], j >= 16 = high nibble.
inline __m256i Nibbles32(const uint8_t* q) {
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
  const __m256i both = _mm256_inserti128_si256(_mm256_castsi128_si256(x), _mm_srli_epi16(x, 4), 1);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

// The fifth bits of Q5_0/Q5_1 (qh, 32 bits) as 0x10 in byte j when bit j is set.
inline __m256i FifthBits(const uint8_t* qh_bytes) {
  uint32_t qh;
  __builtin_memcpy(&qh, qh_bytes, 4);
  // Byte j takes byte j/8 of qh, then tests bit j%8.
  const __m256i shuf = _mm256_setr_epi64x(0x0000000000000000LL, 0x0101010101010101LL,
                                          0x0202020202020202LL, 0x0303030303030303LL);
  const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int>(qh)), shuf);
  const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);
  return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

// ---- legacy formats (blocks of 32) ---------------------------------------------------------

enum class Legacy { kQ4_0, kQ4_1, kQ5_0, kQ5_1, kQ8_0 };

template <Legacy F>
constexpr int BlockBytes() {
  return F == Legacy::kQ4_0 ? 18 : F == Legacy::kQ4_1 ? 20 : F == Legacy::kQ5_0 ? 22
         : F == Legacy::kQ5_1 ? 24 : 34;
}
template <Legacy F>
constexpr bool HasMin() {
  return F == Legacy::kQ4_1 || F == Legacy::kQ5_1;
}

// Weight codes of one block: unsigned (0..15 / 0..31) for the 4/5-bit formats, signed for Q8_0.
template <Legacy F>
inline __m256i Codes(const uint8_t* b) {
  if constexpr (F == Legacy::kQ4_0) return Nibbles32(b + 2);
  if constexpr (F == Legacy::kQ4_1) return Nibbles32(b + 4);
  if constexpr (F == Legacy::kQ5_0) return _mm256_or_si256(Nibbles32(b + 6), FifthBits(b + 2));
  if constexpr (F == Legacy::kQ5_1) return _mm256_or_si256(Nibbles32(b + 8), FifthBits(b + 4));
  if constexpr (F == Legacy::kQ8_0) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 2));
  }
}

// NR rows x NT tokens over all blocks; y[t * y_stride + r].
template <Legacy F, int NR, int NT>
inline void LegacyMicro(const uint8_t* w, int64_t w_stride, const uint8_t* act, int64_t act_stride,
                        int64_t nb, float* y, int64_t y_stride) {
  constexpr int kBytes = BlockBytes<F>();
  __m256 acc[NR][NT];
  float min_acc[NR][NT];
  for (int r = 0; r < NR; ++r) {
    for (int t = 0; t < NT; ++t) {
      acc[r][t] = _mm256_setzero_ps();
      min_acc[r][t] = 0;
    }
  }
  for (int64_t i = 0; i < nb; ++i) {
    __m256i wq[NR];
    __m256 wd[NR];
    float wm[NR];
    for (int r = 0; r < NR; ++r) {
      const uint8_t* b = w + r * w_stride + i * kBytes;
      wq[r] = Codes<F>(b);
      wd[r] = _mm256_set1_ps(HalfToFloat(LoadU16(b)));
      wm[r] = HasMin<F>() ? HalfToFloat(LoadU16(b + 2)) : 0.0f;
    }
    for (int t = 0; t < NT; ++t) {
      const auto* a = reinterpret_cast<const ActQ8*>(act + t * act_stride) + i;
      const __m256i aq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a->qs));
      const __m256 ad = _mm256_set1_ps(a->d);
      __m256i seed = _mm256_setzero_si256();
      if constexpr (F == Legacy::kQ4_0) {
        seed = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a->neg8));
      } else if constexpr (F == Legacy::kQ5_0) {
        const __m256i n8 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a->neg8));
        seed = _mm256_add_epi32(n8, n8);
      }
      for (int r = 0; r < NR; ++r) {
        __m256i p;
        if constexpr (F == Legacy::kQ8_0) {
          // Signed x signed: move the weight's sign onto the activation.
          p = DotU8S8(seed, _mm256_sign_epi8(wq[r], wq[r]), _mm256_sign_epi8(aq, wq[r]));
        } else {
          p = DotU8S8(seed, wq[r], aq);
        }
        acc[r][t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p), _mm256_mul_ps(wd[r], ad), acc[r][t]);
        if constexpr (HasMin<F>()) min_acc[r][t] += wm[r] * a->s;
      }
    }
  }
  for (int r = 0; r < NR; ++r) {
    for (int t = 0; t < NT; ++t) y[t * y_stride + r] = HorizontalSum(acc[r][t]) + min_acc[r][t];
  }
}

template <Legacy F>
void LegacyTile(const uint8_t* w, int64_t w_stride, int nr, const uint8_t* act,
                int64_t act_stride, int nt, int64_t cols, float* y, int64_t y_stride) {
  const int64_t nb = cols / kQK;
  int r = 0;
  for (; r + 4 <= nr; r += 4) {
    int t = 0;
    for (; t + 2 <= nt; t += 2) {
      LegacyMicro<F, 4, 2>(w + r * w_stride, w_stride, act + t * act_stride, act_stride, nb,
                           y + t * y_stride + r, y_stride);
    }
    if (t < nt) {
      LegacyMicro<F, 4, 1>(w + r * w_stride, w_stride, act + t * act_stride, act_stride, nb,
                           y + t * y_stride + r, y_stride);
    }
  }
  for (; r < nr; ++r) {
    int t = 0;
    for (; t + 2 <= nt; t += 2) {
      LegacyMicro<F, 1, 2>(w + r * w_stride, w_stride, act + t * act_stride, act_stride, nb,
                           y + t * y_stride + r, y_stride);
    }
    if (t < nt) {
      LegacyMicro<F, 1, 1>(w + r * w_stride, w_stride, act + t * act_stride, act_stride, nb,
                           y + t * y_stride + r, y_stride);
    }
  }
}

// ---- K-quants (super-blocks of 256) ---------------------------------------------------------

inline void ScaleMinK4(int j, const uint8_t* q, int* sc, int* mn) {
  if (j < 4) {
    *sc = q[j] & 63;
    *mn = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *mn = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// Sum over 32 values of u8 codes x s8 activations, times an int16 scale, as 8 int32 lanes.
// (maddubs + madd: the scale rides along in the second multiply for free.)
inline __m256i ScaledDot(__m256i codes, __m256i a, __m256i scale16) {
  return _mm256_madd_epi16(_mm256_maddubs_epi16(codes, a), scale16);
}

template <bool kFive>
float DotQ45K(const uint8_t* w, const BlockQ8_K* a, int64_t nb) {
  constexpr int64_t kBytes = kFive ? 176 : 144;
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  __m256 acc = _mm256_setzero_ps();
  float min_acc = 0;
  for (int64_t i = 0; i < nb; ++i, w += kBytes, ++a) {
    const uint8_t* scales = w + 4;
    const uint8_t* qh = w + 16;
    const uint8_t* ql = kFive ? w + 48 : w + 16;
    _mm_prefetch(reinterpret_cast<const char*>(w + 2 * kBytes), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(w + 2 * kBytes + 64), _MM_HINT_T0);
    int sc[8], mn[8];
    int min_sum = 0;
    for (int j = 0; j < 8; ++j) {
      ScaleMinK4(j, scales, &sc[j], &mn[j]);
      min_sum += mn[j] * (a->bsums[2 * j] + a->bsums[2 * j + 1]);
    }
    const __m256i hbits = kFive ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh))
                                : _mm256_setzero_si256();
    __m256i isum = _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j) {
      const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32 * j));
      __m256i lo = _mm256_and_si256(q, m4);
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
      if constexpr (kFive) {
        const __m256i b0 = _mm256_set1_epi8(static_cast<char>(1 << (2 * j)));
        const __m256i b1 = _mm256_set1_epi8(static_cast<char>(2 << (2 * j)));
        const __m256i x10 = _mm256_set1_epi8(0x10);
        lo = _mm256_or_si256(lo, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hbits, b0), b0), x10));
        hi = _mm256_or_si256(hi, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hbits, b1), b1), x10));
      }
      const __m256i a_lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a->qs + 64 * j));
      const __m256i a_hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a->qs + 64 * j + 32));
      isum = _mm256_add_epi32(isum, ScaledDot(lo, a_lo, _mm256_set1_epi16(static_cast<int16_t>(sc[2 * j]))));
      isum = _mm256_add_epi32(isum, ScaledDot(hi, a_hi, _mm256_set1_epi16(static_cast<int16_t>(sc[2 * j + 1]))));
    }
    const float d = HalfToFloat(LoadU16(w)) * a->d;
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(d), acc);
    min_acc += HalfToFloat(LoadU16(w + 2)) * a->d * static_cast<float>(min_sum);
  }
  return HorizontalSum(acc) - min_acc;
}

float DotQ6K(const uint8_t* w, const BlockQ8_K* a, int64_t nb) {
  constexpr int64_t kBytes = 210;
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const __m256i m30 = _mm256_set1_epi8(0x30);
  __m256 acc = _mm256_setzero_ps();
  for (int64_t i = 0; i < nb; ++i, w += kBytes, ++a) {
    _mm_prefetch(reinterpret_cast<const char*>(w + 2 * kBytes), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(w + 2 * kBytes + 64), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(w + 2 * kBytes + 128), _MM_HINT_T0);
    const auto* scales = reinterpret_cast<const int8_t*>(w + 192);
    // The codes are stored as q + 32 (0..63): sum (q+32)*a, then subtract 32 * sum(a) per
    // 16-value sub-block with the activations' precomputed block sums.
    int corr = 0;
    for (int s = 0; s < 16; ++s) corr += scales[s] * a->bsums[s];
    __m256i isum = _mm256_setzero_si256();
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = w + 64 * half;
      const uint8_t* qh = w + 128 + 32 * half;
      const int8_t* sc = scales + 8 * half;
      const int8_t* qa = a->qs + 128 * half;
      const __m256i q0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
      const __m256i q1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql + 32));
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
      __m256i c[4];
      c[0] = _mm256_or_si256(_mm256_and_si256(q0, m4), _mm256_and_si256(_mm256_slli_epi16(h, 4), m30));
      c[1] = _mm256_or_si256(_mm256_and_si256(q1, m4), _mm256_and_si256(_mm256_slli_epi16(h, 2), m30));
      c[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q0, 4), m4), _mm256_and_si256(h, m30));
      c[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q1, 4), m4),
                             _mm256_and_si256(_mm256_srli_epi16(h, 2), m30));
      for (int k = 0; k < 4; ++k) {
        // Values 32k .. 32k+15 use scale sc[2k], 32k+16 .. 32k+31 use sc[2k+1].
        const __m256i scale16 = _mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_set1_epi16(sc[2 * k])), _mm_set1_epi16(sc[2 * k + 1]), 1);
        const __m256i av = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qa + 32 * k));
        isum = _mm256_add_epi32(isum, ScaledDot(c[k], av, scale16));
      }
    }
    isum = _mm256_sub_epi32(isum, _mm256_setr_epi32(32 * corr, 0, 0, 0, 0, 0, 0, 0));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum),
                          _mm256_set1_ps(HalfToFloat(LoadU16(w + 208)) * a->d), acc);
  }
  return HorizontalSum(acc);
}

template <float (*kDot)(const uint8_t*, const BlockQ8_K*, int64_t)>
void KTile(const uint8_t* w, int64_t w_stride, int nr, const uint8_t* act, int64_t act_stride,
           int nt, int64_t cols, float* y, int64_t y_stride) {
  const int64_t nb = cols / kQKK;
  for (int r = 0; r < nr; ++r) {
    for (int t = 0; t < nt; ++t) {
      y[t * y_stride + r] =
          kDot(w + r * w_stride, reinterpret_cast<const BlockQ8_K*>(act + t * act_stride), nb);
    }
  }
}

// ---- float weights ----------------------------------------------------------------------------

enum class FloatW { kF32, kF16, kBF16 };

template <FloatW F>
inline __m256 Load8(const uint8_t* w, int64_t i) {
  if constexpr (F == FloatW::kF32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(w) + i);
  } else if constexpr (F == FloatW::kF16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 2 * i)));
  } else {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w + 2 * i));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
}

template <FloatW F>
inline float ScalarAt(const uint8_t* w, int64_t i) {
  if constexpr (F == FloatW::kF32) {
    float f;
    __builtin_memcpy(&f, w + 4 * i, 4);
    return f;
  } else if constexpr (F == FloatW::kF16) {
    return HalfToFloat(LoadU16(w + 2 * i));
  } else {
    const uint32_t u = static_cast<uint32_t>(LoadU16(w + 2 * i)) << 16;
    float f;
    __builtin_memcpy(&f, &u, 4);
    return f;
  }
}

template <FloatW F>
void FloatTile(const uint8_t* w, int64_t w_stride, int nr, const uint8_t* act,
               int64_t act_stride, int nt, int64_t cols, float* y, int64_t y_stride) {
  for (int r = 0; r < nr; ++r) {
    const uint8_t* row = w + r * w_stride;
    for (int t = 0; t < nt; ++t) {
      const auto* x = reinterpret_cast<const float*>(act + t * act_stride);
      __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
      int64_t i = 0;
      for (; i + 16 <= cols; i += 16) {
        s0 = _mm256_fmadd_ps(Load8<F>(row, i), _mm256_loadu_ps(x + i), s0);
        s1 = _mm256_fmadd_ps(Load8<F>(row, i + 8), _mm256_loadu_ps(x + i + 8), s1);
      }
      float s = HorizontalSum(_mm256_add_ps(s0, s1));
      for (; i < cols; ++i) s += ScalarAt<F>(row, i) * x[i];
      y[t * y_stride + r] = s;
    }
  }
}

// ---- conversions ------------------------------------------------------------------------------

void HalfRowToFloat(const uint16_t* h, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i,
                     _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i))));
  }
  for (; i < n; ++i) out[i] = HalfToFloat(h[i]);
}

// s[j] = dot(q, row j of k) * scale, rows of n floats.
void DotRowsX86(const float* q, const float* k, int c, int n, float scale, float* s) {
  for (int j = 0; j < c; ++j, k += n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
      a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), _mm256_loadu_ps(k + i), a0);
      a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), _mm256_loadu_ps(k + i + 8), a1);
    }
    float sum = HorizontalSum(_mm256_add_ps(a0, a1));
    for (; i < n; ++i) sum += q[i] * k[i];
    s[j] = sum * scale;
  }
}

// acc[d] += sum_j p[j] * v[j * n + d]: 32 columns of acc stay in registers across all rows.
void WeightedRowSumX86(const float* p, const float* v, int c, int n, float* acc) {
  int d = 0;
  for (; d + 32 <= n; d += 32) {
    __m256 a[4];
    for (int l = 0; l < 4; ++l) a[l] = _mm256_loadu_ps(acc + d + 8 * l);
    const float* vj = v + d;
    for (int j = 0; j < c; ++j, vj += n) {
      const __m256 pj = _mm256_set1_ps(p[j]);
      for (int l = 0; l < 4; ++l) a[l] = _mm256_fmadd_ps(pj, _mm256_loadu_ps(vj + 8 * l), a[l]);
    }
    for (int l = 0; l < 4; ++l) _mm256_storeu_ps(acc + d + 8 * l, a[l]);
  }
  for (; d < n; ++d) {
    float sum = acc[d];
    for (int j = 0; j < c; ++j) sum += p[j] * v[int64_t{j} * n + d];
    acc[d] = sum;
  }
}

// exp(x) for x <= 0, 8 lanes: x = n ln2 + r with |r| <= ln2/2, exp(r) by the degree-6
// polynomial of Cephes' expf (relative error ~2 ulp), times 2^n built in the exponent bits.
// x below -87.3 is clamped there (exp ~ 1e-38 instead of a denormal or 0: a softmax weight
// that small changes no sum it is added to).
inline __m256 ExpNonPositive(__m256 x) {
  x = _mm256_max_ps(x, _mm256_set1_ps(-87.3f));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

// s[j] = exp(s[j] - m) for j < c, where m >= every s[j]; returns the sum.
float ExpShiftedX86(float* s, int c, float m) {
  const __m256 vm = _mm256_set1_ps(m);
  __m256 sum = _mm256_setzero_ps();
  int j = 0;
  for (; j + 8 <= c; j += 8) {
    const __m256 e = ExpNonPositive(_mm256_sub_ps(_mm256_loadu_ps(s + j), vm));
    _mm256_storeu_ps(s + j, e);
    sum = _mm256_add_ps(sum, e);
  }
  float total = HorizontalSum(sum);
  for (; j < c; ++j) {
    s[j] = std::exp(s[j] - m);
    total += s[j];
  }
  return total;
}

// gate[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)), 8 lanes. With e = exp(-|g|)
// (the non-positive exponential above) silu is g / (1 + e) for g >= 0 and g e / (1 + e) for
// g < 0, so exp never overflows.
void SwiGluX86(float* gate, const float* up, int64_t n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i);
    const __m256 e = ExpNonPositive(_mm256_or_ps(g, sign));  // exp(-|g|)
    const __m256 neg = _mm256_cmp_ps(g, _mm256_setzero_ps(), _CMP_LT_OQ);
    const __m256 num = _mm256_blendv_ps(g, _mm256_mul_ps(g, e), neg);
    _mm256_storeu_ps(gate + i,
                     _mm256_mul_ps(_mm256_div_ps(num, _mm256_add_ps(one, e)),
                                   _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

KernelTable MakeX86Table() {
  KernelTable k = ScalarKernels();  // activation quantizers (and any type not overridden below)
  k.half_to_float = HalfRowToFloat;
  k.dot_rows = DotRowsX86;
  k.weighted_row_sum = WeightedRowSumX86;
  k.exp_shifted = ExpShiftedX86;
  k.swiglu = SwiGluX86;
  k.tile[static_cast<int>(GgmlType::F32)] = FloatTile<FloatW::kF32>;
  k.tile[static_cast<int>(GgmlType::F16)] = FloatTile<FloatW::kF16>;
  k.tile[static_cast<int>(GgmlType::BF16)] = FloatTile<FloatW::kBF16>;
  k.tile[static_cast<int>(GgmlType::Q4_0)] = LegacyTile<Legacy::kQ4_0>;
  k.tile[static_cast<int>(GgmlType::Q4_1)] = LegacyTile<Legacy::kQ4_1>;
  k.tile[static_cast<int>(GgmlType::Q5_0)] = LegacyTile<Legacy::kQ5_0>;
  k.tile[static_cast<int>(GgmlType::Q5_1)] = LegacyTile<Legacy::kQ5_1>;
  k.tile[static_cast<int>(GgmlType::Q8_0)] = LegacyTile<Legacy::kQ8_0>;
  k.tile[static_cast<int>(GgmlType::Q4_K)] = KTile<DotQ45K<false>>;
  k.tile[static_cast<int>(GgmlType::Q5_K)] = KTile<DotQ45K<true>>;
  k.tile[static_cast<int>(GgmlType::Q6_K)] = KTile<DotQ6K>;
  return k;
}
