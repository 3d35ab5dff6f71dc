#include "net/sse_parser.h"

#include <gtest/gtest.h>

#include <vector>

namespace hotline::net {
namespace {

std::vector<SseEvent> ParseAll(const std::vector<std::string>& pieces, bool finish = true) {
  std::vector<SseEvent> events;
  SseParser p([&](const SseEvent& e) {
    events.push_back(e);
    return Status::Ok();
  });
  for (const auto& piece : pieces) EXPECT_TRUE(p.Feed(piece).ok());
  if (finish) {
    EXPECT_TRUE(p.Finish().ok());
  }
  return events;
}

TEST(SseParser, OpenAiStreamSplitAnywhere) {
  std::string stream =
      "data: {\"a\":1}\n\n: keep-alive\n\nevent: delta\r\ndata: x\r\ndata:y\r\nid: 7\r\n\r\n"
      "data: [DONE]\n\n";
  // Every split point gives the same events.
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    auto events = ParseAll({stream.substr(0, cut), stream.substr(cut)});
    ASSERT_EQ(events.size(), 3u) << "cut at " << cut;
    EXPECT_EQ(events[0].data, "{\"a\":1}");
    EXPECT_EQ(events[1].event, "delta");
    EXPECT_EQ(events[1].data, "x\ny");
    EXPECT_EQ(events[1].id, "7");
    EXPECT_EQ(events[2].data, "[DONE]");
  }
}

TEST(SseParser, CrOnlyLineEndingsAndFinalEventWithoutBlankLine) {
  auto events = ParseAll({"data: one\r\rdata: two"});
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data, "one");
  EXPECT_EQ(events[1].data, "two");
}

TEST(SseParser, EventWithoutDataIsNotDispatched) {
  EXPECT_TRUE(ParseAll({"event: ping\n\n"}).empty());
}

TEST(SseParser, BoundsLineAndEventSize) {
  SseParser p([](const SseEvent&) { return Status::Ok(); }, 64);
  EXPECT_EQ(p.Feed("data: " + std::string(100, 'x')).code(), StatusCode::kResourceExhausted);
  SseParser q([](const SseEvent&) { return Status::Ok(); }, 64);
  Status s;
  for (int i = 0; i < 10 && s.ok(); ++i) s = q.Feed("data: 0123456789\n");
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
}

TEST(SseParser, HandlerErrorStopsParsing) {
  int calls = 0;
  SseParser p([&](const SseEvent&) {
    ++calls;
    return CancelledError("stop");
  });
  EXPECT_EQ(p.Feed("data: a\n\ndata: b\n\n").code(), StatusCode::kCancelled);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace hotline::net
