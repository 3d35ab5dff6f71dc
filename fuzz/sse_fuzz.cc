// Server-Sent Events (net/sse_parser.h) as the OpenAI-compatible LLM client reads a streamed chat
// completion: the SseParser over the response body in the pieces the socket returns, and each
// event's data through ParseChatCompletionChunk (llm/openai). Input: one byte choosing how the
// body is cut into reads (fuzz_input.h, StreamChunker), then the body.
// Properties: the events and the outcome do not depend on how the body was cut; no event's data
// is over the parser's bound.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "llm/openai/openai_language_model.h"
#include "net/sse_parser.h"

namespace {

// Small, so that bodies the fuzzer makes reach the bound.
constexpr size_t kMaxEventBytes = 512;

struct Parsed {
  std::vector<hotline::net::SseEvent> events;
  hotline::StatusCode code = hotline::StatusCode::kOk;
};

bool SameEvents(const std::vector<hotline::net::SseEvent>& a,
                const std::vector<hotline::net::SseEvent>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.event == y.event && x.data == y.data && x.id == y.id;
  });
}

template <typename NextPiece>
Parsed Parse(NextPiece next) {
  Parsed out;
  hotline::net::SseParser parser(
      [&](const hotline::net::SseEvent& ev) {
        HOTLINE_FUZZ_CHECK(ev.data.size() <= kMaxEventBytes);
        out.events.push_back(ev);
        if (ev.data == "[DONE]") return hotline::Status::Ok();
        auto chunk = hotline::llm::ParseChatCompletionChunk(ev.data);
        if (chunk.ok() && chunk->completion_tokens) {
          HOTLINE_FUZZ_CHECK(*chunk->completion_tokens >= 0);
        }
        return hotline::Status::Ok();
      },
      kMaxEventBytes);
  for (std::string_view piece = next(); !piece.empty(); piece = next()) {
    hotline::Status s = parser.Feed(piece);
    if (!s.ok()) {
      out.code = s.code();
      return out;
    }
  }
  out.code = parser.Finish().code();
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hotline::fuzz::StreamChunker chunker(data, size);
  const Parsed pieces = Parse([&] { return chunker.Next(); });
  bool given = false;
  const Parsed whole = Parse([&] {
    if (given) return std::string_view();
    given = true;
    return chunker.stream();
  });
  HOTLINE_FUZZ_CHECK(pieces.code == whole.code);
  HOTLINE_FUZZ_CHECK(SameEvents(pieces.events, whole.events));
  return 0;
}
