// Memory read bandwidth of this machine, measured the way a decode step uses memory: every
// thread of a ComputePool streams its share of a buffer far larger than the caches.
//
// Used by `hotline engine bench` (decode_bandwidth_fraction = weight bytes streamed per second /
// this figure) and the kernel benchmarks. The figure depends on what else runs on the machine:
// measure in the same run as the thing you compare it with.
//
// Thread-safety: runs jobs on `pool` (see ComputePool); blocking; allocates `buffer_bytes`.
#pragma once

#include <cstddef>

#include "common/status.h"
#include "engine/compute_pool.h"

namespace hotline::engine {

struct BandwidthConfig {
  // Buffer streamed per pass. Must dwarf the last-level cache (tens of MB on servers), or the
  // figure measures the cache; larger costs memory and time.
  size_t buffer_bytes = size_t{512} << 20;
  // Passes over the buffer; the best is reported (least disturbed by other processes).
  int passes = 5;

  template <class V>
  void Visit(V& v) {
    v.Field("buffer_bytes", buffer_bytes, "Bytes streamed per pass (>> last-level cache)");
    v.Field("passes", passes, "Passes over the buffer; the best one is reported");
  }
  Status Validate() const;
};

struct BandwidthResult {
  double best_gbps = 0;    // 1e9 bytes per second, best pass
  double median_gbps = 0;  // median pass
  int threads = 0;
};

// Reads the buffer with all threads of `pool`. Errors: invalid config, allocation failure.
Result<BandwidthResult> MeasureReadBandwidth(ComputePool& pool, const BandwidthConfig& config = {});

}  // namespace hotline::engine
