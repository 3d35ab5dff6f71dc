#include "engine/cpu_features.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace hotline::engine {
namespace {

CpuFeatures Detect() {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  // F16C and AVX-VNNI are read from CPUID directly (not every compiler's builtin knows them).
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d)) f.f16c = (c & (1u << 29)) != 0;
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx_vnni = (a & (1u << 4)) != 0;
  // The OS must save the YMM state (OSXSAVE + XCR0 bits 1,2); __builtin_cpu_supports("avx2")
  // already requires that, and the other AVX-class features are meaningless without it.
  if (!f.avx2) f.fma = f.f16c = f.avx_vnni = false;
#endif
  return f;
}

}  // namespace

const CpuFeatures& GetCpuFeatures() {
  static const CpuFeatures features = Detect();
  return features;
}

}  // namespace hotline::engine
