// AVX2 + FMA + F16C + AVX-VNNI kernels. deps.cmake compiles this file (only) with those instruction sets; MatMul enters
// it only after GetCpuFeatures() confirmed them. Other targets build an empty table.
#include "engine/matmul_kernels.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__) && defined(__AVXVNNI__)
#include <immintrin.h>

#include <cmath>

namespace hotline::engine::matmul_internal {
namespace {
#define HOTLINE_X86_VNNI 1
#include "engine/matmul_x86_impl.h"
#undef HOTLINE_X86_VNNI
}  // namespace

const KernelTable* AvxVnniKernels() {
  static const KernelTable table = MakeX86Table();
  return &table;
}

}  // namespace hotline::engine::matmul_internal
#else
namespace hotline::engine::matmul_internal {
const KernelTable* AvxVnniKernels() { return nullptr; }
}  // namespace hotline::engine::matmul_internal
#endif
