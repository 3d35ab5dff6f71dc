#include "audio/wav.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "audio/g711.h"

namespace hotline::audio {
namespace {

constexpr uint16_t kTagPcm = 0x0001;
constexpr uint16_t kTagFloat = 0x0003;
constexpr uint16_t kTagAlaw = 0x0006;
constexpr uint16_t kTagMulaw = 0x0007;
constexpr uint16_t kTagExtensible = 0xFFFE;

// KSDATAFORMAT_SUBTYPE_* GUIDs are {tag}-0000-0010-8000-00AA00389B71; bytes 2..15 on disk.
constexpr uint8_t kSubFormatGuidTail[14] = {0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80,
                                            0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};

uint16_t U16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t U32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

// A chunk id for messages: printable as is, otherwise hex.
std::string ChunkName(const uint8_t* p) {
  bool printable = true;
  for (int i = 0; i < 4; ++i) printable = printable && p[i] >= 0x20 && p[i] < 0x7F;
  if (printable) return "'" + std::string(reinterpret_cast<const char*>(p), 4) + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%02x%02x%02x%02x", p[0], p[1], p[2], p[3]);
  return buf;
}

std::string Hex16(uint16_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", v);
  return buf;
}

// The parsed 'fmt ' chunk.
struct FmtChunk {
  uint16_t tag = 0;
  bool extensible = false;
  int channels = 0;
  int64_t rate_hz = 0;
  int block_align = 0;
  int bits = 0;
};

Result<FmtChunk> ParseFmt(const uint8_t* p, uint32_t size, const WavConfig& config) {
  if (size < 16) {
    return DataLossError("'fmt ' chunk is " + std::to_string(size) +
                         " bytes, shorter than the 16 bytes every WAV format needs");
  }
  FmtChunk f;
  f.tag = U16(p);
  f.channels = U16(p + 2);
  f.rate_hz = U32(p + 4);
  f.block_align = U16(p + 12);
  f.bits = U16(p + 14);
  if (f.tag == kTagExtensible) {
    if (size < 40 || U16(p + 16) < 22) {
      return DataLossError("WAVE_FORMAT_EXTENSIBLE 'fmt ' chunk is " + std::to_string(size) +
                           " bytes; it needs 40 (with a 22-byte extension)");
    }
    const uint8_t* guid = p + 24;
    if (std::memcmp(guid + 2, kSubFormatGuidTail, 14) != 0) {
      return UnimplementedError(
          "WAVE_FORMAT_EXTENSIBLE sub-format is not a standard KSDATAFORMAT GUID; "
          "convert the file to PCM16, μ-law or A-law");
    }
    f.tag = U16(guid);
    f.extensible = true;
  }
  if (f.channels == 0) return InvalidArgumentError("'fmt ' chunk declares 0 channels");
  if (f.channels > config.max_channels) {
    return InvalidArgumentError("'fmt ' chunk declares " + std::to_string(f.channels) +
                                " channels; at most " + std::to_string(config.max_channels) +
                                " are accepted (audio.wav.max_channels)");
  }
  if (f.rate_hz < kMinSampleRateHz || f.rate_hz > kMaxSampleRateHz) {
    return InvalidArgumentError("'fmt ' chunk declares a sample rate of " +
                                std::to_string(f.rate_hz) + " Hz, outside [" +
                                std::to_string(kMinSampleRateHz) + ", " +
                                std::to_string(kMaxSampleRateHz) + "] Hz");
  }
  return f;
}

Result<SampleFormat> ResolveSampleFormat(const FmtChunk& f) {
  switch (f.tag) {
    case kTagPcm:
      switch (f.bits) {
        case 8: return SampleFormat::kPcm8;
        case 16: return SampleFormat::kPcm16;
        case 24: return SampleFormat::kPcm24;
        case 32: return SampleFormat::kPcm32;
        default: break;
      }
      return UnimplementedError("integer PCM with " + std::to_string(f.bits) +
                                " bits per sample is not supported (8, 16, 24 or 32)");
    case kTagFloat:
      if (f.bits == 32) return SampleFormat::kFloat32;
      return UnimplementedError("float PCM with " + std::to_string(f.bits) +
                                " bits per sample is not supported (32)");
    case kTagMulaw:
    case kTagAlaw:
      if (f.bits == 8) return f.tag == kTagMulaw ? SampleFormat::kMulaw : SampleFormat::kAlaw;
      return InvalidArgumentError(std::string(f.tag == kTagMulaw ? "μ-law" : "A-law") +
                                  " data must have 8 bits per sample, header says " +
                                  std::to_string(f.bits));
    default:
      return UnimplementedError("WAV format tag " + Hex16(f.tag) +
                                " is not supported; convert to PCM16, μ-law (7) or A-law (6)");
  }
}

int BytesPerSample(SampleFormat f) {
  switch (f) {
    case SampleFormat::kPcm8:
    case SampleFormat::kMulaw:
    case SampleFormat::kAlaw: return 1;
    case SampleFormat::kPcm16: return 2;
    case SampleFormat::kPcm24: return 3;
    case SampleFormat::kPcm32:
    case SampleFormat::kFloat32: return 4;
  }
  return 2;
}

// One stored sample to int16 (rounded to nearest, saturated).
int16_t SampleToPcm16(SampleFormat f, const uint8_t* p) {
  switch (f) {
    case SampleFormat::kPcm8: return static_cast<int16_t>((static_cast<int>(p[0]) - 128) * 256);
    case SampleFormat::kPcm16: return static_cast<int16_t>(U16(p));
    case SampleFormat::kPcm24: {
      const int32_t v = static_cast<int32_t>((static_cast<uint32_t>(p[0]) << 8) |
                                             (static_cast<uint32_t>(p[1]) << 16) |
                                             (static_cast<uint32_t>(p[2]) << 24)) >> 8;
      return SaturateToInt16((v + 128) >> 8);
    }
    case SampleFormat::kPcm32: {
      const int64_t v = static_cast<int32_t>(U32(p));
      return SaturateToInt16(static_cast<int32_t>((v + 32768) >> 16));
    }
    case SampleFormat::kFloat32: {
      float x;
      const uint32_t bits = U32(p);
      std::memcpy(&x, &bits, 4);
      if (!std::isfinite(x)) return 0;
      const double s = std::nearbyint(static_cast<double>(x) * 32768.0);
      return static_cast<int16_t>(s > 32767.0 ? 32767 : (s < -32768.0 ? -32768 : s));
    }
    case SampleFormat::kMulaw: return MulawToLinear(p[0]);
    case SampleFormat::kAlaw: return AlawToLinear(p[0]);
  }
  return 0;
}

// Decodes `frames` interleaved frames of `channels` samples into mono.
void DecodeFrames(const uint8_t* data, int64_t frames, int channels, SampleFormat f,
                  std::vector<int16_t>& out) {
  const int bps = BytesPerSample(f);
  out.resize(static_cast<size_t>(frames));
  if (channels == 1 && f == SampleFormat::kPcm16) {
    for (int64_t i = 0; i < frames; ++i) out[static_cast<size_t>(i)] = static_cast<int16_t>(U16(data + 2 * i));
    return;
  }
  const int32_t half = channels / 2;
  for (int64_t i = 0; i < frames; ++i) {
    int32_t sum = 0;
    for (int c = 0; c < channels; ++c) sum += SampleToPcm16(f, data + bps * c);
    data += static_cast<ptrdiff_t>(bps) * channels;
    const int32_t avg = sum >= 0 ? (sum + half) / channels : -((-sum + half) / channels);
    out[static_cast<size_t>(i)] = SaturateToInt16(avg);
  }
}

void PutU16(std::vector<uint8_t>& b, uint16_t v) {
  b.push_back(static_cast<uint8_t>(v));
  b.push_back(static_cast<uint8_t>(v >> 8));
}
void PutU32(std::vector<uint8_t>& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void PutId(std::vector<uint8_t>& b, const char* id) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(id[i]));
}

}  // namespace

std::string_view SampleFormatName(SampleFormat format) {
  switch (format) {
    case SampleFormat::kPcm8: return "pcm8";
    case SampleFormat::kPcm16: return "pcm16";
    case SampleFormat::kPcm24: return "pcm24";
    case SampleFormat::kPcm32: return "pcm32";
    case SampleFormat::kFloat32: return "float32";
    case SampleFormat::kMulaw: return "mulaw";
    case SampleFormat::kAlaw: return "alaw";
  }
  return "unknown";
}

Status WavConfig::Validate() const {
  if (max_file_bytes < 44) {
    return InvalidArgumentError("max_file_bytes must be at least 44 (one WAV header), got " +
                                std::to_string(max_file_bytes));
  }
  if (max_channels < 1 || max_channels > 64) {
    return InvalidArgumentError("max_channels must be in [1, 64], got " +
                                std::to_string(max_channels));
  }
  return Status::Ok();
}

Result<DecodedAudio> ParseWav(std::span<const uint8_t> bytes, const WavConfig& config) {
  const uint8_t* b = bytes.data();
  const size_t n = bytes.size();
  if (n < 12) {
    return DataLossError("file is " + std::to_string(n) +
                         " bytes, too short for a RIFF/WAVE header (12 bytes)");
  }
  if (std::memcmp(b, "RIFF", 4) != 0) {
    if (std::memcmp(b, "RIFX", 4) == 0 || std::memcmp(b, "RF64", 4) == 0) {
      return UnimplementedError(ChunkName(b) + " files are not supported; convert to RIFF WAV");
    }
    return InvalidArgumentError("not a WAV file: starts with " + ChunkName(b) +
                                " instead of 'RIFF' (for headerless PCM give its rate)");
  }
  if (std::memcmp(b + 8, "WAVE", 4) != 0) {
    return InvalidArgumentError("RIFF file of type " + ChunkName(b + 8) + ", not 'WAVE'");
  }
  const uint64_t riff_end = uint64_t{8} + U32(b + 4);
  if (riff_end < 12) return DataLossError("RIFF header declares a size too small for 'WAVE'");
  if (riff_end > n) {
    return DataLossError("truncated file: RIFF header declares " + std::to_string(riff_end) +
                         " bytes but the file holds " + std::to_string(n));
  }

  const uint8_t* fmt = nullptr;
  uint32_t fmt_size = 0;
  const uint8_t* data = nullptr;
  uint32_t data_size = 0;
  uint64_t pos = 12;
  while (pos + 8 <= riff_end) {
    const uint8_t* chunk = b + pos;
    const uint32_t size = U32(chunk + 4);
    const uint64_t avail = riff_end - pos - 8;
    if (size > avail) {
      return DataLossError("chunk " + ChunkName(chunk) + " at offset " + std::to_string(pos) +
                           " declares " + std::to_string(size) + " bytes but only " +
                           std::to_string(avail) + " remain in the file (truncated or corrupt)");
    }
    if (std::memcmp(chunk, "fmt ", 4) == 0) {
      if (fmt != nullptr) return InvalidArgumentError("two 'fmt ' chunks in one WAV file");
      fmt = chunk + 8;
      fmt_size = size;
    } else if (std::memcmp(chunk, "data", 4) == 0) {
      if (data != nullptr) return InvalidArgumentError("two 'data' chunks in one WAV file");
      data = chunk + 8;
      data_size = size;
    }
    // Chunks are padded to even sizes; a missing final pad byte is tolerated.
    pos += 8 + uint64_t{size} + (size & 1u);
  }
  if (fmt == nullptr) return DataLossError("no 'fmt ' chunk: the file does not say its format");
  if (data == nullptr) return DataLossError("no 'data' chunk: the file holds no audio");

  ASSIGN_OR_RETURN(FmtChunk f, ParseFmt(fmt, fmt_size, config));
  ASSIGN_OR_RETURN(SampleFormat sf, ResolveSampleFormat(f));
  const int frame_bytes = BytesPerSample(sf) * f.channels;
  if (f.block_align != frame_bytes) {
    return InvalidArgumentError("'fmt ' chunk declares block_align " +
                                std::to_string(f.block_align) + " but " +
                                std::to_string(f.channels) + " channel(s) of " +
                                std::to_string(f.bits) + "-bit samples take " +
                                std::to_string(frame_bytes) + " bytes per frame");
  }
  if (data_size % static_cast<uint32_t>(frame_bytes) != 0) {
    return DataLossError("'data' chunk holds " + std::to_string(data_size) +
                         " bytes, not a whole number of " + std::to_string(frame_bytes) +
                         "-byte sample frames (odd byte count or truncated)");
  }

  DecodedAudio out;
  out.format.sample_format = sf;
  out.format.format_tag = f.tag;
  out.format.extensible = f.extensible;
  out.format.channels = f.channels;
  out.format.sample_rate_hz = static_cast<int>(f.rate_hz);
  out.format.bits_per_sample = f.bits;
  out.format.frames = data_size / frame_bytes;
  out.audio.sample_rate_hz = static_cast<int>(f.rate_hz);
  DecodeFrames(data, out.format.frames, f.channels, sf, out.audio.samples);
  return out;
}

Result<DecodedAudio> ParseRawPcm16(std::span<const uint8_t> bytes, int rate_hz, int channels,
                                   const WavConfig& config) {
  RETURN_IF_ERROR(CheckSampleRate(rate_hz));
  if (channels < 1 || channels > config.max_channels) {
    return InvalidArgumentError("raw PCM channel count must be in [1, " +
                                std::to_string(config.max_channels) + "], got " +
                                std::to_string(channels));
  }
  const size_t frame_bytes = 2 * static_cast<size_t>(channels);
  if (bytes.size() % frame_bytes != 0) {
    return DataLossError("raw PCM16 input holds " + std::to_string(bytes.size()) +
                         " bytes, not a whole number of " + std::to_string(frame_bytes) +
                         "-byte sample frames (odd byte count or truncated)");
  }
  DecodedAudio out;
  out.format.sample_format = SampleFormat::kPcm16;
  out.format.format_tag = kTagPcm;
  out.format.raw = true;
  out.format.channels = channels;
  out.format.sample_rate_hz = rate_hz;
  out.format.bits_per_sample = 16;
  out.format.frames = static_cast<int64_t>(bytes.size() / frame_bytes);
  out.audio.sample_rate_hz = rate_hz;
  DecodeFrames(bytes.data(), out.format.frames, channels, SampleFormat::kPcm16, out.audio.samples);
  return out;
}

Result<std::vector<uint8_t>> EncodeWav(AudioView audio, Codec codec) {
  RETURN_IF_ERROR(CheckSampleRate(audio.sample_rate_hz));
  const bool pcm = codec == Codec::kPcm16;
  const uint64_t bytes_per_sample = pcm ? 2 : 1;
  const uint64_t data_bytes = audio.samples.size() * bytes_per_sample;
  const uint64_t header_bytes = pcm ? 44 : 58;  // G.711: 18-byte fmt + 12-byte fact chunk
  if (data_bytes + header_bytes > 0xFFFFFFFFull) {
    return InvalidArgumentError("audio of " + std::to_string(audio.samples.size()) +
                                " samples is too long for a WAV file (4 GiB limit)");
  }
  std::vector<uint8_t> out;
  out.reserve(static_cast<size_t>(header_bytes + data_bytes + 1));
  const uint32_t pad = static_cast<uint32_t>(data_bytes & 1);
  PutId(out, "RIFF");
  PutU32(out, static_cast<uint32_t>(header_bytes - 8 + data_bytes + pad));
  PutId(out, "WAVE");
  PutId(out, "fmt ");
  PutU32(out, pcm ? 16 : 18);
  PutU16(out, pcm ? kTagPcm : (codec == Codec::kMulaw ? kTagMulaw : kTagAlaw));
  PutU16(out, 1);  // channels
  PutU32(out, static_cast<uint32_t>(audio.sample_rate_hz));
  PutU32(out, static_cast<uint32_t>(audio.sample_rate_hz * bytes_per_sample));  // byte rate
  PutU16(out, static_cast<uint16_t>(bytes_per_sample));                         // block align
  PutU16(out, static_cast<uint16_t>(8 * bytes_per_sample));                     // bits
  if (!pcm) {
    PutU16(out, 0);  // cbSize
    PutId(out, "fact");
    PutU32(out, 4);
    PutU32(out, static_cast<uint32_t>(audio.samples.size()));
  }
  PutId(out, "data");
  PutU32(out, static_cast<uint32_t>(data_bytes));
  const size_t start = out.size();
  out.resize(start + static_cast<size_t>(data_bytes));
  uint8_t* d = out.data() + start;
  Encode(codec, audio.samples, {d, EncodedBytes(codec, audio.samples.size())});
  if (pad) out.push_back(0);
  return out;
}

Result<std::vector<uint8_t>> ReadFileBytes(const std::string& path, int64_t max_bytes) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return NotFoundError(path + ": no such file");
  if (!std::filesystem::is_regular_file(status)) return InvalidArgumentError(path + ": not a regular file");
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return UnavailableError(path + ": cannot read its size: " + ec.message());
  if (size > static_cast<uintmax_t>(max_bytes)) {
    return ResourceExhaustedError(path + ": file is " + std::to_string(size) +
                                  " bytes, more than the limit of " + std::to_string(max_bytes) +
                                  " (audio.wav.max_file_bytes)");
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return UnavailableError(path + ": cannot open: " + std::strerror(errno));
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  const size_t got = bytes.empty() ? 0 : std::fread(bytes.data(), 1, bytes.size(), f);
  const bool read_error = std::ferror(f) != 0;
  std::fclose(f);
  if (read_error) return UnavailableError(path + ": read failed");
  bytes.resize(got);  // the file may have shrunk since stat; never grows past the limit
  return bytes;
}

Result<DecodedAudio> ReadWavFile(const std::string& path, const WavConfig& config) {
  ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadFileBytes(path, config.max_file_bytes));
  Result<DecodedAudio> r = ParseWav(bytes, config);
  if (!r.ok()) return r.status().WithContext(path);
  return r;
}

Result<DecodedAudio> ReadRawFile(const std::string& path, int rate_hz, int channels,
                                 const WavConfig& config) {
  ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadFileBytes(path, config.max_file_bytes));
  Result<DecodedAudio> r = ParseRawPcm16(bytes, rate_hz, channels, config);
  if (!r.ok()) return r.status().WithContext(path);
  return r;
}

Result<DecodedAudio> ReadAudioFile(const std::string& path, int raw_rate_hz,
                                   const WavConfig& config) {
  if (raw_rate_hz > 0) return ReadRawFile(path, raw_rate_hz, 1, config);
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".raw" || ext == ".pcm" || ext == ".sln") {
    return InvalidArgumentError(path +
                                ": headerless PCM has no sample rate; give it (e.g. 16000)");
  }
  return ReadWavFile(path, config);
}

Status WriteWavFile(const std::string& path, AudioView audio, Codec codec) {
  ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, EncodeWav(audio, codec));
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return UnavailableError(path + ": cannot create: " + std::strerror(errno));
  const size_t put = std::fwrite(bytes.data(), 1, bytes.size(), f);
  const bool close_failed = std::fclose(f) != 0;
  std::error_code ec;
  if (put != bytes.size() || close_failed) {
    std::filesystem::remove(tmp, ec);
    return UnavailableError(path + ": write failed (disk full?)");
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return UnavailableError(path + ": cannot move the written file into place: " + ec.message());
  }
  return Status::Ok();
}

}  // namespace hotline::audio
