#include "engine/matmul.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "engine/cpu_features.h"
#include "engine/matmul_kernels.h"
#include "engine/quant.h"

namespace hotline::engine {
namespace {

struct Matrix {
  GgmlType type;
  int64_t rows, cols;
  std::vector<uint8_t> bytes;
  std::vector<float> dequant;  // rows x cols, what the weights decode to
  WeightMatrix view() const { return {type, bytes.data(), rows, cols}; }
};

Matrix RandomMatrix(GgmlType t, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  Matrix m{t, rows, cols, {}, {}};
  const int64_t row_bytes = *RowBytes(t, cols);
  m.bytes.resize(static_cast<size_t>(rows * row_bytes));
  m.dequant.resize(static_cast<size_t>(rows * cols));
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    const float row_scale = 0.02f * (1.0f + static_cast<float>(r % 5));
    for (auto& v : row) v = gauss(rng) * row_scale;
    EXPECT_TRUE(QuantizeRow(t, row.data(), m.bytes.data() + r * row_bytes, cols).ok());
    DequantizeRow(t, m.bytes.data() + r * row_bytes, m.dequant.data() + r * cols, cols);
  }
  return m;
}

std::vector<float> RandomActivations(int n_tokens, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> gauss(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n_tokens * cols));
  for (auto& v : x) v = gauss(rng);
  return x;
}

// Exact product of the decoded weights with the float activations, in double.
std::vector<double> Reference(const Matrix& m, const std::vector<float>& x, int n_tokens) {
  std::vector<double> y(static_cast<size_t>(n_tokens * m.rows));
  for (int t = 0; t < n_tokens; ++t) {
    for (int64_t r = 0; r < m.rows; ++r) {
      double s = 0;
      for (int64_t c = 0; c < m.cols; ++c) {
        s += static_cast<double>(m.dequant[r * m.cols + c]) * x[t * m.cols + c];
      }
      y[t * m.rows + r] = s;
    }
  }
  return y;
}

std::vector<KernelIsa> AvailableIsas() {
  std::vector<KernelIsa> out = {KernelIsa::kScalar};
  const CpuFeatures& f = GetCpuFeatures();
  if (f.avx2 && f.fma && f.f16c) out.push_back(KernelIsa::kAvx2);
  if (f.avx2 && f.fma && f.f16c && f.avx_vnni) out.push_back(KernelIsa::kAvxVnni);
  if (f.avx2 && f.fma && f.f16c && f.avx512_vnni) out.push_back(KernelIsa::kAvx512);
  return out;
}

// Error budget of the 8-bit activation quantization: each activation is rounded to 1/254 of
// its block's largest magnitude (blocks of 32, or 256 for the K-quants, where the largest of 256
// Gaussian values sits near 3 sigma). That is a uniform error of ~0.4-0.8 % of sigma per value,
// which carries into each output as ~0.4-0.8 % of the outputs' RMS; we allow 1.5 % RMS and 6 %
// for the worst of a few thousand outputs. Float weights only see float rounding.
struct Tolerance {
  double rms, worst;
};
Tolerance ToleranceFor(GgmlType t) {
  switch (t) {
    case GgmlType::F32:
    case GgmlType::F16:
    case GgmlType::BF16:
      return {1e-6, 1e-5};
    default:
      return {0.015, 0.06};
  }
}

const GgmlType kTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q4_0,
                           GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q8_0,
                           GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K};

TEST(MatMul, EveryTypeAndPathMatchesFloatReference) {
  ComputePool pool(3);
  for (GgmlType t : kTypes) {
    const Matrix m = RandomMatrix(t, 37, 512, 1 + static_cast<uint32_t>(t));
    for (int n_tokens : {1, 3, 70}) {
      const std::vector<float> x = RandomActivations(n_tokens, m.cols, 99);
      const std::vector<double> ref = Reference(m, x, n_tokens);
      double rms = 0;
      for (double v : ref) rms += v * v;
      rms = std::sqrt(rms / static_cast<double>(ref.size()));
      for (KernelIsa isa : AvailableIsas()) {
        std::vector<float> y(ref.size(), -1.0f);
        MatMulWithIsa(m.view(), x.data(), n_tokens, y.data(), pool, isa);
        double worst = 0, err2 = 0;
        for (size_t i = 0; i < y.size(); ++i) {
          worst = std::max(worst, std::fabs(y[i] - ref[i]));
          err2 += (y[i] - ref[i]) * (y[i] - ref[i]);
        }
        const double rel_rms = std::sqrt(err2 / static_cast<double>(y.size())) / rms;
        EXPECT_LE(rel_rms, ToleranceFor(t).rms)
            << TypeName(t) << " " << KernelIsaName(isa) << " tokens=" << n_tokens;
        EXPECT_LE(worst / rms, ToleranceFor(t).worst)
            << TypeName(t) << " " << KernelIsaName(isa) << " tokens=" << n_tokens;
        if (isa == KernelIsa::kScalar && n_tokens == 70) {
          RecordProperty(TypeName(t), std::to_string(rel_rms) + " " + std::to_string(worst / rms));
        }
      }
    }
  }
}

TEST(MatMul, SimdPathsAgreeWithScalar) {
  // Same integer arithmetic on every path; only float summation order differs.
  ComputePool pool(2);
  for (GgmlType t : kTypes) {
    const Matrix m = RandomMatrix(t, 21, 1024, 50 + static_cast<uint32_t>(t));
    const int n_tokens = 5;
    const std::vector<float> x = RandomActivations(n_tokens, m.cols, 7);
    std::vector<float> want(static_cast<size_t>(n_tokens * m.rows));
    MatMulWithIsa(m.view(), x.data(), n_tokens, want.data(), pool, KernelIsa::kScalar);
    for (KernelIsa isa : AvailableIsas()) {
      std::vector<float> got(want.size());
      MatMulWithIsa(m.view(), x.data(), n_tokens, got.data(), pool, isa);
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_NEAR(got[i], want[i], 1e-4 * (1.0 + std::fabs(want[i])))
            << TypeName(t) << " " << KernelIsaName(isa) << " output " << i;
      }
    }
  }
}

TEST(MatMul, PackedWeightsMatchScalarOnRaggedShapes) {
  // Row counts below, at and off the 16-row packing groups; token counts that exercise the
  // 4-token tiles and every remainder; 1 and 3 threads (chunks start mid-matrix).
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0}) {
    for (int64_t rows : {int64_t{5}, int64_t{16}, int64_t{37}, int64_t{160}}) {
      Matrix m = RandomMatrix(t, rows, 288, 200 + static_cast<uint32_t>(rows));
      auto packed = PackWeights(m.view());
      ASSERT_TRUE(packed.ok()) << packed.status().message();
      EXPECT_EQ(packed->get() == nullptr, rows < kPackRows);
      EXPECT_EQ(PackedWeightBytes(m.view()),
                rows / kPackRows * (288 / 32) * (t == GgmlType::Q4_0 ? 288 : 544));
      WeightMatrix view = m.view();
      view.packed = packed->get();
      for (int n_tokens : {1, 2, 3, 4, 7, 12, 70}) {
        const std::vector<float> x = RandomActivations(n_tokens, m.cols, 11 + n_tokens);
        std::vector<float> want(static_cast<size_t>(n_tokens * rows));
        ComputePool one(1);
        MatMulWithIsa(m.view(), x.data(), n_tokens, want.data(), one, KernelIsa::kScalar);
        for (KernelIsa isa : AvailableIsas()) {
          for (int threads : {1, 3}) {
            ComputePool pool(threads);
            std::vector<float> got(want.size(), -1.0f);
            MatMulWithIsa(view, x.data(), n_tokens, got.data(), pool, isa);
            for (size_t i = 0; i < got.size(); ++i) {
              ASSERT_NEAR(got[i], want[i], 1e-4 * (1.0 + std::fabs(want[i])))
                  << TypeName(t) << " " << KernelIsaName(isa) << " rows=" << rows
                  << " tokens=" << n_tokens << " threads=" << threads << " output " << i;
            }
          }
        }
      }
    }
  }
}

TEST(MatMul, PackedLayoutOnlyForQ4_0AndQ8_0) {
  std::vector<uint8_t> data(64 * 256 * 2);
  EXPECT_EQ(PackedWeightBytes({GgmlType::Q4_K, data.data(), 64, 256}), 0);
  EXPECT_EQ(PackedWeightBytes({GgmlType::F16, data.data(), 64, 256}), 0);
  EXPECT_EQ(PackedWeightBytes({GgmlType::Q4_0, data.data(), 15, 256}), 0);
  auto none = PackWeights({GgmlType::F16, data.data(), 64, 256});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->get(), nullptr);
}

TEST(MatMul, SimdActivationQuantizerMatchesScalarBitForBit) {
  using matmul_internal::ActQ8;
  std::vector<const matmul_internal::KernelTable*> tables;
  for (KernelIsa isa : AvailableIsas()) {
    if (isa == KernelIsa::kAvx512) tables.push_back(matmul_internal::Avx512Kernels());
  }
  if (tables.empty()) GTEST_SKIP() << "no AVX-512 VNNI on this CPU";
  // Blocks: Gaussian, all zero, one NaN, one +inf, huge values, ties at .5 after scaling.
  std::vector<float> x = RandomActivations(1, 32 * 8, 3);
  for (int j = 32; j < 64; ++j) x[size_t(j)] = 0.0f;
  x[70] = std::nanf("");
  x[100] = INFINITY;
  for (int j = 128; j < 160; ++j) x[size_t(j)] = 3e38f * (j % 2 ? 1.0f : -1.0f);
  for (int j = 160; j < 192; ++j) x[size_t(j)] = static_cast<float>(j - 176) + 0.5f;
  x[191] = 127.0f;
  const int64_t nb = static_cast<int64_t>(x.size()) / 32;
  std::vector<ActQ8> want(static_cast<size_t>(nb)), got(static_cast<size_t>(nb));
  matmul_internal::ScalarKernels().quantize_q8(x.data(), want.data(), nb);
  for (const auto* table : tables) {
    table->quantize_q8(x.data(), got.data(), nb);
    for (int64_t i = 0; i < nb; ++i) {
      const ActQ8& w = want[size_t(i)];
      const ActQ8& g = got[size_t(i)];
      EXPECT_EQ(std::memcmp(w.qs, g.qs, sizeof(w.qs)), 0) << "block " << i;
      EXPECT_EQ(std::memcmp(w.neg8, g.neg8, sizeof(w.neg8)), 0) << "block " << i;
      EXPECT_TRUE(w.d == g.d || (std::isnan(w.d) && std::isnan(g.d))) << "block " << i;
      EXPECT_TRUE(w.s == g.s || (std::isnan(w.s) && std::isnan(g.s))) << "block " << i;
    }
  }
}

TEST(MatMul, ManyEqualsOneAtATime) {
  // Q/K/V-like shapes (ragged row counts), a packed matrix among plain ones, and a group with a
  // different activation format (falls back to one region per matrix).
  ComputePool pool(3);
  const Matrix a = RandomMatrix(GgmlType::Q4_0, 53, 256, 1);
  const Matrix b = RandomMatrix(GgmlType::Q8_0, 16, 256, 2);
  const Matrix c = RandomMatrix(GgmlType::Q4_0, 7, 256, 3);
  const Matrix k = RandomMatrix(GgmlType::Q4_K, 20, 256, 4);
  auto packed_a = PackWeights(a.view());
  ASSERT_TRUE(packed_a.ok());
  WeightMatrix va = a.view();
  va.packed = packed_a->get();
  const WeightMatrix vb = b.view(), vc = c.view(), vk = k.view();
  for (int n_tokens : {1, 9}) {
    const std::vector<float> x = RandomActivations(n_tokens, 256, 8);
    for (KernelIsa isa : AvailableIsas()) {
      for (const std::vector<const WeightMatrix*>& group :
           {std::vector<const WeightMatrix*>{&va, &vb, &vc},
            std::vector<const WeightMatrix*>{&va, &vk}}) {
        std::vector<std::vector<float>> want, got;
        std::vector<float*> ys;
        for (const WeightMatrix* w : group) {
          want.emplace_back(static_cast<size_t>(w->rows * n_tokens));
          got.emplace_back(static_cast<size_t>(w->rows * n_tokens), -1.0f);
          MatMulWithIsa(*w, x.data(), n_tokens, want.back().data(), pool, isa);
        }
        for (auto& g : got) ys.push_back(g.data());
        MatMulManyWithIsa(group, x.data(), n_tokens, ys, pool, isa);
        for (size_t m = 0; m < group.size(); ++m) {
          EXPECT_EQ(got[m], want[m])
              << KernelIsaName(isa) << " matrix " << m << " tokens=" << n_tokens;
        }
      }
    }
  }
}

TEST(MatMul, AttentionVectorStepsAgreeAcrossPaths) {
  const matmul_internal::KernelTable& ref = matmul_internal::ScalarKernels();
  for (KernelIsa isa : AvailableIsas()) {
    ASSERT_TRUE(SetKernelIsa(isa).ok());
    for (int n : {64, 72, 5}) {  // whole vectors, a tail, tail only
      const int c = 13;
      const std::vector<float> q = RandomActivations(1, n, 1);
      const std::vector<float> kv = RandomActivations(c, n, 2);
      std::vector<float> s_want(c), s_got(c);
      ref.dot_rows(q.data(), kv.data(), c, n, 0.125f, s_want.data());
      DotRows(q.data(), kv.data(), c, n, 0.125f, s_got.data());
      for (int j = 0; j < c; ++j) {
        EXPECT_NEAR(s_got[size_t(j)], s_want[size_t(j)], 1e-5 * (1 + std::fabs(s_want[size_t(j)])))
            << KernelIsaName(isa) << " n=" << n;
      }
      std::vector<float> acc_want(q), acc_got(q);
      ref.weighted_row_sum(s_want.data(), kv.data(), c, n, acc_want.data());
      WeightedRowSum(s_want.data(), kv.data(), c, n, acc_got.data());
      for (int d = 0; d < n; ++d) {
        EXPECT_NEAR(acc_got[size_t(d)], acc_want[size_t(d)],
                    1e-5 * (1 + std::fabs(acc_want[size_t(d)])))
            << KernelIsaName(isa) << " n=" << n;
      }
      // Softmax weights: scores up to 30 below the maximum (and one far below: ~0).
      std::vector<float> e_want(kv.begin(), kv.begin() + c), e_got(e_want);
      e_want[3] = e_got[3] = -200.0f;
      for (int j = 0; j < c; ++j) e_want[size_t(j)] = e_got[size_t(j)] = e_want[size_t(j)] * 10.0f;
      const float m = *std::max_element(e_want.begin(), e_want.end());
      const float sum_want = ref.exp_shifted(e_want.data(), c, m);
      const float sum_got = ExpShifted(e_got.data(), c, m);
      EXPECT_NEAR(sum_got, sum_want, 1e-6 * sum_want) << KernelIsaName(isa);
      for (int j = 0; j < c; ++j) {
        EXPECT_NEAR(e_got[size_t(j)], e_want[size_t(j)], 1e-6 * e_want[size_t(j)] + 1e-37f)
            << KernelIsaName(isa) << " j=" << j;
      }
      std::vector<uint16_t> h(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) h[size_t(i)] = static_cast<uint16_t>(0x3c00 + 37 * i);
      std::vector<float> f_want(h.size()), f_got(h.size());
      ref.half_to_float(h.data(), f_want.data(), n);
      HalfRowToFloat(h.data(), f_got.data(), n);
      EXPECT_EQ(f_got, f_want) << KernelIsaName(isa);
    }
  }
  ASSERT_TRUE(SetKernelIsa(BestKernelIsa()).ok());
}

TEST(MatMul, SwiGluAgreesAcrossPaths) {
  // Gates across the whole useful range, both signs, far tails (exp clamped or overflowing in a
  // naive form), and lengths with and without a vector tail.
  const matmul_internal::KernelTable& ref = matmul_internal::ScalarKernels();
  for (KernelIsa isa : AvailableIsas()) {
    ASSERT_TRUE(SetKernelIsa(isa).ok());
    for (int n : {4864, 29, 3}) {
      std::vector<float> gate = RandomActivations(1, n, 7), up = RandomActivations(1, n, 8);
      for (int i = 0; i < n; ++i) gate[size_t(i)] *= 8.0f;
      gate[0] = -120.0f;
      gate[1] = 95.0f;
      if (n > 2) gate[2] = 0.0f;
      std::vector<float> want(gate), got(gate);
      ref.swiglu(want.data(), up.data(), n);
      SwiGlu(got.data(), up.data(), n);
      for (int i = 0; i < n; ++i) {
        ASSERT_TRUE(std::isfinite(got[size_t(i)])) << KernelIsaName(isa) << " i=" << i;
        EXPECT_NEAR(got[size_t(i)], want[size_t(i)], 2e-6 * std::fabs(want[size_t(i)]) + 1e-30f)
            << KernelIsaName(isa) << " n=" << n << " i=" << i << " gate " << gate[size_t(i)];
      }
    }
  }
  ASSERT_TRUE(SetKernelIsa(BestKernelIsa()).ok());
}

TEST(MatMul, ThreadCountDoesNotChangeResult) {
  const Matrix m = RandomMatrix(GgmlType::Q4_0, 300, 256, 5);
  const std::vector<float> x = RandomActivations(4, m.cols, 6);
  std::vector<float> y1(4 * 300), y4(4 * 300);
  ComputePool one(1), four(4);
  MatMul(m.view(), x.data(), 4, y1.data(), one);
  MatMul(m.view(), x.data(), 4, y4.data(), four);
  EXPECT_EQ(y1, y4);  // rows are independent: bit-identical
}

TEST(MatMul, RejectsBadMatrices) {
  std::vector<uint8_t> data(1024);
  EXPECT_TRUE(CheckWeightMatrix({GgmlType::Q4_0, data.data(), 2, 64}).ok());
  EXPECT_FALSE(CheckWeightMatrix({GgmlType::Q4_0, data.data(), 2, 48}).ok());   // partial block
  EXPECT_FALSE(CheckWeightMatrix({GgmlType::Q3_K, data.data(), 1, 256}).ok());  // unsupported
  EXPECT_FALSE(CheckWeightMatrix({GgmlType::F32, nullptr, 1, 8}).ok());
  EXPECT_FALSE(CheckWeightMatrix({GgmlType::F32, data.data(), 0, 8}).ok());
  EXPECT_FALSE(CheckWeightMatrix({static_cast<GgmlType>(77), data.data(), 1, 8}).ok());
  // MatMul on a bad matrix writes NaN instead of reading out of bounds.
  ComputePool pool(1);
  std::vector<float> x(48, 1.0f), y(2, 0.0f);
  MatMul({GgmlType::Q4_0, data.data(), 2, 48}, x.data(), 1, y.data(), pool);
  EXPECT_TRUE(std::isnan(y[0]));
}

TEST(MatMul, IsaSelection) {
  EXPECT_EQ(*ParseKernelIsa("scalar"), KernelIsa::kScalar);
  EXPECT_FALSE(ParseKernelIsa("sse9").ok());
  EXPECT_TRUE(SetKernelIsa(KernelIsa::kScalar).ok());
  EXPECT_EQ(ActiveKernelIsa(), KernelIsa::kScalar);
  EXPECT_TRUE(SetKernelIsa(BestKernelIsa()).ok());
  if (!GetCpuFeatures().avx_vnni) {
    EXPECT_FALSE(SetKernelIsa(KernelIsa::kAvxVnni).ok());
  }
  EXPECT_EQ(*ParseKernelIsa("avx512"), KernelIsa::kAvx512);
  EXPECT_EQ(SetKernelIsa(KernelIsa::kAvx512).ok(), GetCpuFeatures().avx512_vnni);
  EXPECT_EQ(KernelIsaUsesPackedWeights(KernelIsa::kAvx512), GetCpuFeatures().avx512_vnni);
  EXPECT_FALSE(KernelIsaUsesPackedWeights(KernelIsa::kScalar));
  EXPECT_TRUE(SetKernelIsa(BestKernelIsa()).ok());
}

}  // namespace
}  // namespace hotline::engine
