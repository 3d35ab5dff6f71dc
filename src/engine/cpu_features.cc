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
  // AVX-512: CPUID.7.0 EBX bits 16 (F), 30 (BW), 31 (VL), ECX bit 11 (VNNI); the OS must save
  // the opmask and ZMM registers (XCR0 bits 5-7) besides the YMM state (bits 1-2).
  if (f.avx2 && __get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    const bool cpu = (b & (1u << 16)) && (b & (1u << 30)) && (b & (1u << 31)) && (c & (1u << 11));
    unsigned xcr0_lo = 0, xcr0_hi = 0;
    if (cpu) __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    f.avx512_vnni = cpu && (xcr0_lo & 0xE6u) == 0xE6u;
  }
#endif
  return f;
}

}  // namespace

const CpuFeatures& GetCpuFeatures() {
  static const CpuFeatures features = Detect();
  return features;
}

}  // namespace hotline::engine
