#include "common/log.h"
#include "common/log_format.h"
#include "common/utf8.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>

namespace hotline {
namespace {

std::shared_mutex& RedactorMutex() {
  static std::shared_mutex m;
  return m;
}
Redactor& CurrentRedactor() {
  static Redactor r;
  return r;
}

class CallbackSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit CallbackSink(std::function<void(std::string_view)> fn) : fn_(std::move(fn)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t buf;
    formatter_->format(msg, buf);
    fn_(std::string_view(buf.data(), buf.size()));
  }
  void flush_() override {}

 private:
  std::function<void(std::string_view)> fn_;
};

}  // namespace

void SetLogRedactor(Redactor redactor) {
  std::unique_lock lock(RedactorMutex());
  CurrentRedactor() = std::move(redactor);
}

namespace {

std::atomic<bool> g_json{false};

constexpr const char* kTextPattern = "%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v";
constexpr const char* kJsonPattern =
    "{\"time\":\"%Y-%m-%dT%H:%M:%S.%e\",\"level\":\"%l\",\"msg\":\"%v\"}";

bool NeedsEscape(unsigned char c) { return c < 0x20 || c == 0x7f; }

// `text` as the inside of a JSON string.
std::string JsonEscaped(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
      ++i;
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\u00";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
      ++i;
    } else if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
    } else if (const size_t n = Utf8SequenceLength(text, i); n > 0) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      out += "\\ufffd";
      ++i;
    }
  }
  return out;
}

void AppendEscaped(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
  switch (c) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
  }
}

}  // namespace

std::string RedactForLog(std::string_view text) {
  std::string redacted;
  {
    std::shared_lock lock(RedactorMutex());
    const Redactor& r = CurrentRedactor();
    redacted = r ? r(text) : std::string(text);
  }
  if (g_json.load(std::memory_order_relaxed)) return JsonEscaped(redacted);
  size_t i = 0;
  while (i < redacted.size() && !NeedsEscape(static_cast<unsigned char>(redacted[i]))) ++i;
  if (i == redacted.size()) return redacted;  // the usual case: nothing to escape
  std::string out = redacted.substr(0, i);
  for (; i < redacted.size(); ++i) {
    const auto c = static_cast<unsigned char>(redacted[i]);
    if (NeedsEscape(c)) {
      AppendEscaped(out, c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

std::string LogEscape(std::string_view text, size_t max_bytes) {
  std::string out;
  const std::string_view kept = text.substr(0, max_bytes);
  out.reserve(kept.size() + 8);
  for (char ch : kept) {
    const auto c = static_cast<unsigned char>(ch);
    if (NeedsEscape(c)) {
      AppendEscaped(out, c);
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out.push_back(ch);
    }
  }
  if (text.size() > max_bytes) out += "...";
  return out;
}

bool InitLogging(std::string_view level) {
  auto lvl = spdlog::level::from_str(std::string(level));
  if (lvl == spdlog::level::off && level != "off") return false;
  // Called again (a command choosing its own level), the same stderr logger is kept.
  auto logger = spdlog::get("hotline");
  if (!logger) logger = spdlog::stderr_color_mt("hotline");
  spdlog::set_default_logger(logger);
  spdlog::set_level(lvl);
  spdlog::set_pattern(g_json.load() ? kJsonPattern : kTextPattern);
  return true;
}

bool SetLogFormat(std::string_view format) {
  if (format != "text" && format != "json") return false;
  g_json.store(format == "json");
  spdlog::set_pattern(format == "json" ? kJsonPattern : kTextPattern);
  return true;
}

void SetLogSinkForTest(std::function<void(std::string_view)> sink) {
  std::shared_ptr<spdlog::logger> logger;
  if (sink) {
    logger = std::make_shared<spdlog::logger>("test", std::make_shared<CallbackSink>(sink));
    logger->set_pattern("%l %v");
  } else {
    logger = spdlog::stderr_color_mt("hotline-" + std::to_string(reinterpret_cast<uintptr_t>(&sink)));
  }
  logger->set_level(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::trace);
}

}  // namespace hotline
