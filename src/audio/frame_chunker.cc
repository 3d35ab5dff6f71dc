#include "audio/frame_chunker.h"

#include <string>

namespace hotline::audio {

Result<FrameChunker> FrameChunker::Create(int sample_rate_hz, int frame_ms) {
  RETURN_IF_ERROR(CheckSampleRate(sample_rate_hz).WithContext("frame chunker"));
  if (frame_ms < 1 || frame_ms > 1000) {
    return InvalidArgumentError("frame chunker: frame_ms must be in [1, 1000], got " +
                                std::to_string(frame_ms));
  }
  return FrameChunker(sample_rate_hz, SamplesForMs(sample_rate_hz, frame_ms));
}

}  // namespace hotline::audio
