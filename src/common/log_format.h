// Log line safety and format, on top of common/log.h.
//
// Every HLOG_* message goes through RedactForLog (common/log.h), which applies the installed
// redactor and then escapes every control character (below 0x20, and 0x7f) as \n, \r, \t or
// \xNN: no byte from a caller can end a log line, forge the next one, or drive a terminal.
// SetLogFormat("json") makes each line one JSON object for log shippers.
//
// Thread-safety: all functions may be called from any thread; SetLogFormat is meant for start-up.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace hotline {

// `text` made safe to embed in a log line: control characters written as \n, \r, \t or \xNN, a
// backslash as \\, and at most `max_bytes` bytes kept (then "..."). For untrusted text (call
// ids, payload excerpts, transcripts) where bounding it matters too.
std::string LogEscape(std::string_view text, size_t max_bytes = 256);

// Line format of every log message: "text" (time, level, message) or "json" (one object per
// line, {"time":..., "level":..., "msg":...}; the message is escaped as a JSON string, control
// characters as \u00NN and bytes that are not UTF-8 as U+FFFD). False for any other name.
// Takes effect for the following messages.
bool SetLogFormat(std::string_view format);

}  // namespace hotline
