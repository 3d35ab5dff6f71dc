// SseParser: incremental parser for Server-Sent Events (text/event-stream), as streamed by
// OpenAI-compatible chat completion servers ("data: {json}\n\n" ... "data: [DONE]\n\n").
//
// Feed it body bytes in pieces of any size (split anywhere, even inside a line or a UTF-8
// sequence); it calls the handler once per complete event. Follows the WHATWG event-stream rules
// that matter here: lines end in \n, \r\n or \r; "field: value" with one optional space removed;
// several data lines join with \n; lines starting with ':' are comments; a blank line dispatches
// the event; events with no data are not dispatched.
//
// Bounds: a line or an event's data longer than max_event_bytes is an error (kResourceExhausted),
// so a hostile server cannot grow memory without limit.
// Thread-safety: one instance per stream; not thread-safe.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace hotline::net {

struct SseEvent {
  std::string event;  // "event:" field; "" means the default "message"
  std::string data;   // joined "data:" lines
  std::string id;     // last "id:" field seen in this event
};

class SseParser {
 public:
  // A non-OK return from the handler stops parsing and is returned by Feed().
  using Handler = std::function<Status(const SseEvent&)>;

  explicit SseParser(Handler handler, size_t max_event_bytes = 1 << 20)
      : handler_(std::move(handler)), max_event_bytes_(max_event_bytes) {}

  Status Feed(std::string_view bytes);
  // Call at end of stream: a final event not followed by a blank line is dispatched (servers
  // often omit it), a partial line is treated as complete.
  Status Finish();

 private:
  Status Line(std::string_view line);

  Handler handler_;
  size_t max_event_bytes_;
  std::string line_;
  bool last_was_cr_ = false;
  SseEvent event_;
  bool has_data_ = false;
};

}  // namespace hotline::net
