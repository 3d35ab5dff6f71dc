// Cuts a stream of PCM of any chunk size into fixed frames (20 ms by default).
//
// Transports deliver audio in whatever sizes the network gives (Twilio: 20 ms, AudioSocket: 20 ms
// or more, a browser: 40-100 ms, a WAV file: everything at once); VAD and ASR want exact frames.
// Push() hands out every complete frame to a callback and keeps the remainder for the next call.
// Frames that lie wholly inside the pushed span are passed as views into it (no copy); a frame
// that straddles two pushes is assembled in an internal buffer sized once at Create().
//
// Thread-safety: one chunker per stream, one thread at a time. Push() and Flush() never allocate.
// The AudioView given to the callback is valid only during the callback.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "audio/pcm.h"
#include "common/status.h"

namespace hotline::audio {

class FrameChunker {
 public:
  // Errors when the rate is out of range or frame_ms is outside [1, 1000].
  static Result<FrameChunker> Create(int sample_rate_hz, int frame_ms = kFrameMs);

  int sample_rate_hz() const { return sample_rate_hz_; }
  size_t frame_samples() const { return buffer_.size(); }
  // Samples held back, waiting for the rest of their frame (< frame_samples()).
  size_t pending() const { return filled_; }

  // Calls on_frame(AudioView) for each complete frame, in order.
  template <typename F>
  void Push(std::span<const int16_t> in, F&& on_frame) {
    const size_t frame = buffer_.size();
    if (filled_ > 0) {
      const size_t take = std::min(frame - filled_, in.size());
      std::copy_n(in.begin(), take, buffer_.begin() + static_cast<ptrdiff_t>(filled_));
      filled_ += take;
      in = in.subspan(take);
      if (filled_ < frame) return;
      filled_ = 0;
      on_frame(AudioView(buffer_, sample_rate_hz_));
    }
    while (in.size() >= frame) {
      on_frame(AudioView(in.first(frame), sample_rate_hz_));
      in = in.subspan(frame);
    }
    std::copy(in.begin(), in.end(), buffer_.begin());
    filled_ = in.size();
  }

  // End of stream: if samples are pending, pads them with silence to a whole frame and passes
  // it to on_frame. Returns whether a frame was emitted.
  template <typename F>
  bool Flush(F&& on_frame) {
    if (filled_ == 0) return false;
    std::fill(buffer_.begin() + static_cast<ptrdiff_t>(filled_), buffer_.end(), int16_t{0});
    filled_ = 0;
    on_frame(AudioView(buffer_, sample_rate_hz_));
    return true;
  }

  // Drops pending samples (e.g. on barge-in or a new stream).
  void Reset() { filled_ = 0; }

 private:
  FrameChunker(int rate_hz, size_t frame_samples) : sample_rate_hz_(rate_hz), buffer_(frame_samples) {}

  int sample_rate_hz_;
  std::vector<int16_t> buffer_;
  size_t filled_ = 0;
};

}  // namespace hotline::audio
