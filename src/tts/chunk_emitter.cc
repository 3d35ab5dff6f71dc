#include "tts/chunk_emitter.h"

#include <algorithm>

namespace hotline::tts {

ChunkEmitter::ChunkEmitter(size_t chunk_samples, const AudioChunkCallback& on_chunk,
                           const CancelToken* cancel)
    : chunk_samples_(std::max<size_t>(1, chunk_samples)), on_chunk_(on_chunk), cancel_(cancel) {
  pending_.reserve(chunk_samples_);
}

Status ChunkEmitter::Deliver(std::span<const int16_t> samples) {
  if (!status_.ok()) return status_;
  if (IsCancelled(cancel_)) {
    status_ = CancelledError("speech synthesis cancelled");
    return status_;
  }
  if (on_chunk_) status_ = on_chunk_(samples);
  delivered_ += static_cast<int64_t>(samples.size());
  ++chunks_;
  return status_;
}

Status ChunkEmitter::Add(std::span<const int16_t> samples) {
  if (!status_.ok()) return status_;
  while (!samples.empty()) {
    if (pending_.empty() && samples.size() >= chunk_samples_) {
      // Whole chunks straight from the engine's buffer, no copy.
      RETURN_IF_ERROR(Deliver(samples.first(chunk_samples_)));
      samples = samples.subspan(chunk_samples_);
      continue;
    }
    size_t take = std::min(chunk_samples_ - pending_.size(), samples.size());
    pending_.insert(pending_.end(), samples.begin(), samples.begin() + static_cast<long>(take));
    samples = samples.subspan(take);
    if (pending_.size() == chunk_samples_) {
      Status s = Deliver(pending_);
      pending_.clear();
      RETURN_IF_ERROR(s);
    }
  }
  // A cancel raised while the engine works is noticed at the next piece even when that piece
  // does not complete a chunk, so the engine stops promptly.
  if (IsCancelled(cancel_)) status_ = CancelledError("speech synthesis cancelled");
  return status_;
}

Status ChunkEmitter::Finish() {
  if (!status_.ok()) return status_;
  if (!pending_.empty()) {
    Status s = Deliver(pending_);
    pending_.clear();
    return s;
  }
  if (IsCancelled(cancel_)) status_ = CancelledError("speech synthesis cancelled");
  return status_;
}

}  // namespace hotline::tts
