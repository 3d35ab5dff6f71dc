// Shared by the HttpServer tests (http_server_test.cc, ws_session_test.cc): a loopback
// configuration, a server that must build, a polling wait, and a WebSocket handler that echoes.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "server/http_server.h"

namespace hotline::server::testing {

ServerConfig TestConfig() {
  ServerConfig c;
  c.port = 0;
  c.io_threads = 2;
  c.worker_threads = 4;
  c.stop_timeout_ms = 2000;
  return c;
}

std::unique_ptr<HttpServer> MustCreate(const ServerConfig& c) {
  auto s = HttpServer::Create(c);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(s).value();
}

template <typename Pred>
bool WaitFor(Pred p, int timeout_ms = 3000) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    if (p()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return p();
}

// Echoes every message back; records the close.
class EchoHandler : public WebSocketHandler {
 public:
  struct Log {
    std::mutex mu;
    std::condition_variable cv;
    int closes = 0;
    int last_code = 0;
    std::string last_reason;
    int messages = 0;
  };
  EchoHandler(std::shared_ptr<WebSocketConnection> c, std::shared_ptr<Log> log)
      : conn_(std::move(c)), log_(std::move(log)) {}
  void OnMessage(std::string_view data, bool binary) override {
    {
      std::lock_guard lock(log_->mu);
      ++log_->messages;
    }
    if (data == "close-me") return conn_->Close(kCloseNormal, "as asked");
    Status s = binary ? conn_->SendBinary(std::string(data)) : conn_->SendText(std::string(data));
    EXPECT_TRUE(s.ok()) << s;
  }
  void OnClose(uint16_t code, std::string_view reason) override {
    std::lock_guard lock(log_->mu);
    ++log_->closes;
    log_->last_code = code;
    log_->last_reason = std::string(reason);
    log_->cv.notify_all();
  }

 private:
  std::shared_ptr<WebSocketConnection> conn_;
  std::shared_ptr<Log> log_;
};

WebSocketFactory EchoFactory(std::shared_ptr<EchoHandler::Log> log) {
  return
      [log](const Request&,
            std::shared_ptr<WebSocketConnection> c) -> Result<std::unique_ptr<WebSocketHandler>> {
        return std::unique_ptr<WebSocketHandler>(std::make_unique<EchoHandler>(c, log));
      };
}

}  // namespace hotline::server::testing
