// Logging: spdlog with one process-wide logger, and a redaction hook for personal data.
//
// Every message passes through the installed redactor before it is formatted into a sink, so a
// module that knows what personal data looks like (answer/ redacts card numbers, PINs, phone
// numbers) installs it once at start-up and no later log line can leak it.
//
// Thread-safety: all functions may be called from any thread. SetLogRedactor is meant for
// start-up; it is safe but not cheap to call later.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

namespace hotline {

using Redactor = std::function<std::string(std::string_view)>;

// Installs `redactor` (nullptr removes it). Applied to every log message's text.
void SetLogRedactor(Redactor redactor);

// Applies the installed redactor (identity when none).
std::string RedactForLog(std::string_view text);

// Sets up the process logger: level "trace|debug|info|warn|error|off", messages to stderr.
// Returns false and leaves the level unchanged when `level` is not one of those.
bool InitLogging(std::string_view level);

// Redirects log output into `sink` (tests); nullptr restores stderr.
void SetLogSinkForTest(std::function<void(std::string_view line)> sink);

}  // namespace hotline

// Use these rather than spdlog directly: they apply redaction, and format nothing when the
// level is off.
#define HLOG_AT_(lvl, ...)                                                            \
  do {                                                                                \
    if (::spdlog::should_log(lvl)) {                                                  \
      ::spdlog::log(lvl, "{}", ::hotline::RedactForLog(::fmt::format(__VA_ARGS__))); \
    }                                                                                 \
  } while (0)
#define HLOG_DEBUG(...) HLOG_AT_(::spdlog::level::debug, __VA_ARGS__)
#define HLOG_INFO(...) HLOG_AT_(::spdlog::level::info, __VA_ARGS__)
#define HLOG_WARN(...) HLOG_AT_(::spdlog::level::warn, __VA_ARGS__)
#define HLOG_ERROR(...) HLOG_AT_(::spdlog::level::err, __VA_ARGS__)
