# Per-file instruction-set flags of the engine's kernels. The library as a whole targets baseline
# x86-64 (it must run on any x86-64 CPU); only the kernel files below are compiled for newer
# instruction sets, and MatMul enters them only after runtime CPU detection (cpu_features.h).
if(CMAKE_SYSTEM_PROCESSOR MATCHES "^(x86_64|AMD64|amd64)$")
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/matmul_avx2.cc
    PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/matmul_avxvnni.cc
    PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;-mavxvnni")
  set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/matmul_avx512.cc
    PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;-mavx512f;-mavx512bw;-mavx512vl;-mavx512vnni")
endif()
