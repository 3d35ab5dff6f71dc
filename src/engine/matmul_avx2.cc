// AVX2 + FMA + F16C kernels (compiled with those flags; entered only after runtime detection).
#include "engine/matmul_kernels.h"

namespace hotline::engine::matmul_internal {
const KernelTable* Avx2Kernels() { return nullptr; }
const KernelTable* AvxVnniKernels() { return nullptr; }
}  // namespace hotline::engine::matmul_internal
