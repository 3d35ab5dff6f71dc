// Twilio Media Streams messages (transport/twilio/media_streams.h): one MediaStreamDecoder per
// stream decodes the WebSocket text messages of a call in order, as the /twilio endpoint does
// (JSON, event validation, stream ids, sequence numbers, strict base64 audio). Input: the
// messages of one stream, separated by lines holding only "%%".
// Properties: decoded audio stays within the payload limit and round-trips through base64, and
// the outbound messages build from what was decoded.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_input.h"
#include "transport/base64.h"
#include "transport/twilio/media_streams.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace twilio = hotline::transport::twilio;
  twilio::MediaStreamDecoder decoder;
  twilio::InboundMessage message;
  for (std::string_view text : hotline::fuzz::SplitMessages(hotline::fuzz::AsText(data, size))) {
    if (!decoder.Decode(text, message).ok()) continue;
    if (message.event != twilio::EventType::kMedia) continue;
    HOTLINE_FUZZ_CHECK(message.payload.size() <= decoder.limits().max_payload_bytes);
    const std::string encoded = hotline::transport::Base64Encode(message.payload);
    auto decoded = hotline::transport::Base64Decode(encoded);
    HOTLINE_FUZZ_CHECK(decoded.ok() && *decoded == message.payload);
    // What Hotline sends back on this stream builds from the decoded ids without throwing.
    HOTLINE_FUZZ_CHECK(!twilio::EncodeMedia(decoder.stream_sid(), message.payload).empty());
    HOTLINE_FUZZ_CHECK(!twilio::EncodeMark(decoder.stream_sid(), message.stream_sid).empty());
  }
  return 0;
}
