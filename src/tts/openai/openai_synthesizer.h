// The openai backend: POST {url}/audio/speech to an OpenAI-compatible server with
// {"model","input","voice","response_format"} and stream the audio back as it arrives.
//
// "pcm" responses are raw 16-bit little-endian mono at pcm_sample_rate_hz, handed over chunk by
// chunk as the HTTP body streams in (lowest latency). "wav" responses are parsed incrementally:
// the header must describe 16-bit PCM mono at pcm_sample_rate_hz (a streaming server may leave
// the data size open); samples then stream like pcm.
//
// Bounds: the HTTP client's timeouts, max_audio_bytes for the body, 64 KiB for a WAV header; a
// non-200 answer becomes kUnavailable (5xx, 429) or kInvalidArgument (other 4xx) carrying the
// start of the server's error body.
// Threads: blocks the calling thread; an instance holds only config and may be reused.
#pragma once

#include <memory>

#include "tts/synthesizer.h"

namespace hotline::tts {

// REQUIRES: config.Validate() is OK. Does not contact the server.
Result<std::unique_ptr<Synthesizer>> CreateOpenAiSynthesizer(const OpenAiTtsConfig& config,
                                                             int max_text_bytes);

}  // namespace hotline::tts
