#include "audio/wav.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "audio/g711.h"

namespace hotline::audio {
namespace {

// Builds WAV bytes field by field, so tests can write both valid files and every kind of lie.
struct WavBuilder {
  uint16_t tag = 1;
  uint16_t channels = 1;
  uint32_t rate = 8000;
  uint16_t bits = 16;
  int block_align = -1;  // -1: computed
  bool extensible = false;
  uint16_t sub_tag = 1;
  std::vector<uint8_t> data;
  bool with_fmt = true;
  bool with_data = true;
  bool list_chunk = false;     // a LIST chunk with odd size before 'data' (tests padding)
  int64_t riff_size = -1;      // -1: computed
  int64_t data_size = -1;      // -1: data.size()

  static void U16(std::vector<uint8_t>& b, uint16_t v) {
    b.push_back(v & 0xFF);
    b.push_back(v >> 8);
  }
  static void U32(std::vector<uint8_t>& b, uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back((v >> (8 * i)) & 0xFF);
  }
  static void Id(std::vector<uint8_t>& b, const char* id) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(id[i]));
  }

  std::vector<uint8_t> Build() const {
    std::vector<uint8_t> body;
    Id(body, "WAVE");
    if (with_fmt) {
      Id(body, "fmt ");
      U32(body, extensible ? 40 : 16);
      U16(body, extensible ? 0xFFFE : tag);
      U16(body, channels);
      U32(body, rate);
      const uint16_t align = block_align >= 0 ? block_align : channels * (bits / 8);
      U32(body, rate * align);
      U16(body, align);
      U16(body, bits);
      if (extensible) {
        U16(body, 22);
        U16(body, bits);
        U32(body, channels == 2 ? 3 : 4);
        const uint8_t guid_tail[14] = {0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80,
                                       0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};
        U16(body, sub_tag);
        body.insert(body.end(), guid_tail, guid_tail + 14);
      }
    }
    if (list_chunk) {
      Id(body, "LIST");
      U32(body, 5);
      Id(body, "INFO");
      body.push_back('x');
      body.push_back(0);  // pad byte
    }
    if (with_data) {
      Id(body, "data");
      U32(body, data_size >= 0 ? static_cast<uint32_t>(data_size) : data.size());
      body.insert(body.end(), data.begin(), data.end());
    }
    std::vector<uint8_t> out;
    Id(out, "RIFF");
    U32(out, riff_size >= 0 ? static_cast<uint32_t>(riff_size) : body.size());
    out.insert(out.end(), body.begin(), body.end());
    return out;
  }
};

std::vector<uint8_t> Pcm16Bytes(const std::vector<int16_t>& s) {
  std::vector<uint8_t> b;
  for (int16_t v : s) WavBuilder::U16(b, static_cast<uint16_t>(v));
  return b;
}

std::vector<int16_t> Tone(int rate, int n, double hz = 440.0, double amp = 12000.0) {
  std::vector<int16_t> s(n);
  for (int i = 0; i < n; ++i) {
    s[i] = static_cast<int16_t>(std::lround(amp * std::sin(2 * M_PI * hz * i / rate)));
  }
  return s;
}

TEST(Wav, Pcm16RoundTripIsExact) {
  const AudioBuffer in(Tone(16000, 1601), 16000);  // odd sample count
  auto bytes = EncodeWav(in, Codec::kPcm16);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(bytes->size(), 44u + 2 * 1601);
  auto back = ParseWav(*bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->audio.samples, in.samples);
  EXPECT_EQ(back->audio.sample_rate_hz, 16000);
  EXPECT_EQ(back->format.sample_format, SampleFormat::kPcm16);
  EXPECT_EQ(back->format.channels, 1);
  EXPECT_EQ(back->format.frames, 1601);
}

TEST(Wav, G711RoundTripsEqualTheCodec) {
  const AudioBuffer in(Tone(8000, 801), 8000);  // odd byte count: exercises the pad byte
  for (Codec codec : {Codec::kMulaw, Codec::kAlaw}) {
    auto bytes = EncodeWav(in, codec);
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(bytes->size() % 2, 0u);
    auto back = ParseWav(*bytes);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->format.sample_format,
              codec == Codec::kMulaw ? SampleFormat::kMulaw : SampleFormat::kAlaw);
    EXPECT_EQ(back->format.format_tag, codec == Codec::kMulaw ? 7 : 6);
    ASSERT_EQ(back->audio.size(), in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const int16_t expected = codec == Codec::kMulaw ? MulawToLinear(LinearToMulaw(in.samples[i]))
                                                      : AlawToLinear(LinearToAlaw(in.samples[i]));
      ASSERT_EQ(back->audio.samples[i], expected) << i;
    }
    // Encoding the decoded audio again gives the same bytes (G.711 is idempotent after one pass).
    auto again = EncodeWav(back->audio, codec);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *bytes);
  }
}

TEST(Wav, StereoIsAveragedToMono) {
  WavBuilder w;
  w.channels = 2;
  w.rate = 44100;
  w.data = Pcm16Bytes({100, 300, -100, -301, 32767, 32767, -32768, -32768, 1, 2});
  auto r = ParseWav(w.Build());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->format.channels, 2);
  EXPECT_EQ(r->audio.sample_rate_hz, 44100);
  EXPECT_EQ(r->audio.samples, (std::vector<int16_t>{200, -201, 32767, -32768, 2}));
}

TEST(Wav, ExtensibleHeaderAndSkippedChunks) {
  WavBuilder w;
  w.extensible = true;
  w.sub_tag = 1;
  w.channels = 2;
  w.rate = 48000;
  w.list_chunk = true;
  w.data = Pcm16Bytes({10, 20, 30, 40});
  auto r = ParseWav(w.Build());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->format.extensible);
  EXPECT_EQ(r->format.format_tag, 1);
  EXPECT_EQ(r->audio.samples, (std::vector<int16_t>{15, 35}));

  WavBuilder mu;
  mu.extensible = true;
  mu.sub_tag = 7;
  mu.bits = 8;
  mu.data = {0xFF, 0x80, 0x00};
  auto m = ParseWav(mu.Build());
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->format.sample_format, SampleFormat::kMulaw);
  EXPECT_EQ(m->audio.samples, (std::vector<int16_t>{0, 32124, -32124}));
}

TEST(Wav, OtherSampleWidthsAreConverted) {
  WavBuilder w8;
  w8.bits = 8;
  w8.data = {128, 255, 0};
  auto r8 = ParseWav(w8.Build());
  ASSERT_TRUE(r8.ok()) << r8.status();
  EXPECT_EQ(r8->audio.samples, (std::vector<int16_t>{0, 127 * 256, -32768}));

  WavBuilder w24;
  w24.bits = 24;
  w24.data = {0x00, 0x34, 0x12, 0x80, 0xFF, 0xFF, 0x00, 0x00, 0x80};
  auto r24 = ParseWav(w24.Build());
  ASSERT_TRUE(r24.ok()) << r24.status();
  EXPECT_EQ(r24->audio.samples, (std::vector<int16_t>{0x1234, 0, -32768}));

  WavBuilder wf;
  wf.tag = 3;
  wf.bits = 32;
  for (float f : {0.5f, -1.0f, 2.0f, NAN}) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    WavBuilder::U32(wf.data, u);
  }
  auto rf = ParseWav(wf.Build());
  ASSERT_TRUE(rf.ok()) << rf.status();
  EXPECT_EQ(rf->audio.samples, (std::vector<int16_t>{16384, -32768, 32767, 0}));
}

TEST(Wav, RawPcm16WithExplicitRate) {
  auto r = ParseRawPcm16(Pcm16Bytes({1, -2, 3}), 16000);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->format.raw);
  EXPECT_EQ(r->audio.samples, (std::vector<int16_t>{1, -2, 3}));
  EXPECT_EQ(r->audio.sample_rate_hz, 16000);
  auto odd = ParseRawPcm16(std::vector<uint8_t>{1, 2, 3}, 16000);
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().message().find("3 bytes"), std::string::npos) << odd.status();
  EXPECT_FALSE(ParseRawPcm16(std::vector<uint8_t>{1, 2}, 0).ok());
  EXPECT_FALSE(ParseRawPcm16(std::vector<uint8_t>{1, 2}, 1000000).ok());
}

// One malformed file and a phrase its error must contain.
struct Malformed {
  std::string name;
  std::vector<uint8_t> bytes;
  std::string expect;
};

std::vector<Malformed> MalformedCorpus() {
  std::vector<Malformed> c;
  WavBuilder good;
  good.data = Pcm16Bytes(Tone(8000, 160));
  const std::vector<uint8_t> ok = good.Build();

  c.push_back({"empty", {}, "too short"});
  c.push_back({"eleven_bytes", std::vector<uint8_t>(ok.begin(), ok.begin() + 11), "too short"});
  c.push_back({"not_riff", std::vector<uint8_t>(64, 'x'), "instead of 'RIFF'"});
  {
    auto b = ok;
    std::memcpy(b.data() + 8, "AVI ", 4);
    c.push_back({"not_wave", b, "not 'WAVE'"});
  }
  {
    auto b = ok;
    std::memcpy(b.data(), "RF64", 4);
    c.push_back({"rf64", b, "not supported"});
  }
  for (size_t cut : {size_t{12}, size_t{30}, size_t{44}, ok.size() / 2, ok.size() - 1}) {
    c.push_back({"truncated_at_" + std::to_string(cut),
                 std::vector<uint8_t>(ok.begin(), ok.begin() + cut), "truncated"});
  }
  {
    WavBuilder w = good;
    w.data_size = 0x7FFFFFF0;  // lying data size, RIFF size consistent with the real bytes
    c.push_back({"data_size_lies", w.Build(), "declares 2147483632 bytes"});
  }
  {
    WavBuilder w = good;
    w.riff_size = 0xFFFFFFF0;  // huge RIFF size
    c.push_back({"riff_size_huge", w.Build(), "truncated"});
  }
  {
    WavBuilder w = good;
    w.riff_size = 4;  // says "WAVE" only: the chunks lie outside the RIFF
    c.push_back({"riff_size_small", w.Build(), "no 'fmt ' chunk"});
  }
  {
    WavBuilder w = good;
    w.channels = 0;
    w.block_align = 2;
    c.push_back({"zero_channels", w.Build(), "0 channels"});
  }
  {
    WavBuilder w = good;
    w.channels = 1000;
    w.block_align = 2000;
    c.push_back({"thousand_channels", w.Build(), "1000 channels"});
  }
  {
    WavBuilder w = good;
    w.rate = 0;
    c.push_back({"zero_rate", w.Build(), "sample rate of 0 Hz"});
  }
  {
    WavBuilder w = good;
    w.rate = 4000000000u;
    c.push_back({"absurd_rate", w.Build(), "sample rate of 4000000000 Hz"});
  }
  {
    WavBuilder w = good;
    w.data.pop_back();  // 319 bytes of 16-bit data
    c.push_back({"odd_byte_count", w.Build(), "not a whole number"});
  }
  {
    WavBuilder w = good;
    w.block_align = 7;
    c.push_back({"bad_block_align", w.Build(), "block_align 7"});
  }
  {
    WavBuilder w = good;
    w.bits = 12;
    c.push_back({"twelve_bits", w.Build(), "12 bits"});
  }
  {
    WavBuilder w = good;
    w.tag = 0x0055;  // MP3
    c.push_back({"mp3", w.Build(), "format tag 0x0055"});
  }
  {
    WavBuilder w = good;
    w.tag = 7;  // μ-law must be 8-bit
    c.push_back({"mulaw_16bit", w.Build(), "8 bits per sample"});
  }
  {
    WavBuilder w = good;
    w.with_fmt = false;
    c.push_back({"missing_fmt", w.Build(), "no 'fmt ' chunk"});
  }
  {
    WavBuilder w = good;
    w.with_data = false;
    c.push_back({"missing_data", w.Build(), "no 'data' chunk"});
  }
  {
    auto b = ok;
    b[16] = 8;  // fmt chunk size 8 < 16
    b[4] = static_cast<uint8_t>(b[4]);
    c.push_back({"short_fmt", b, "chunk"});
  }
  {
    WavBuilder w = good;
    w.extensible = true;
    auto b = w.Build();
    b[44 + 8 - 8 + 2 + 12] ^= 0xFF;  // break the sub-format GUID
    c.push_back({"bad_guid", b, "GUID"});
  }
  return c;
}

TEST(Wav, MalformedCorpusGivesClearErrors) {
  for (const Malformed& m : MalformedCorpus()) {
    auto r = ParseWav(m.bytes);
    ASSERT_FALSE(r.ok()) << m.name << " was accepted";
    EXPECT_NE(r.status().message().find(m.expect), std::string::npos)
        << m.name << ": " << r.status();
  }
}

TEST(Wav, RandomMutationsNeverCrash) {
  // Deterministic mutation fuzzing around valid files: flips bytes in the header region, cuts
  // and extends. Only checks that the parser returns (a value or an error) within bounds.
  std::mt19937 rng(12345);
  WavBuilder w;
  w.data = Pcm16Bytes(Tone(8000, 64));
  w.list_chunk = true;
  WavBuilder e = w;
  e.extensible = true;
  const std::vector<std::vector<uint8_t>> seeds = {w.Build(), e.Build()};
  int accepted = 0;
  for (int iter = 0; iter < 8000; ++iter) {
    std::vector<uint8_t> b = seeds[iter % 2];
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      const size_t pos = rng() % std::min<size_t>(b.size(), 96);
      b[pos] = static_cast<uint8_t>(rng());
    }
    if (rng() % 4 == 0) b.resize(rng() % (b.size() + 16));
    auto r = ParseWav(b);
    if (r.ok()) {
      ++accepted;
      EXPECT_LE(r->audio.size(), b.size());
    } else {
      EXPECT_FALSE(r.status().message().empty());
    }
  }
  EXPECT_GT(accepted, 0);  // some mutations (e.g. in sample data or LIST) stay valid
}

TEST(Wav, FileRoundTripAndFileErrors) {
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "/hotline_wav_test.wav";
  const AudioBuffer in(Tone(8000, 800), 8000);
  ASSERT_TRUE(WriteWavFile(path, in, Codec::kMulaw).ok());
  auto r = ReadWavFile(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->audio.size(), 800u);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));

  WavConfig small;
  small.max_file_bytes = 100;
  auto too_big = ReadWavFile(path, small);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().code(), StatusCode::kResourceExhausted);

  auto missing = ReadWavFile(dir + "/does_not_exist.wav");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);

  EXPECT_FALSE(WriteWavFile(dir + "/no/such/dir/x.wav", in, Codec::kPcm16).ok());
  std::filesystem::remove(path);
}

TEST(Wav, CodecNames) {
  for (Codec c : {Codec::kPcm16, Codec::kMulaw, Codec::kAlaw}) {
    auto parsed = ParseCodec(CodecName(c));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, c);
  }
  EXPECT_EQ(*ParseCodec("pcmu"), Codec::kMulaw);
  auto bad = ParseCodec("mp3");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("pcm16, mulaw or alaw"), std::string::npos);
}

}  // namespace
}  // namespace hotline::audio
