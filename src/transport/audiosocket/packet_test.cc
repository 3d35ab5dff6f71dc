#include "transport/audiosocket/packet.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hotline::transport::audiosocket {
namespace {

std::string Bytes(std::initializer_list<int> v) {
  std::string s;
  for (int b : v) s.push_back(static_cast<char>(b));
  return s;
}

std::vector<Packet> ParseAll(PacketParser& p) {
  std::vector<Packet> out;
  Packet pkt;
  while (true) {
    auto r = p.Next(pkt);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok() || !*r) break;
    out.push_back(pkt);
  }
  return out;
}

const Uuid kUuid = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0,
                    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};

TEST(AudioSocketPacket, EncodesHeaderBigEndian) {
  EXPECT_EQ(EncodeHangup(), Bytes({0x00, 0x00, 0x00}));
  EXPECT_EQ(EncodeDtmf('5'), Bytes({0x03, 0x00, 0x01, '5'}));
  EXPECT_EQ(EncodeError(), Bytes({0xff, 0x00, 0x00}));
  EXPECT_EQ(EncodeError(4), Bytes({0xff, 0x00, 0x01, 0x04}));
  std::vector<uint8_t> pcm(320, 0x7f);
  std::string a = EncodeAudio(pcm);
  ASSERT_EQ(a.size(), 323u);
  EXPECT_EQ(a.substr(0, 3), Bytes({0x10, 0x01, 0x40}));
  std::string u = EncodeUuid(kUuid);
  ASSERT_EQ(u.size(), 19u);
  EXPECT_EQ(u.substr(0, 3), Bytes({0x01, 0x00, 0x10}));
}

TEST(AudioSocketPacket, ParsesACallSplitAtEveryByte) {
  std::vector<uint8_t> pcm(320);
  for (size_t i = 0; i < pcm.size(); ++i) pcm[i] = static_cast<uint8_t>(i);
  const std::string stream =
      EncodeUuid(kUuid) + EncodeAudio(pcm) + EncodeDtmf('#') + EncodeAudio(pcm) + EncodeHangup();
  for (size_t chunk : {1u, 2u, 3u, 7u, 320u, 10000u}) {
    PacketParser p;
    std::vector<Packet> got;
    for (size_t i = 0; i < stream.size(); i += chunk) {
      ASSERT_TRUE(p.Feed(std::string_view(stream).substr(i, chunk)).ok());
      auto more = ParseAll(p);
      got.insert(got.end(), more.begin(), more.end());
    }
    ASSERT_EQ(got.size(), 5u) << "chunk " << chunk;
    EXPECT_EQ(got[0].type, PacketType::kUuid);
    EXPECT_EQ(FormatUuid(std::span<const uint8_t>(
                  reinterpret_cast<const uint8_t*>(got[0].payload.data()), 16)),
              "12345678-9abc-def0-0123-456789abcdef");
    EXPECT_EQ(got[1].type, PacketType::kAudio);
    EXPECT_EQ(got[1].payload, std::string(pcm.begin(), pcm.end()));
    EXPECT_EQ(got[2].type, PacketType::kDtmf);
    EXPECT_EQ(got[2].payload, "#");
    EXPECT_EQ(got[4].type, PacketType::kHangup);
    EXPECT_TRUE(p.Finish().ok());
    EXPECT_EQ(p.buffered(), 0u);
  }
}

TEST(AudioSocketPacket, RejectsUnknownTypeAsSoonAsTheHeaderArrives) {
  PacketParser p;
  Status s = p.Feed(Bytes({0x05, 0x00, 0x10}));  // payload never sent
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unknown AudioSocket packet type 0x05"), std::string::npos)
      << s.message();
  // Stays failed: the stream cannot be resynchronized.
  EXPECT_FALSE(p.Feed(EncodeHangup()).ok());
  Packet pkt;
  EXPECT_FALSE(p.Next(pkt).ok());
}

TEST(AudioSocketPacket, RejectsOversizedAudioBeforeItsPayload) {
  PacketParser p(PacketLimits{.max_audio_bytes = 3200});
  Status s = p.Feed(Bytes({0x10, 0xff, 0xfe}));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("65534 bytes is over the limit of 3200"), std::string::npos)
      << s.message();
  PacketParser at_limit(PacketLimits{.max_audio_bytes = 3200});
  EXPECT_TRUE(at_limit.Feed(EncodeAudio(std::vector<uint8_t>(3200))).ok());
  EXPECT_EQ(ParseAll(at_limit).size(), 1u);
}

TEST(AudioSocketPacket, RejectsPayloadsThatDoNotFitTheirType) {
  struct Case {
    std::string bytes;
    const char* message;
  } cases[] = {
      {Bytes({0x10, 0x00, 0x03, 1, 2, 3}), "not a whole number of 16-bit samples"},
      {Bytes({0x01, 0x00, 0x08}), "uuid packet of 8 bytes"},
      {Bytes({0x00, 0x00, 0x01, 0x00}), "hangup packet with a 1-byte payload"},
      {Bytes({0x03, 0x00, 0x02, '1', '2'}), "dtmf packet of 2 bytes"},
      {Bytes({0x03, 0x00, 0x01, 'x'}), "not a keypad digit"},
      {Bytes({0xff, 0x00, 0x02, 0, 0}), "error packet of 2 bytes"},
  };
  for (const auto& c : cases) {
    PacketParser p;
    Status fed = p.Feed(c.bytes);
    Packet pkt;
    Status s = fed;
    if (s.ok()) s = p.Next(pkt).status();
    ASSERT_FALSE(s.ok()) << c.message;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
  }
}

TEST(AudioSocketPacket, TruncatedStreamIsReportedAtTheEnd) {
  {
    PacketParser p;
    ASSERT_TRUE(p.Feed(Bytes({0x10, 0x01})).ok());
    Packet pkt;
    auto r = p.Next(pkt);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(*r);
    Status s = p.Finish();
    EXPECT_EQ(s.code(), StatusCode::kDataLoss);
    EXPECT_NE(s.message().find("inside a packet header (2 of 3 bytes)"), std::string::npos)
        << s.message();
  }
  {
    PacketParser p;
    ASSERT_TRUE(p.Feed(EncodeAudio(std::vector<uint8_t>(320)).substr(0, 103)).ok());
    Packet pkt;
    EXPECT_FALSE(*p.Next(pkt));
    Status s = p.Finish();
    EXPECT_NE(s.message().find("inside a packet of type audio (100 of 320 payload bytes)"),
              std::string::npos)
        << s.message();
  }
}

TEST(AudioSocketPacket, UuidTextRoundTrips) {
  auto u = ParseUuid("12345678-9ABC-def0-0123-456789abcdef");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(*u, kUuid);
  EXPECT_EQ(FormatUuid(*u), "12345678-9abc-def0-0123-456789abcdef");
  EXPECT_FALSE(ParseUuid("1234").ok());
  EXPECT_FALSE(ParseUuid("12345678-9abc-def0-0123-456789abcdeg").ok());
  EXPECT_FALSE(ParseUuid("12345678-9abc-def0-0123-456789abcdef00").ok());
}

TEST(AudioSocketPacket, AppendRefusesPayloadsOverTheLengthField) {
  std::string out;
  std::vector<uint8_t> big(70000);
  EXPECT_FALSE(AppendPacket(PacketType::kAudio, big, out).ok());
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace hotline::transport::audiosocket
