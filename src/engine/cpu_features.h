// Runtime CPU feature detection for choosing kernel code paths.
//
// The library is compiled for baseline x86-64 except for the files that hold AVX2/AVX-VNNI
// kernels (see deps.cmake); those are only entered when the features below say the CPU has them.
// Thread-safety: GetCpuFeatures() computes once and returns a shared constant.
#pragma once

namespace hotline::engine {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx_vnni = false;  // 256-bit VPDPBUSD (Zen 4, Alder Lake and later)
  // AVX-512 F + BW + VL + VNNI with the OS saving the ZMM state (Ice Lake, Sapphire Rapids,
  // Zen 4 and later): the 512-bit kernels need all of these.
  bool avx512_vnni = false;
};

const CpuFeatures& GetCpuFeatures();

}  // namespace hotline::engine
