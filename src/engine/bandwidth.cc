#include "engine/bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace hotline::engine {
namespace {

// Sums the buffer with wide loads and four independent accumulators, so the loop is bound by
// memory, not by the adds. The result is returned so the reads cannot be optimized away.
uint64_t ReadSum(const uint8_t* p, size_t bytes) {
#if defined(__SSE2__)
  __m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    a0 = _mm_add_epi64(a0, _mm_load_si128(reinterpret_cast<const __m128i*>(p + i)));
    a1 = _mm_add_epi64(a1, _mm_load_si128(reinterpret_cast<const __m128i*>(p + i + 16)));
    a2 = _mm_add_epi64(a2, _mm_load_si128(reinterpret_cast<const __m128i*>(p + i + 32)));
    a3 = _mm_add_epi64(a3, _mm_load_si128(reinterpret_cast<const __m128i*>(p + i + 48)));
  }
  const __m128i s = _mm_add_epi64(_mm_add_epi64(a0, a1), _mm_add_epi64(a2, a3));
  uint64_t lanes[2];
  std::memcpy(lanes, &s, sizeof(lanes));
  return lanes[0] + lanes[1];
#else
  uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (size_t i = 0; i + 32 <= bytes; i += 32) {
    uint64_t v[4];
    std::memcpy(v, p + i, 32);
    s0 += v[0];
    s1 += v[1];
    s2 += v[2];
    s3 += v[3];
  }
  return s0 + s1 + s2 + s3;
#endif
}

struct FreeDeleter {
  void operator()(uint8_t* p) const { std::free(p); }
};

}  // namespace

Status BandwidthConfig::Validate() const {
  if (buffer_bytes < (size_t{1} << 20) || buffer_bytes > (size_t{64} << 30)) {
    return InvalidArgumentError("buffer_bytes must be in [1 MiB, 64 GiB], got " +
                                std::to_string(buffer_bytes));
  }
  if (passes < 1 || passes > 1000) {
    return InvalidArgumentError("passes must be in [1, 1000], got " + std::to_string(passes));
  }
  return Status::Ok();
}

Result<BandwidthResult> MeasureReadBandwidth(ComputePool& pool, const BandwidthConfig& config) {
  RETURN_IF_ERROR(config.Validate());
  const size_t bytes = config.buffer_bytes / 4096 * 4096;
  std::unique_ptr<uint8_t, FreeDeleter> buf(static_cast<uint8_t*>(std::aligned_alloc(4096, bytes)));
  if (!buf) {
    return ResourceExhaustedError("cannot allocate " + std::to_string(bytes >> 20) +
                                  " MiB for the bandwidth measurement; lower buffer_bytes");
  }
  const int threads = pool.num_threads();
  // Each thread writes (faults in) its own share first, like the mmap'ed weights that are
  // resident after the first pass.
  const size_t share = bytes / static_cast<size_t>(threads) / 64 * 64;
  pool.Run([&](int t, int) {
    std::memset(buf.get() + share * static_cast<size_t>(t), t + 1, share);
  });
  std::vector<uint64_t> sinks(static_cast<size_t>(threads) * 8);  // one cache line per thread
  std::vector<double> gbps;
  for (int pass = 0; pass < config.passes; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    pool.Run([&](int t, int) {
      sinks[static_cast<size_t>(t) * 8] += ReadSum(buf.get() + share * static_cast<size_t>(t), share);
    });
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    gbps.push_back(static_cast<double>(share) * threads / s / 1e9);
  }
  uint64_t check = 0;
  for (uint64_t v : sinks) check += v;
  if (check == 0) return InternalError("bandwidth buffer read back as zeros");
  std::sort(gbps.begin(), gbps.end());
  BandwidthResult r;
  r.best_gbps = gbps.back();
  r.median_gbps = gbps[gbps.size() / 2];
  r.threads = threads;
  return r;
}

}  // namespace hotline::engine
