#include "net/sse_parser.h"

namespace hotline::net {

Status SseParser::Feed(std::string_view bytes) {
  for (char c : bytes) {
    if (c == '\n' && last_was_cr_) {  // the \n of a \r\n pair: the line was already taken
      last_was_cr_ = false;
      continue;
    }
    last_was_cr_ = (c == '\r');
    if (c == '\n' || c == '\r') {
      std::string line = std::move(line_);
      line_.clear();
      RETURN_IF_ERROR(Line(line));
      continue;
    }
    if (line_.size() >= max_event_bytes_) {
      return ResourceExhaustedError("server-sent event line exceeds " +
                                    std::to_string(max_event_bytes_) + " bytes");
    }
    line_.push_back(c);
  }
  return Status::Ok();
}

Status SseParser::Finish() {
  if (!line_.empty()) {
    std::string line = std::move(line_);
    line_.clear();
    RETURN_IF_ERROR(Line(line));
  }
  return Line("");
}

Status SseParser::Line(std::string_view line) {
  if (line.empty()) {
    if (!has_data_) {
      event_ = SseEvent();
      return Status::Ok();
    }
    SseEvent ev = std::move(event_);
    event_ = SseEvent();
    has_data_ = false;
    return handler_ ? handler_(ev) : Status::Ok();
  }
  if (line[0] == ':') return Status::Ok();  // comment / keep-alive
  size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (event_.data.size() + value.size() + 1 > max_event_bytes_) {
      return ResourceExhaustedError("server-sent event data exceeds " +
                                    std::to_string(max_event_bytes_) + " bytes");
    }
    if (has_data_) event_.data.push_back('\n');
    event_.data.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_.event = std::string(value);
  } else if (field == "id") {
    event_.id = std::string(value);
  }  // "retry" and unknown fields are ignored, as the spec says
  return Status::Ok();
}

}  // namespace hotline::net
