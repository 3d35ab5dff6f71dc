// The server's view of HTTP: a parsed Request, a buffered Response, a ResponseStream for bodies
// produced piece by piece (Server-Sent Events), and the WebSocket handler interface.
//
// Ownership and threads are spelled out per type; the short version: a Request is a value the
// handler may keep; a ResponseStream and a WebSocketConnection may be used from any thread, and
// both are bounded, so a slow client never grows memory without limit.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/cancel_token.h"

namespace hotline::server {

struct Header {
  std::string name;
  std::string value;
};

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string target;  // "/v1/models?x=1" as sent
  std::string path;    // "/v1/models"
  std::string query;   // "x=1" (no '?'), "" when absent
  std::vector<Header> headers;
  std::string body;    // at most ServerConfig::max_request_body_bytes
  std::string remote;  // "127.0.0.1:54321"
  // Value of the first header named `name` (case-insensitive), "" when absent.
  std::string HeaderValue(std::string_view name) const;
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::vector<Header> headers;  // extra headers; Content-Length/Connection are set by the server
  std::string body;

  static Response Text(int status, std::string body);
  static Response Json(int status, std::string body);
};

// A response whose body is written as it is produced (chunked transfer coding). Used from the
// handler's (worker) thread; every call may block while the client is behind (the bytes queued
// for it exceed ServerConfig::max_send_queue_bytes), for at most the idle timeout.
class ResponseStream {
 public:
  virtual ~ResponseStream() = default;
  // Sends the status line and headers. Call once, before Write. False once the client is gone.
  virtual bool Begin(int status, std::string_view content_type,
                     const std::vector<Header>& headers = {}) = 0;
  // Sends one piece of body (empty pieces are skipped). False once the client is gone.
  virtual bool Write(std::string_view data) = 0;
  // Ends the body. The server ends it for a handler that returns without calling End.
  virtual bool End() = 0;
  // Raised when the client disconnects, a write fails or the server stops: stop producing.
  virtual const CancelToken& cancel() const = 0;
};

// A buffered handler. `cancel` is raised when the client disconnects or the server stops.
using Handler = std::function<Response(const Request&, const CancelToken& cancel)>;
// A streaming handler: writes its response through `out`.
using StreamHandler = std::function<void(const Request&, ResponseStream& out)>;

// WebSocket close codes (RFC 6455 §7.4.1).
enum CloseCode : uint16_t {
  kCloseNormal = 1000,
  kCloseGoingAway = 1001,
  kCloseProtocolError = 1002,
  kCloseAbnormal = 1006,  // never sent: the connection ended without a close frame
  kClosePolicy = 1008,
  kCloseTooBig = 1009,
  kCloseInternalError = 1011,
  kCloseTryAgainLater = 1013,
};

// One open WebSocket, as its handler (and whatever the handler hands it to) sees it.
// Thread-safety: every method may be called from any thread, also after the socket closed.
// Nothing blocks: sends are queued (bounded by ServerConfig::max_send_queue_bytes) and written
// by the server's I/O threads in order.
class WebSocketConnection {
 public:
  virtual ~WebSocketConnection() = default;
  // Queues one message. ResourceExhausted when the client is so far behind that the queue is
  // full (the message is dropped; the connection stays open), FailedPrecondition once closing.
  virtual Status SendText(std::string text) = 0;
  virtual Status SendBinary(std::string bytes) = 0;
  // Sends a close frame with `code` and `reason` (cut to 123 bytes) after the queued messages,
  // then closes. Later sends fail. Idempotent: the first call wins.
  virtual void Close(uint16_t code, std::string reason) = 0;
  virtual bool closed() const = 0;
  // Bytes queued and not yet written.
  virtual int64_t queued_bytes() const = 0;
  virtual const std::string& remote() const = 0;
};

// Receives one WebSocket's events. The server calls OnMessage and OnClose on the connection's
// I/O strand: one at a time for a connection, never concurrently, never after OnClose. They must
// not block: hand slow work to your own pool (a call's Strand) and answer through the
// connection. OnClose is called exactly once, with the peer's close code (1006 when the
// connection just dropped) or the code the server closed with.
class WebSocketHandler {
 public:
  virtual ~WebSocketHandler() = default;
  virtual void OnMessage(std::string_view data, bool binary) = 0;
  virtual void OnClose(uint16_t code, std::string_view reason) = 0;
};

// Makes the handler for a new WebSocket from its upgrade request (path, query, headers) and its
// connection, on an I/O thread (must not block). An error rejects the upgrade with an HTTP
// status: PermissionDenied 403, NotFound 404, ResourceExhausted/Unavailable 503, others 400.
using WebSocketFactory = std::function<Result<std::unique_ptr<WebSocketHandler>>(
    const Request& upgrade, std::shared_ptr<WebSocketConnection> connection)>;

}  // namespace hotline::server
