// WAV files (audio/wav.h): ParseWav, which every recording Hotline reads goes through (`hotline
// call`, `audio convert|info`, `asr transcribe`), and headerless PCM16. Input: a file image.
// Properties: the decoded audio has the frames the header promised, at most one sample per input
// byte, at a rate within range, and survives a PCM16 WAV round trip unchanged.
#include <cstdint>
#include <span>

#include "audio/wav.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hotline::audio;
  const std::span<const uint8_t> bytes(data, size);

  if (auto wav = ParseWav(bytes); wav.ok()) {
    const AudioBuffer& audio = wav->audio;
    HOTLINE_FUZZ_CHECK(static_cast<int64_t>(audio.samples.size()) == wav->format.frames);
    HOTLINE_FUZZ_CHECK(audio.samples.size() <= size);
    HOTLINE_FUZZ_CHECK(audio.sample_rate_hz >= kMinSampleRateHz &&
                       audio.sample_rate_hz <= kMaxSampleRateHz);
    HOTLINE_FUZZ_CHECK(wav->format.channels >= 1);
    auto encoded = EncodeWav(AudioView{audio.samples, audio.sample_rate_hz}, Codec::kPcm16);
    HOTLINE_FUZZ_CHECK(encoded.ok());
    auto again = ParseWav(*encoded);
    HOTLINE_FUZZ_CHECK(again.ok());
    HOTLINE_FUZZ_CHECK(again->audio.samples == audio.samples);
    HOTLINE_FUZZ_CHECK(again->audio.sample_rate_hz == audio.sample_rate_hz);
  }

  const int channels = size > 0 ? 1 + data[0] % 3 : 1;
  if (auto raw = ParseRawPcm16(bytes, 8000, channels); raw.ok()) {
    HOTLINE_FUZZ_CHECK(raw->audio.samples.size() * 2 * static_cast<size_t>(channels) == size);
  }
  return 0;
}
