// Dense fp32 kernels of the trainer: the three products of a linear layer y = W x over a batch of
// rows, split over a ComputePool so that each output element is owned by one thread and summed
// in a fixed order (bit-identical results for any thread count).
//
// Shapes: X is N x in, W is out x in (row-major, as GGUF stores it), Y is N x out.
#pragma once

#include <cstdint>

#include "engine/compute_pool.h"

namespace hotline::train {

// Y = X W^T (overwrites Y).
void LinearForward(const float* X, const float* W, float* Y, int N, int in, int out,
                   engine::ComputePool& pool);
// dX (+)= dY W. `accumulate` adds to dX instead of overwriting it.
void LinearBackwardInput(const float* dY, const float* W, float* dX, int N, int in, int out,
                         bool accumulate, engine::ComputePool& pool);
// dW += dY^T X.
void LinearBackwardWeight(const float* dY, const float* X, float* dW, int N, int in, int out,
                          engine::ComputePool& pool);

// Dot product with eight partial sums (vectorizable without reassociating the sum).
float Dot(const float* a, const float* b, int n);
// y += a * x.
void Axpy(float a, const float* x, float* y, int n);

}  // namespace hotline::train
