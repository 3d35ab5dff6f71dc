// HttpServer: HTTP/1.1 and WebSocket server on Boost.Asio/Beast, for the transports' endpoints
// (Twilio Media Streams), the OpenAI-compatible API of the engine, /metrics and health checks.
//
//   auto server = HttpServer::Create(config);
//   (*server)->Handle("GET", "/v1/models", [](const Request&, const CancelToken&) {...});
//   (*server)->HandleStream("POST", "/v1/chat/completions", ...);   // SSE
//   (*server)->HandleWebSocket("/twilio", factory);
//   (*server)->Start();          // binds; port() is the bound port (config.port 0: a free one)
//   ...
//   (*server)->Stop();           // graceful: stop accepting, close connections, join
//
// Routing is by exact path (the query is not part of it); a path with no route gets 404, a
// route with another method 405. Built in: GET /healthz (200 "ok"), GET /readyz (200 "ready", or
// 503 with the readiness callback's message), GET /metrics (Prometheus text of the server's
// registry: the one given to Create, MetricsRegistry::Global() by default; the server's own
// hotline_server_* series and those of what is installed on it, such as the OpenAI API, go there).
//
// Threads: one io_context run by config.io_threads threads; every connection lives on its own
// strand, so its handlers never run concurrently. I/O threads never block: Handle and
// HandleStream handlers run on a worker pool of config.worker_threads threads owned by the
// server (a full pool answers 503 at once); WebSocket handlers run on the connection's strand and
// must not block (see WebSocketHandler). While a handler runs the server keeps reading the socket,
// so a client that disconnects raises the handler's CancelToken at once.
//
// Limits (ServerConfig): request head -> 431, body -> 413, connections -> 503 or WebSocket close
// 1013, WebSocket message -> close 1009, idle -> closed, slow reader -> bounded queue then closed.
//
// Register routes and the readiness callback before Start(); they are read without locks after.
// Stop() (also run by the destructor) may be called from any thread but a handler's.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/status.h"
#include "server/http_types.h"
#include "server/server_config.h"

namespace hotline {
class MetricsRegistry;
}

namespace hotline::server {

// Readiness: OK when the process can take traffic; otherwise the reason (e.g. "model loading").
using ReadinessCheck = std::function<Status()>;

class HttpServer {
 public:
  // `metrics` must outlive the server (null: MetricsRegistry::Global()).
  static Result<std::unique_ptr<HttpServer>> Create(const ServerConfig& config,
                                                    MetricsRegistry* metrics = nullptr);
  ~HttpServer();

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Route registration; FailedPrecondition after Start(), InvalidArgument for a duplicate or a
  // path that does not start with '/'.
  Status Handle(std::string method, std::string path, Handler handler);
  Status HandleStream(std::string method, std::string path, StreamHandler handler);
  Status HandleWebSocket(std::string path, WebSocketFactory factory);
  void SetReadinessCheck(ReadinessCheck check);

  // Binds and starts the I/O and worker threads. Unavailable when the address cannot be bound.
  Status Start();
  // Stops accepting, closes every connection (WebSockets with 1001 "server shutting down",
  // raising the CancelToken of running handlers), waits up to stop_timeout_ms for them, cuts the
  // rest, joins every thread. Idempotent.
  void Stop();

  // The bound port (after Start()).
  int port() const { return port_; }
  // "http://<host>:<port>" + path ("ws://..." with scheme "ws").
  std::string Url(std::string_view path = "", std::string_view scheme = "http") const;
  // Connections currently open (HTTP and WebSocket).
  int active_connections() const;
  // The registry /metrics exposes.
  MetricsRegistry& metrics_registry() const;

  struct Shared;

 private:
  HttpServer(const ServerConfig& config, MetricsRegistry& metrics);
  Status AddRoute(std::string method, std::string path, Handler handler, StreamHandler stream,
                  WebSocketFactory ws);

  std::shared_ptr<Shared> shared_;
  std::vector<std::thread> io_threads_;
  int port_ = 0;
  bool started_ = false;
  std::atomic<bool> stopped_{false};
};

}  // namespace hotline::server
