// ChunkEmitter: regroups the pieces a backend produces (whatever size its engine writes) into
// chunks of a fixed duration, checks the cancel token before handing each one over, and
// remembers the first error so the backend can stop its engine.
//
// Threads: used by one synthesis at a time on the synthesizing thread. Allocates its buffer once.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "tts/synthesizer.h"

namespace hotline::tts {

class ChunkEmitter {
 public:
  ChunkEmitter(size_t chunk_samples, const AudioChunkCallback& on_chunk, const CancelToken* cancel);

  // Appends samples and delivers every full chunk. After a non-OK return (kCancelled or the
  // callback's error), further calls return the same status and deliver nothing.
  Status Add(std::span<const int16_t> samples);
  // Delivers what is left (a final partial chunk).
  Status Finish();

  const Status& status() const { return status_; }
  int64_t delivered_samples() const { return delivered_; }
  int chunks() const { return chunks_; }

 private:
  Status Deliver(std::span<const int16_t> samples);

  size_t chunk_samples_;
  const AudioChunkCallback& on_chunk_;
  const CancelToken* cancel_;
  std::vector<int16_t> pending_;
  Status status_;
  int64_t delivered_ = 0;
  int chunks_ = 0;
};

}  // namespace hotline::tts
