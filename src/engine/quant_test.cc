#include "engine/quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "engine/ggml_types.h"

namespace hotline::engine {
namespace {

// ---- plain per-element reference decoders, written from the format description -----------

uint16_t Le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t Le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
int Nibble(const uint8_t* qs, int e /*0..31*/) {
  return e < 16 ? (qs[e] & 15) : (qs[e - 16] >> 4);
}
void Scale6(const uint8_t* s, int j, int* sc, int* mn) {
  if (j < 4) {
    *sc = s[j] & 63;
    *mn = s[j + 4] & 63;
  } else {
    *sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
    *mn = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Value of element e of the block at p.
double RefElement(GgmlType t, const uint8_t* p, int e) {
  switch (t) {
    case GgmlType::F32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case GgmlType::F16: return F16ToF32(Le16(p));
    case GgmlType::BF16: return BF16ToF32(Le16(p));
    case GgmlType::Q4_0: return F16ToF32(Le16(p)) * (Nibble(p + 2, e) - 8);
    case GgmlType::Q4_1: return F16ToF32(Le16(p)) * Nibble(p + 4, e) + F16ToF32(Le16(p + 2));
    case GgmlType::Q5_0: {
      const int q = Nibble(p + 6, e) | static_cast<int>(((Le32(p + 2) >> e) & 1) << 4);
      return F16ToF32(Le16(p)) * (q - 16);
    }
    case GgmlType::Q5_1: {
      const int q = Nibble(p + 8, e) | static_cast<int>(((Le32(p + 4) >> e) & 1) << 4);
      return F16ToF32(Le16(p)) * q + F16ToF32(Le16(p + 2));
    }
    case GgmlType::Q8_0: return F16ToF32(Le16(p)) * static_cast<int8_t>(p[2 + e]);
    case GgmlType::Q4_K:
    case GgmlType::Q5_K: {
      const bool five = t == GgmlType::Q5_K;
      const int sub = e / 32, chunk = e / 64, l = e % 32;
      const uint8_t* qs = p + (five ? 48 : 16);
      int q = (e % 64) < 32 ? (qs[32 * chunk + l] & 15) : (qs[32 * chunk + l] >> 4);
      if (five) q |= ((p[16 + l] >> sub) & 1) << 4;
      int sc, mn;
      Scale6(p + 4, sub, &sc, &mn);
      return static_cast<double>(F16ToF32(Le16(p))) * sc * q -
             static_cast<double>(F16ToF32(Le16(p + 2))) * mn;
    }
    case GgmlType::Q6_K: {
      const int half = e / 128, w = e % 128, quarter = w / 32, l = w % 32;
      const uint8_t* ql = p + 64 * half;
      const uint8_t* qh = p + 128 + 32 * half;
      const auto* scales = reinterpret_cast<const int8_t*>(p + 192);
      const uint8_t b = ql[l + 32 * (quarter & 1)];
      const int lo = quarter < 2 ? (b & 15) : (b >> 4);
      const int q = lo | (((qh[l] >> (2 * quarter)) & 3) << 4);
      return static_cast<double>(F16ToF32(Le16(p + 208))) * scales[8 * half + w / 16] * (q - 32);
    }
    default: return NAN;
  }
}

std::vector<float> RefDequantize(GgmlType t, const std::vector<uint8_t>& row, int64_t n) {
  const GgmlTypeInfo* info = GetTypeInfo(t);
  std::vector<float> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* block = row.data() + (i / info->block_elems) * info->block_bytes;
    out[static_cast<size_t>(i)] = static_cast<float>(
        RefElement(t, block + (info->block_elems == 1 ? 0 : 0), static_cast<int>(i % info->block_elems)));
  }
  return out;
}

// Random block bytes with finite, moderate half-float scales at the scale positions.
std::vector<uint8_t> RandomRow(GgmlType t, int64_t n, std::mt19937& rng) {
  const GgmlTypeInfo* info = GetTypeInfo(t);
  const int64_t nb = n / info->block_elems;
  std::vector<uint8_t> row(static_cast<size_t>(nb * info->block_bytes));
  for (auto& b : row) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> scale(-0.05f, 0.05f);
  auto put_half = [&](uint8_t* p) {
    const uint16_t h = F32ToF16(scale(rng));
    p[0] = static_cast<uint8_t>(h & 0xff);
    p[1] = static_cast<uint8_t>(h >> 8);
  };
  for (int64_t i = 0; i < nb; ++i) {
    uint8_t* p = row.data() + i * info->block_bytes;
    switch (t) {
      case GgmlType::F16:
      case GgmlType::Q4_0:
      case GgmlType::Q5_0:
      case GgmlType::Q8_0: put_half(p); break;
      case GgmlType::Q4_1:
      case GgmlType::Q5_1:
      case GgmlType::Q4_K:
      case GgmlType::Q5_K:
        put_half(p);
        put_half(p + 2);
        break;
      case GgmlType::Q6_K: put_half(p + 208); break;
      case GgmlType::F32: {
        const float f = scale(rng);
        std::memcpy(p, &f, 4);
        break;
      }
      case GgmlType::BF16: {
        const uint16_t h = F32ToBF16(scale(rng));
        std::memcpy(p, &h, 2);
        break;
      }
      default: break;
    }
  }
  return row;
}

const GgmlType kAllSupported[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0,
                                  GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                                  GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K};

TEST(GgmlTypes, TableMatchesSpec) {
  EXPECT_EQ(GetTypeInfo(2)->block_bytes, 18);
  EXPECT_EQ(GetTypeInfo(8)->block_bytes, 34);
  EXPECT_EQ(GetTypeInfo(12)->block_elems, 256);
  EXPECT_EQ(GetTypeInfo(12)->block_bytes, 144);
  EXPECT_EQ(GetTypeInfo(14)->block_bytes, 210);
  EXPECT_EQ(GetTypeInfo(30)->block_bytes, 2);
  EXPECT_EQ(GetTypeInfo(4), nullptr);  // removed Q4_2
  EXPECT_EQ(GetTypeInfo(1000), nullptr);
  EXPECT_FALSE(GetTypeInfo(11)->supported);  // Q3_K: known, refused
  EXPECT_EQ(*RowBytes(GgmlType::Q4_0, 4096), 4096 / 32 * 18);
  EXPECT_FALSE(RowBytes(GgmlType::Q4_K, 4000).ok());
  EXPECT_FALSE(RowBytes(GgmlType::F32, -1).ok());
  EXPECT_FALSE(RowBytes(GgmlType::Q8_0, INT64_MAX / 32 * 32).ok());  // bytes overflow
  EXPECT_EQ(*ParseTypeName("Q4_K"), GgmlType::Q4_K);
  EXPECT_FALSE(ParseTypeName("q9_9").ok());
}

TEST(GgmlTypes, HalfConversionRoundTripsEveryValue) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = F16ToF32(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(F16ToF32(F32ToF16(f))));
      continue;
    }
    ASSERT_EQ(F32ToF16(f), h) << "half 0x" << std::hex << h;
  }
  EXPECT_EQ(F16ToF32(0x3c00), 1.0f);
  EXPECT_EQ(F16ToF32(0xc000), -2.0f);
  EXPECT_EQ(F16ToF32(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(F16ToF32(0x7bff), 65504.0f);
  EXPECT_EQ(F32ToF16(65520.0f), 0x7c00);      // rounds to infinity
  EXPECT_EQ(F32ToF16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie to even
  EXPECT_EQ(F32ToF16(1e-10f), 0x0000);
}

TEST(GgmlTypes, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(F32ToBF16(1.0f), 0x3f80);
  EXPECT_EQ(BF16ToF32(0x3f80), 1.0f);
  float f;
  uint32_t u = 0x3f808000;  // exactly half-way: stays even
  std::memcpy(&f, &u, 4);
  EXPECT_EQ(F32ToBF16(f), 0x3f80);
  u = 0x3f818000;  // half-way above odd: rounds up
  std::memcpy(&f, &u, 4);
  EXPECT_EQ(F32ToBF16(f), 0x3f82);
  EXPECT_TRUE(std::isnan(BF16ToF32(F32ToBF16(NAN))));
}

TEST(Quant, DequantizeMatchesReference) {
  std::mt19937 rng(7);
  for (GgmlType t : kAllSupported) {
    const int64_t n = 512;
    const std::vector<uint8_t> row = RandomRow(t, n, rng);
    std::vector<float> got(n);
    DequantizeRow(t, row.data(), got.data(), n);
    const std::vector<float> want = RefDequantize(t, row, n);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-6 * (1 + std::fabs(want[i])))
          << TypeName(t) << " element " << i;
    }
  }
}

TEST(Quant, UnsupportedDequantizeFillsNaN) {
  std::vector<uint8_t> row(110);
  std::vector<float> out(256, 0.0f);
  DequantizeRow(GgmlType::Q3_K, row.data(), out.data(), 256);
  EXPECT_TRUE(std::isnan(out[0]));
  DequantizeRow(GgmlType::Q4_0, row.data(), out.data(), 31);  // not a whole block
  EXPECT_TRUE(std::isnan(out[0]));
}

struct Bound {
  GgmlType type;
  double max_rel_rms;  // RMS error / RMS of the data, Gaussian input
};

TEST(Quant, RoundTripErrorWithinBounds) {
  // Bounds: a uniform quantizer with 2^b levels over the block's range has an RMS error of about
  // step/sqrt(12); for Gaussian blocks the range is ~4.5 sigma for 32 values, wider for 256.
  const Bound bounds[] = {
      {GgmlType::F32, 0},       {GgmlType::F16, 5e-4},    {GgmlType::BF16, 3e-3},
      {GgmlType::Q8_0, 0.008},  {GgmlType::Q6_K, 0.025},  {GgmlType::Q5_0, 0.055},
      {GgmlType::Q5_1, 0.045},  {GgmlType::Q5_K, 0.05},   {GgmlType::Q4_0, 0.11},
      {GgmlType::Q4_1, 0.09},   {GgmlType::Q4_K, 0.10},
  };
  std::mt19937 rng(11);
  std::normal_distribution<float> gauss(0.0f, 0.02f);
  const int64_t n = 4096;
  std::vector<float> x(n), back(n);
  for (auto& v : x) v = gauss(rng);
  x[100] = 0.3f;  // an outlier, as real weights have
  for (const Bound& b : bounds) {
    std::vector<uint8_t> q(static_cast<size_t>(*RowBytes(b.type, n)));
    ASSERT_TRUE(QuantizeRow(b.type, x.data(), q.data(), n).ok()) << TypeName(b.type);
    DequantizeRow(b.type, q.data(), back.data(), n);
    double err = 0, ref = 0;
    for (int64_t i = 0; i < n; ++i) {
      err += (back[i] - x[i]) * static_cast<double>(back[i] - x[i]);
      ref += x[i] * static_cast<double>(x[i]);
    }
    const double rel = std::sqrt(err / ref);
    EXPECT_LE(rel, b.max_rel_rms) << TypeName(b.type);
    RecordProperty(TypeName(b.type), std::to_string(rel));
  }
}

TEST(Quant, ZeroAndNonFiniteInputsGiveFiniteBlocks) {
  const int64_t n = 256;
  std::vector<float> x(n, 0.0f), back(n);
  x[3] = NAN;
  x[7] = INFINITY;
  x[200] = 1.0f;
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                     GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K}) {
    std::vector<uint8_t> q(static_cast<size_t>(*RowBytes(t, n)));
    ASSERT_TRUE(QuantizeRow(t, x.data(), q.data(), n).ok());
    DequantizeRow(t, q.data(), back.data(), n);
    for (int64_t i = 0; i < n; ++i) ASSERT_TRUE(std::isfinite(back[i])) << TypeName(t) << " " << i;
    EXPECT_NEAR(back[3], 0.0f, 1e-6) << TypeName(t);
    EXPECT_NEAR(back[200], 1.0f, 0.1) << TypeName(t);
  }
}

TEST(Quant, RefusesBadRequests) {
  std::vector<float> x(64);
  std::vector<uint8_t> out(1024);
  EXPECT_EQ(QuantizeRow(GgmlType::Q3_K, x.data(), out.data(), 256).code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(QuantizeRow(GgmlType::Q4_0, x.data(), out.data(), 40).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hotline::engine
