#include "common/log.h"

#include <memory>
#include <mutex>
#include <shared_mutex>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

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

std::string RedactForLog(std::string_view text) {
  std::shared_lock lock(RedactorMutex());
  const Redactor& r = CurrentRedactor();
  return r ? r(text) : std::string(text);
}

bool InitLogging(std::string_view level) {
  auto lvl = spdlog::level::from_str(std::string(level));
  if (lvl == spdlog::level::off && level != "off") return false;
  // Called again (a command choosing its own level), the same stderr logger is kept.
  auto logger = spdlog::get("hotline");
  if (!logger) logger = spdlog::stderr_color_mt("hotline");
  spdlog::set_default_logger(logger);
  spdlog::set_level(lvl);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
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
