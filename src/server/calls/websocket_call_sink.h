// WebSocketCallSink: the part of a session's way back to the caller that the WebSocket transports
// (Twilio Media Streams, the browser softphone) share: it holds the call's WebSocket until the
// call ends (Detach), and queues messages on it, logging one the socket refused while still open.
// A transport derives from it and turns the session's audio and events into its own messages.
//
// Thread-safety: sends come from the session's workers, Detach from the connection's I/O thread;
// the connection is taken under a mutex and never used under it (its sends only queue).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "server/calls/call_connection.h"
#include "server/http_types.h"

namespace hotline::server {

class WebSocketCallSink : public DetachableCallSink {
 public:
  // The call is over for the transport: drop the connection, so a session that outlives it (its
  // queued work finishing on a worker) never keeps the socket, and through it the server's I/O
  // context, alive. Later sends are ignored.
  void Detach() final;

 protected:
  WebSocketCallSink(std::shared_ptr<WebSocketConnection> ws, std::string call_id)
      : ws_(std::move(ws)), call_id_(std::move(call_id)) {}

  // The call's WebSocket; null once detached.
  std::shared_ptr<WebSocketConnection> Connection();
  // Queue a message; `what` names it in the log line when an open socket refuses it (its send
  // queue is full).
  void SendText(std::string message, std::string_view what);
  void SendBinary(std::string bytes, std::string_view what);
  const std::string& call_id() const { return call_id_; }

 private:
  std::mutex mu_;
  std::shared_ptr<WebSocketConnection> ws_;  // guarded by mu_; null once detached
  const std::string call_id_;
};

}  // namespace hotline::server
