#include "train/kernels.h"

#include <algorithm>
#include <cstring>

namespace hotline::train {

float Dot(const float* a, const float* b, int n) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  }
  for (; i < n; ++i) acc[i & 7] += a[i] * b[i];
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

void Axpy(float a, const float* x, float* y, int n) {
  for (int i = 0; i < n; ++i) y[i] += a * x[i];
}

namespace {
// Rows of W kept hot in cache while a block of X rows streams past them.
constexpr int kOutBlock = 32;
constexpr int kRowBlock = 16;
}  // namespace

void LinearForward(const float* X, const float* W, float* Y, int N, int in, int out,
                   engine::ComputePool& pool) {
  const int64_t n_blocks = (N + kRowBlock - 1) / kRowBlock;
  pool.ParallelFor(n_blocks, 1, [&](int64_t b0, int64_t b1, int) {
    for (int64_t b = b0; b < b1; ++b) {
      const int r0 = static_cast<int>(b) * kRowBlock;
      const int r1 = std::min(N, r0 + kRowBlock);
      for (int o0 = 0; o0 < out; o0 += kOutBlock) {
        const int o1 = std::min(out, o0 + kOutBlock);
        for (int r = r0; r < r1; ++r) {
          const float* x = X + int64_t{r} * in;
          float* y = Y + int64_t{r} * out;
          for (int o = o0; o < o1; ++o) y[o] = Dot(x, W + int64_t{o} * in, in);
        }
      }
    }
  });
}

void LinearBackwardInput(const float* dY, const float* W, float* dX, int N, int in, int out,
                         bool accumulate, engine::ComputePool& pool) {
  const int64_t n_blocks = (N + kRowBlock - 1) / kRowBlock;
  pool.ParallelFor(n_blocks, 1, [&](int64_t b0, int64_t b1, int) {
    for (int64_t b = b0; b < b1; ++b) {
      const int r0 = static_cast<int>(b) * kRowBlock;
      const int r1 = std::min(N, r0 + kRowBlock);
      if (!accumulate) {
        std::memset(dX + int64_t{r0} * in, 0, sizeof(float) * size_t(r1 - r0) * size_t(in));
      }
      for (int o0 = 0; o0 < out; o0 += kOutBlock) {
        const int o1 = std::min(out, o0 + kOutBlock);
        for (int r = r0; r < r1; ++r) {
          const float* dy = dY + int64_t{r} * out;
          float* dx = dX + int64_t{r} * in;
          for (int o = o0; o < o1; ++o) Axpy(dy[o], W + int64_t{o} * in, dx, in);
        }
      }
    }
  });
}

void LinearBackwardWeight(const float* dY, const float* X, float* dW, int N, int in, int out,
                          engine::ComputePool& pool) {
  constexpr int kOut = 8;
  constexpr int kRows = 64;
  const int64_t o_blocks = (out + kOut - 1) / kOut;
  pool.ParallelFor(o_blocks, 1, [&](int64_t b0, int64_t b1, int) {
    for (int64_t b = b0; b < b1; ++b) {
      const int o0 = static_cast<int>(b) * kOut;
      const int o1 = std::min(out, o0 + kOut);
      for (int r0 = 0; r0 < N; r0 += kRows) {
        const int r1 = std::min(N, r0 + kRows);
        for (int o = o0; o < o1; ++o) {
          float* dw = dW + int64_t{o} * in;
          for (int r = r0; r < r1; ++r) {
            const float g = dY[int64_t{r} * out + o];
            if (g != 0.0f) Axpy(g, X + int64_t{r} * in, dw, in);
          }
        }
      }
    }
  });
}

}  // namespace hotline::train
