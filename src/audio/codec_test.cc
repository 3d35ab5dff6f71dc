#include "audio/codec.h"

#include <gtest/gtest.h>

#include <vector>

#include "audio/g711.h"

namespace hotline::audio {
namespace {

TEST(Codec, NamesRoundTrip) {
  for (Codec c : {Codec::kPcm16, Codec::kMulaw, Codec::kAlaw}) {
    EXPECT_EQ(ParseCodec(CodecName(c)).value(), c);
  }
  EXPECT_EQ(ParseCodec("slin").value(), Codec::kPcm16);
  EXPECT_EQ(ParseCodec("pcmu").value(), Codec::kMulaw);
  EXPECT_EQ(ParseCodec("pcma").value(), Codec::kAlaw);
  auto bad = ParseCodec("opus");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("choose pcm16, mulaw or alaw"), std::string::npos);
}

TEST(Codec, Pcm16IsLittleEndianAndRoundTripsEverySample) {
  std::vector<int16_t> all;
  for (int v = -32768; v <= 32767; ++v) all.push_back(static_cast<int16_t>(v));
  std::vector<uint8_t> bytes(EncodedBytes(Codec::kPcm16, all.size()));
  Encode(Codec::kPcm16, all, bytes);
  // -32768 = 0x8000: low byte first.
  EXPECT_EQ(bytes[0], 0x00);
  EXPECT_EQ(bytes[1], 0x80);
  std::vector<int16_t> back(DecodedSamples(Codec::kPcm16, bytes.size()));
  Decode(Codec::kPcm16, bytes, back);
  EXPECT_EQ(back, all);
}

TEST(Codec, AnOddTrailingPcm16ByteIsNotASample) {
  const std::vector<uint8_t> bytes = {0x34, 0x12, 0x7f};
  ASSERT_EQ(DecodedSamples(Codec::kPcm16, bytes.size()), 1u);
  std::vector<int16_t> out(1);
  Decode(Codec::kPcm16, bytes, out);
  EXPECT_EQ(out[0], 0x1234);
}

TEST(Codec, G711GoesThroughTheLawTables) {
  const std::vector<int16_t> pcm = {0, 1000, -1000, 32767, -32768};
  for (Codec c : {Codec::kMulaw, Codec::kAlaw}) {
    std::vector<uint8_t> bytes(EncodedBytes(c, pcm.size()));
    ASSERT_EQ(bytes.size(), pcm.size());
    Encode(c, pcm, bytes);
    std::vector<int16_t> back(DecodedSamples(c, bytes.size()));
    Decode(c, bytes, back);
    for (size_t i = 0; i < pcm.size(); ++i) {
      const uint8_t code = c == Codec::kMulaw ? LinearToMulaw(pcm[i]) : LinearToAlaw(pcm[i]);
      EXPECT_EQ(bytes[i], code);
      EXPECT_EQ(back[i], c == Codec::kMulaw ? MulawToLinear(code) : AlawToLinear(code));
    }
  }
}

}  // namespace
}  // namespace hotline::audio
