#include "transport/softphone/protocol.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace hotline::transport::softphone {
namespace {

using json = nlohmann::json;

Status Start(ClientDecoder& d, std::string_view text) {
  ClientMessage m;
  return d.Decode(text, false, m);
}

TEST(SoftphoneProtocol, AWholeCallDecodes) {
  ClientDecoder d;
  ClientMessage m;
  ASSERT_TRUE(
      d.Decode(R"({"type":"start","version":1,"sample_rate":16000,"caller_id":"+1 555 0100"})",
               false, m)
          .ok());
  EXPECT_EQ(m.type, ClientMessageType::kStart);
  EXPECT_EQ(m.sample_rate_hz, 16000);
  EXPECT_EQ(m.caller_id, "+1 555 0100");
  EXPECT_TRUE(d.started());
  EXPECT_EQ(d.min_audio_bytes(), 320u);   // 10 ms at 16 kHz
  EXPECT_EQ(d.max_audio_bytes(), 6400u);  // 200 ms

  std::string frame(640, '\x01');  // 20 ms
  ASSERT_TRUE(d.Decode(frame, true, m).ok());
  EXPECT_EQ(m.type, ClientMessageType::kAudio);
  EXPECT_EQ(m.audio.size(), 640u);
  EXPECT_EQ(static_cast<const void*>(m.audio.data()), static_cast<const void*>(frame.data()));

  ASSERT_TRUE(d.Decode(R"({"type":"mark","name":"m7"})", false, m).ok());
  EXPECT_EQ(m.type, ClientMessageType::kMark);
  EXPECT_EQ(m.mark_name, "m7");
  ASSERT_TRUE(d.Decode(R"({"type":"dtmf","digit":"#"})", false, m).ok());
  EXPECT_EQ(m.type, ClientMessageType::kDtmf);
  EXPECT_EQ(m.digit, '#');
  ASSERT_TRUE(d.Decode(R"({"type":"hangup","extra":[1,2]})", false, m).ok());
  EXPECT_EQ(m.type, ClientMessageType::kHangup);
  EXPECT_TRUE(d.hung_up());
  Status after = d.Decode(frame, true, m);
  EXPECT_EQ(after.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(after.message().find("after hangup"), std::string::npos);
}

TEST(SoftphoneProtocol, NarrowbandBounds) {
  ClientDecoder d;
  ASSERT_TRUE(Start(d, R"({"type":"start","sample_rate":8000})").ok());
  ClientMessage m;
  EXPECT_TRUE(d.Decode(std::string(160, '\0'), true, m).ok());   // 10 ms
  EXPECT_TRUE(d.Decode(std::string(3200, '\0'), true, m).ok());  // 200 ms
  EXPECT_FALSE(d.Decode(std::string(158, '\0'), true, m).ok());
  EXPECT_FALSE(d.Decode(std::string(3202, '\0'), true, m).ok());
}

TEST(SoftphoneProtocol, BadStartMessagesAreRefusedWithTheirReason) {
  struct Case {
    std::string text;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {R"({"type":"start"})", "'sample_rate' is required"},
      {R"({"type":"start","sample_rate":44100})", "must be 8000 or 16000, got 44100"},
      {R"({"type":"start","sample_rate":"16000"})", "must be an integer, got string"},
      {R"({"type":"start","sample_rate":16000.5})", "must be an integer"},
      {R"({"type":"start","sample_rate":-16000})", "must be 8000 or 16000"},
      {R"({"type":"start","sample_rate":16000,"version":2})", "'version' must be 1"},
      {R"({"type":"start","sample_rate":16000,"caller_id":7})", "'caller_id' must be a string"},
      {R"({"type":"start","sample_rate":16000,"caller_id":"a\nb"})", "printable ASCII"},
      {"{\"type\":\"start\",\"sample_rate\":16000,\"caller_id\":\"" + std::string(65, '1') + "\"}",
       "exceeds 64 bytes"},
      {R"({"sample_rate":16000})", "'type' is required"},
      {R"({"type":5})", "'type' must be a string, got number"},
      {R"(["start"])", "must be a JSON object, got array"},
      {R"({"type":"start",)", "not valid JSON"},
      {"", "not valid JSON"},
      {R"({"type":"mark","name":"x"})", "'mark' before the start message"},
      {R"({"type":"hangup"})", "'hangup' before the start message"},
      {R"({"type":"ring"})", "'ring' before the start message"},
  };
  for (const auto& c : cases) {
    ClientDecoder d;
    Status s = Start(d, c.text);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(s.message().find(c.expect), std::string::npos) << c.text << " -> " << s.message();
    EXPECT_FALSE(d.started()) << c.text;
  }
}

TEST(SoftphoneProtocol, BadMessagesAfterStartAreRefused) {
  struct Case {
    std::string data;
    bool binary;
    const char* expect;
  };
  const std::vector<Case> cases = {
      {std::string(641, '\0'), true, "not a whole number of 16-bit samples"},
      {std::string(2, '\0'), true, "outside 320..6400 bytes"},
      {std::string(6402, '\0'), true, "outside 320..6400 bytes"},
      {R"({"type":"start","sample_rate":16000})", false, "a second start message"},
      {R"({"type":"dtmf","digit":"55"})", false, "one of 0-9, * or #"},
      {R"({"type":"dtmf","digit":"A"})", false, "one of 0-9, * or #"},
      {R"({"type":"dtmf"})", false, "'digit' is required"},
      {R"({"type":"mark"})", false, "'name' is required"},
      {R"({"type":"mark","name":")" + std::string(65, 'm') + "\"}", false, "exceeds 64 bytes"},
      {R"({"type":"ring"})", false, "unknown message type 'ring'"},
      {R"({"type":"audio","payload":"AAAA"})", false, "audio is binary"},
  };
  for (const auto& c : cases) {
    ClientDecoder d;
    ASSERT_TRUE(Start(d, R"({"type":"start","sample_rate":16000})").ok());
    ClientMessage m;
    Status s = d.Decode(c.data, c.binary, m);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.data.substr(0, 60);
    EXPECT_NE(s.message().find(c.expect), std::string::npos) << s.message();
    // The decoder stays usable.
    EXPECT_TRUE(d.Decode(std::string(640, '\0'), true, m).ok());
  }
}

TEST(SoftphoneProtocol, AudioBeforeStartAndOversizedTextAreRefused) {
  ClientDecoder d;
  ClientMessage m;
  Status s = d.Decode(std::string(640, '\0'), true, m);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("audio before the start message"), std::string::npos);
  std::string big =
      R"({"type":"start","sample_rate":16000,"pad":")" + std::string(5000, 'x') + "\"}";
  s = d.Decode(big, false, m);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.message().find("exceeds 4096"), std::string::npos);
}

TEST(SoftphoneProtocol, EncodersProduceJsonObjectsWithAType) {
  auto started = json::parse(EncodeStarted("web-1", 16000));
  EXPECT_EQ(started["type"], "started");
  EXPECT_EQ(started["call_id"], "web-1");
  EXPECT_EQ(started["sample_rate"], 16000);
  EXPECT_EQ(started["version"], kProtocolVersion);

  auto ev = json::parse(EncodeSessionEvent("turn", R"({"turn":1,"answer":"Hi \"there\""})"));
  EXPECT_EQ(ev["type"], "turn");
  EXPECT_EQ(ev["data"]["answer"], "Hi \"there\"");
  EXPECT_TRUE(json::parse(EncodeSessionEvent("x", ""))["data"].is_null());

  EXPECT_EQ(json::parse(EncodeMark("m\"1"))["name"], "m\"1");
  EXPECT_EQ(json::parse(EncodeClear())["type"], "clear");
  auto end = json::parse(EncodeEnd("transfer", "caller asked for an agent"));
  EXPECT_EQ(end["type"], "transfer");
  EXPECT_EQ(end["reason"], "caller asked for an agent");
  // Invalid UTF-8 in a message still gives valid JSON.
  auto err = json::parse(EncodeError(std::string("bad \xff byte")));
  EXPECT_EQ(err["type"], "error");
}

}  // namespace
}  // namespace hotline::transport::softphone
