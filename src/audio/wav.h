// WAV files (RIFF/WAVE) and raw PCM: reading any telephony or media recording into mono PCM16,
// and writing PCM16, μ-law or A-law WAV.
//
// Reading accepts format tags 1 (integer PCM, 8/16/24/32 bit), 3 (IEEE float, 32 bit), 6 (A-law),
// 7 (μ-law) and WAVE_FORMAT_EXTENSIBLE wrapping any of those; any number of channels up to
// WavConfig::max_channels, mixed down to mono by averaging; any rate within
// [kMinSampleRateHz, kMaxSampleRateHz]. Other chunks (LIST, fact, cue, ...) are skipped.
//
// The parser works on a byte span and trusts nothing in it: every declared size is checked
// against the bytes actually present before it is used, nothing is allocated from a declared
// size (output size is bounded by the input size), and every defect (truncated RIFF, a chunk
// running past its parent, zero channels, absurd rates, sizes that are not whole sample frames,
// missing 'fmt ' or 'data' chunks, unsupported formats) is a Status whose message names it.
// It is safe to feed arbitrary bytes (fuzzing).
//
// Thread-safety: pure functions; call from any thread. File functions block on disk I/O.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "audio/codec.h"
#include "audio/pcm.h"
#include "common/status.h"

namespace hotline::audio {

// What a WAV file's samples are written as.
enum class SampleFormat : uint8_t { kPcm8, kPcm16, kPcm24, kPcm32, kFloat32, kMulaw, kAlaw };

// "pcm8", "pcm16", "pcm24", "pcm32", "float32", "mulaw", "alaw".
std::string_view SampleFormatName(SampleFormat format);

struct WavConfig {
  // Largest file ReadWavFile/ReadRawFile loads into memory. Larger allows longer recordings;
  // smaller bounds the memory one bad upload can take. 1 GiB is ~9 hours of 16 kHz mono PCM16.
  int64_t max_file_bytes = int64_t{1} << 30;
  // Most channels accepted before the downmix. Real recordings have 1-2 (call recorders up to 8
  // for conferences); more is almost surely a corrupt header.
  int max_channels = 8;

  template <class V>
  void Visit(V& v) {
    v.Field("max_file_bytes", max_file_bytes, "Largest audio file loaded into memory, in bytes");
    v.Field("max_channels", max_channels, "Most channels accepted in a WAV file (mixed to mono)");
  }
  Status Validate() const;
};

// What the header of a file said, after resolving WAVE_FORMAT_EXTENSIBLE.
struct WavFormat {
  SampleFormat sample_format = SampleFormat::kPcm16;
  uint16_t format_tag = 1;  // 1 PCM, 3 float, 6 A-law, 7 μ-law (the sub-format when extensible)
  bool extensible = false;  // the header was WAVE_FORMAT_EXTENSIBLE (0xFFFE)
  bool raw = false;         // headerless input, format given by the caller
  int channels = 1;
  int sample_rate_hz = 0;
  int bits_per_sample = 16;
  int64_t frames = 0;  // sample frames (one sample per channel) in the data
};

// Decoded audio (mono PCM16, at the file's rate) and what the file was.
struct DecodedAudio {
  AudioBuffer audio;
  WavFormat format;
};

// Parses a complete WAV file held in `bytes`.
Result<DecodedAudio> ParseWav(std::span<const uint8_t> bytes, const WavConfig& config = {});

// Interprets `bytes` as headerless signed 16-bit little-endian PCM with `channels` interleaved
// channels at `rate_hz`, mixed to mono. Errors on an odd byte count or a partial frame.
Result<DecodedAudio> ParseRawPcm16(std::span<const uint8_t> bytes, int rate_hz, int channels = 1,
                                   const WavConfig& config = {});

// Serializes mono `audio` as a WAV file in `codec` (μ-law and A-law get the 'fact' chunk the
// format requires). Errors when the rate is out of range or the data would not fit in RIFF's
// 32-bit sizes.
Result<std::vector<uint8_t>> EncodeWav(AudioView audio, Codec codec);

// Reads a whole file (at most config.max_file_bytes) into memory.
Result<std::vector<uint8_t>> ReadFileBytes(const std::string& path, int64_t max_bytes);

// ReadFileBytes + ParseWav / ParseRawPcm16; errors are prefixed with the path.
Result<DecodedAudio> ReadWavFile(const std::string& path, const WavConfig& config = {});
Result<DecodedAudio> ReadRawFile(const std::string& path, int rate_hz, int channels = 1,
                                 const WavConfig& config = {});

// Reads `path` as raw PCM16 at `raw_rate_hz` when that is > 0, otherwise as WAV. A name ending in
// .raw, .pcm or .sln without a rate is an error asking for the rate (it has no header to say it).
Result<DecodedAudio> ReadAudioFile(const std::string& path, int raw_rate_hz = 0,
                                   const WavConfig& config = {});

// EncodeWav and write to `path` (through a temporary file renamed into place, so a failed write
// never leaves a half file under the final name).
Status WriteWavFile(const std::string& path, AudioView audio, Codec codec);

}  // namespace hotline::audio
