#include "server/calls/websocket_call_sink.h"

#include <utility>

#include "common/log.h"

namespace hotline::server {

void WebSocketCallSink::Detach() {
  std::lock_guard<std::mutex> lock(mu_);
  ws_.reset();
}

std::shared_ptr<WebSocketConnection> WebSocketCallSink::Connection() {
  std::lock_guard<std::mutex> lock(mu_);
  return ws_;
}

void WebSocketCallSink::SendText(std::string message, std::string_view what) {
  auto ws = Connection();
  if (ws == nullptr) return;
  Status s = ws->SendText(std::move(message));
  if (!s.ok() && !ws->closed()) {
    HLOG_WARN("call {}: outbound {} dropped: {}", call_id_, what, s.message());
  }
}

void WebSocketCallSink::SendBinary(std::string bytes, std::string_view what) {
  auto ws = Connection();
  if (ws == nullptr) return;
  Status s = ws->SendBinary(std::move(bytes));
  if (!s.ok() && !ws->closed()) {
    HLOG_WARN("call {}: outbound {} dropped: {}", call_id_, what, s.message());
  }
}

}  // namespace hotline::server
