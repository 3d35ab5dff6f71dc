// The browser softphone's WebSocket protocol (transport/softphone/protocol.h): one ClientDecoder
// per connection decodes the browser's messages in order, as /softphone/ws does (start, audio
// frames, marks, DTMF, hang-up; order and bounds). Input: the messages of one connection,
// separated by lines holding only "%%"; a message starting with 'B' is a binary frame (the rest
// its bytes), any other is a text frame (after its first byte).
// Properties: audio frames are whole samples within the declared rate's bounds; the error event
// Hotline sends back for a refused message is one JSON object.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_input.h"
#include "transport/softphone/protocol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace sp = hotline::transport::softphone;
  sp::ClientDecoder decoder;
  sp::ClientMessage message;
  for (std::string_view m : hotline::fuzz::SplitMessages(hotline::fuzz::AsText(data, size))) {
    if (m.empty()) continue;
    const bool binary = m.front() == 'B';
    m.remove_prefix(1);
    const auto s = decoder.Decode(m, binary, message);
    if (!s.ok()) {
      const std::string error = sp::EncodeError(s.message());
      HOTLINE_FUZZ_CHECK(error.size() >= 2 && error.front() == '{' && error.back() == '}');
      continue;
    }
    switch (message.type) {
      case sp::ClientMessageType::kAudio:
        HOTLINE_FUZZ_CHECK(binary && decoder.started());
        HOTLINE_FUZZ_CHECK(message.audio.size() % 2 == 0);
        HOTLINE_FUZZ_CHECK(message.audio.size() >= decoder.min_audio_bytes() &&
                           message.audio.size() <= decoder.max_audio_bytes());
        break;
      case sp::ClientMessageType::kStart:
        HOTLINE_FUZZ_CHECK(message.sample_rate_hz == 8000 || message.sample_rate_hz == 16000);
        HOTLINE_FUZZ_CHECK(message.caller_id.size() <= sp::kMaxCallerIdBytes);
        HOTLINE_FUZZ_CHECK(!sp::EncodeStarted(message.caller_id, message.sample_rate_hz).empty());
        break;
      case sp::ClientMessageType::kMark:
        HOTLINE_FUZZ_CHECK(message.mark_name.size() <= sp::kMaxMarkNameBytes);
        HOTLINE_FUZZ_CHECK(!sp::EncodeMark(message.mark_name).empty());
        break;
      case sp::ClientMessageType::kDtmf:
      case sp::ClientMessageType::kHangup:
        break;
    }
  }
  return 0;
}
