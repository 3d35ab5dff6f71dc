#include "transport/twilio/media_streams.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "transport/base64.h"

namespace hotline::transport::twilio {
namespace {

using json = nlohmann::json;

const char kConnected[] = R"({"event":"connected","protocol":"Call","version":"1.0.0"})";
const char kStart[] = R"({"event":"start","sequenceNumber":"1","streamSid":"MZ123",
  "start":{"streamSid":"MZ123","accountSid":"AC1","callSid":"CA1","tracks":["inbound"],
  "customParameters":{"caller":"+15550100","lang":"en"},
  "mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1}}})";

std::string Media(int seq, const std::string& payload_b64, const std::string& sid = "MZ123",
                  int timestamp = 20) {
  return R"({"event":"media","sequenceNumber":")" + std::to_string(seq) +
         R"(","streamSid":")" + sid + R"(","media":{"track":"inbound","chunk":")" +
         std::to_string(seq - 1) + R"(","timestamp":")" + std::to_string(timestamp) +
         R"(","payload":")" + payload_b64 + R"("}})";
}

MediaStreamDecoder Started() {
  MediaStreamDecoder d;
  EXPECT_TRUE(d.Decode(kConnected).ok());
  EXPECT_TRUE(d.Decode(kStart).ok());
  return d;
}

TEST(TwilioMediaStreams, DecodesAWholeCall) {
  MediaStreamDecoder d;
  auto c = d.Decode(kConnected);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->event, EventType::kConnected);
  EXPECT_EQ(c->protocol, "Call");
  EXPECT_EQ(c->version, "1.0.0");

  auto s = d.Decode(kStart);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->event, EventType::kStart);
  EXPECT_EQ(s->stream_sid, "MZ123");
  EXPECT_EQ(s->account_sid, "AC1");
  EXPECT_EQ(s->call_sid, "CA1");
  EXPECT_EQ(s->sequence_number, 1);
  ASSERT_EQ(s->tracks.size(), 1u);
  EXPECT_EQ(s->tracks[0], "inbound");
  ASSERT_EQ(s->custom_parameters.size(), 2u);
  EXPECT_EQ(s->custom_parameters[0].first, "caller");
  EXPECT_EQ(s->custom_parameters[0].second, "+15550100");
  EXPECT_EQ(s->media_format.encoding, "audio/x-mulaw");
  EXPECT_EQ(s->media_format.sample_rate_hz, 8000);
  EXPECT_EQ(s->media_format.channels, 1);
  EXPECT_TRUE(d.started());
  EXPECT_EQ(d.stream_sid(), "MZ123");

  std::string ulaw(160, '\0');
  for (int i = 0; i < 160; ++i) ulaw[i] = static_cast<char>(0xff - i);
  InboundMessage m;
  ASSERT_TRUE(d.Decode(Media(2, Base64Encode(ulaw), "MZ123", 0), m).ok());
  EXPECT_EQ(m.event, EventType::kMedia);
  EXPECT_EQ(m.payload, ulaw);
  EXPECT_EQ(m.sequence_number, 2);
  EXPECT_EQ(m.chunk, 1);
  EXPECT_EQ(m.timestamp_ms, 0);
  EXPECT_EQ(m.track, "inbound");

  auto dtmf = d.Decode(
      R"({"event":"dtmf","streamSid":"MZ123","sequenceNumber":"3","dtmf":{"track":"inbound_track","digit":"#"}})");
  ASSERT_TRUE(dtmf.ok()) << dtmf.status();
  EXPECT_EQ(dtmf->digit, '#');
  EXPECT_EQ(dtmf->track, "inbound_track");

  auto mark = d.Decode(
      R"({"event":"mark","sequenceNumber":"4","streamSid":"MZ123","mark":{"name":"reply-1"}})");
  ASSERT_TRUE(mark.ok()) << mark.status();
  EXPECT_EQ(mark->mark_name, "reply-1");

  auto stop = d.Decode(
      R"({"event":"stop","sequenceNumber":"5","streamSid":"MZ123","stop":{"accountSid":"AC1","callSid":"CA1"}})");
  ASSERT_TRUE(stop.ok()) << stop.status();
  EXPECT_EQ(stop->event, EventType::kStop);
  EXPECT_EQ(stop->call_sid, "CA1");
  EXPECT_TRUE(d.stopped());
  EXPECT_EQ(d.stats().messages, 6u);
  EXPECT_EQ(d.stats().media_messages, 1u);
  EXPECT_EQ(d.stats().payload_bytes, 160u);
  EXPECT_EQ(d.stats().sequence_gaps, 0u);
  EXPECT_FALSE(d.Decode(Media(6, Base64Encode(ulaw))).ok());  // after stop
}

TEST(TwilioMediaStreams, AcceptsNumericCountersAndMinimalMessages) {
  MediaStreamDecoder d = Started();
  auto m = d.Decode(
      R"({"event":"media","sequenceNumber":2,"streamSid":"MZ123","media":{"timestamp":40,"payload":""}})");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->sequence_number, 2);
  EXPECT_EQ(m->timestamp_ms, 40);
  EXPECT_EQ(m->chunk, -1);
  EXPECT_TRUE(m->payload.empty());
  auto stop = d.Decode(R"({"event":"stop","streamSid":"MZ123"})");
  EXPECT_TRUE(stop.ok()) << stop.status();
}

TEST(TwilioMediaStreams, CountsSequenceGapsAndReordering) {
  MediaStreamDecoder d = Started();
  const std::string p = Base64Encode(std::string(160, '\x7f'));
  for (int seq : {2, 3, 5, 4, 6, 6}) ASSERT_TRUE(d.Decode(Media(seq, p)).ok());
  EXPECT_EQ(d.stats().sequence_gaps, 1u);  // 3 -> 5
  EXPECT_EQ(d.stats().out_of_order, 2u);   // 4 after 5, 6 twice
}

TEST(TwilioMediaStreams, UnknownEventsAreIgnoredButCounted) {
  MediaStreamDecoder d = Started();
  auto m = d.Decode(R"({"event":"transcription","streamSid":"MZ123","text":{"a":1}})");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->event, EventType::kUnknown);
  EXPECT_EQ(m->event_name, "transcription");
  EXPECT_EQ(d.stats().unknown_events, 1u);
}

TEST(TwilioMediaStreams, RejectsMalformedMessagesWithClearErrors) {
  const std::string p = Base64Encode(std::string(160, '\x7f'));
  struct Case {
    std::string text;
    std::string expect;  // a piece of the error message
    StatusCode code = StatusCode::kInvalidArgument;
  } cases[] = {
      {"", "not valid JSON"},
      {"{\"event\":\"media\"", "not valid JSON"},
      {"[1,2]", "must be a JSON object"},
      {"\"media\"", "must be a JSON object"},
      {R"({"streamSid":"MZ123"})", "missing field 'event'"},
      {R"({"event":7})", "'event' must be a string"},
      {R"({"event":"media","streamSid":"MZ123"})", "missing field 'media'"},
      {R"({"event":"media","streamSid":"MZ123","media":"x"})", "'media' must be an object"},
      {R"({"event":"media","streamSid":"MZ123","media":{"timestamp":"0"}})",
       "missing field 'media.payload'"},
      {R"({"event":"media","streamSid":"MZ123","media":{"timestamp":"0","payload":5}})",
       "'media.payload' must be a base64 string"},
      {R"({"event":"media","streamSid":"MZ123","media":{"timestamp":"0","payload":"abc"}})",
       "media.payload: base64: length 3"},
      {R"({"event":"media","streamSid":"MZ123","media":{"timestamp":"0","payload":"ab$="}})",
       "invalid character '$'"},
      {R"({"event":"media","streamSid":"MZ123","media":{"timestamp":"-5","payload":""}})",
       "'media.timestamp' must be a non-negative integer"},
      {R"({"event":"media","streamSid":"MZ123","media":{"timestamp":1.5,"payload":""}})",
       "'media.timestamp' must be a non-negative integer"},
      {R"({"event":"media","streamSid":"MZ123","media":{"payload":""}})",
       "missing field 'media.timestamp'"},
      {R"({"event":"media","sequenceNumber":"x1","streamSid":"MZ123","media":{"timestamp":"0","payload":""}})",
       "'sequenceNumber' must be a non-negative integer"},
      {Media(2, p, "MZother"), "for stream 'MZother' on stream 'MZ123'"},
      {R"({"event":"media","media":{"timestamp":"0","payload":""}})", "missing field 'streamSid'"},
      {R"({"event":"dtmf","streamSid":"MZ123","dtmf":{"digit":"12"}})", "'dtmf.digit' must be"},
      {R"({"event":"dtmf","streamSid":"MZ123","dtmf":{"digit":"x"}})", "'dtmf.digit' must be"},
      {R"({"event":"mark","streamSid":"MZ123","mark":{}})", "missing field 'mark.name'"},
      {kStart, "a second 'start'"},
      {Media(2, Base64Encode(std::string(8001, 'x'))), "exceeds the limit of 8000",
       StatusCode::kResourceExhausted},
      {"{\"event\":\"media\",\"pad\":\"" + std::string(70000, 'x') + "\"}", "exceeds the limit",
       StatusCode::kResourceExhausted},
  };
  for (const Case& c : cases) {
    MediaStreamDecoder d = Started();
    auto m = d.Decode(c.text);
    ASSERT_FALSE(m.ok()) << "accepted: " << c.text.substr(0, 200);
    EXPECT_EQ(m.status().code(), c.code) << m.status();
    EXPECT_NE(m.status().message().find(c.expect), std::string::npos)
        << "message: " << m.status().message() << "\nexpected to contain: " << c.expect;
    // The decoder stays usable after an error.
    EXPECT_TRUE(d.Decode(Media(50, p)).ok());
  }
}

TEST(TwilioMediaStreams, ValidatesStart) {
  auto start_with = [](const std::string& inner) {
    return R"({"event":"start","streamSid":"MZ1","start":{)" + inner + "}}";
  };
  const std::string fmt =
      R"("mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":8000,"channels":1})";
  struct Case {
    std::string text;
    std::string expect;
  } cases[] = {
      {R"({"event":"start","streamSid":"MZ1"})", "missing field 'start'"},
      {start_with(R"("callSid":"CA1",)" + fmt), "missing field 'start.accountSid'"},
      {start_with(R"("accountSid":"AC1","callSid":"CA1")"), "missing field 'start.mediaFormat'"},
      {start_with(R"("accountSid":"AC1","callSid":"CA1","mediaFormat":{"encoding":"audio/l16","sampleRate":16000,"channels":1})"),
       "unsupported media format audio/l16 16000 Hz"},
      {start_with(R"("accountSid":"AC1","callSid":"CA1","mediaFormat":{"encoding":"audio/x-mulaw","sampleRate":"8k","channels":1})"),
       "'start.mediaFormat.sampleRate' must be"},
      {start_with(R"("accountSid":"AC1","callSid":"CA1","customParameters":{"a":1},)" + fmt),
       "start.customParameters.a must be a string"},
      {start_with(R"("accountSid":"AC1","callSid":"CA1","customParameters":[],)" + fmt),
       "'start.customParameters' must be an object"},
      {start_with(R"("accountSid":"AC1","callSid":"CA1","tracks":"inbound",)" + fmt),
       "'start.tracks' must be an array"},
      {start_with(R"("streamSid":"MZ2","accountSid":"AC1","callSid":"CA1",)" + fmt),
       "differs from streamSid"},
      {R"({"event":"media","streamSid":"MZ1","media":{"timestamp":"0","payload":""}})",
       "'media' before 'start'"},
  };
  for (const Case& c : cases) {
    MediaStreamDecoder d;
    auto m = d.Decode(c.text);
    ASSERT_FALSE(m.ok()) << "accepted: " << c.text;
    EXPECT_NE(m.status().message().find(c.expect), std::string::npos)
        << "message: " << m.status().message() << "\nexpected to contain: " << c.expect;
    EXPECT_FALSE(d.started());
  }
  MediaStreamLimits few;
  few.max_custom_parameters = 1;
  MediaStreamDecoder d(few);
  auto m = d.Decode(kStart);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kResourceExhausted);
}

TEST(TwilioMediaStreams, EncodesOutboundMessages) {
  std::string ulaw = {'\x00', '\x7f', '\xff', '\x10'};
  json media = json::parse(EncodeMedia("MZ\"9", ulaw));
  EXPECT_EQ(media["event"], "media");
  EXPECT_EQ(media["streamSid"], "MZ\"9");
  EXPECT_EQ(*Base64Decode(media["media"]["payload"].get<std::string>()), ulaw);
  json mark = json::parse(EncodeMark("MZ1", "reply-1"));
  EXPECT_EQ(mark, json::parse(R"({"event":"mark","streamSid":"MZ1","mark":{"name":"reply-1"}})"));
  json clear = json::parse(EncodeClear("MZ1"));
  EXPECT_EQ(clear, json::parse(R"({"event":"clear","streamSid":"MZ1"})"));
  // What we send, Twilio's own decoder shape would accept back as a media message.
  MediaStreamDecoder d = Started();
  json echoed = media;
  echoed["streamSid"] = "MZ123";
  echoed["media"]["timestamp"] = "0";
  auto back = d.Decode(echoed.dump());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->payload, ulaw);
}

}  // namespace
}  // namespace hotline::transport::twilio
