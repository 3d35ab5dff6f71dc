// Internals shared by http_server.cc, http_session.cc and ws_session.cc. Not part of the API.
//
// Lifetimes: HttpServer owns one Shared. Sessions (one per connection) are kept alive by their
// pending asynchronous operations and point at Shared with a plain pointer: Shared's io_context
// is destroyed before the rest of Shared, so no session outlives what it points at. Worker tasks
// hold only weak references to sessions.
#pragma once

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/metrics.h"
#include "common/thread_pool.h"
#include "server/http_server.h"

namespace hotline::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct Route {
  std::string method;  // empty for WebSocket routes
  Handler handler;
  StreamHandler stream;
  WebSocketFactory ws;
  bool on_io_thread = false;  // built-ins that answer at once (healthz, readyz)
};

struct ServerMetrics {
  Gauge& connections_active;
  Counter& connections_total;
  Counter& connections_rejected;
  Counter& requests_2xx;
  Counter& requests_4xx;
  Counter& requests_5xx;
  Histogram& request_seconds;
  Counter& ws_messages_received;
  Counter& ws_messages_sent;
  Counter& ws_too_big;
  explicit ServerMetrics(MetricsRegistry& r);
  void CountStatus(int status);
};

// A connection's session, as Stop() sees it.
class Session {
 public:
  virtual ~Session() = default;
  // Server stopping: finish what is in flight, then close (posts to the session's strand).
  virtual void Shutdown() = 0;
  // Close now (posts to the session's strand).
  virtual void Cut() = 0;
};

struct HttpServer::Shared {
  Shared(const ServerConfig& c, MetricsRegistry& r) : config(c), registry(r), metrics(r) {}

  const ServerConfig config;
  MetricsRegistry& registry;  // what /metrics exposes
  ServerMetrics metrics;
  std::map<std::string, std::vector<Route>, std::less<>> routes;  // by path
  ReadinessCheck readiness;
  std::unique_ptr<ThreadPool> workers;

  std::mutex mu;
  std::condition_variable sessions_changed;
  std::map<uint64_t, std::weak_ptr<Session>> sessions;  // open connections, admitted or not
  uint64_t next_session_id = 1;
  int admitted = 0;   // connections within max_connections
  int rejecting = 0;  // connections over the limit, being answered 503 / 1013
  std::map<std::string, int, std::less<>> per_address;  // admitted connections by client address
  // Bytes of unfinished WebSocket messages buffered by every connection (max_ws_buffered_bytes).
  std::atomic<int64_t> ws_buffered{0};
  bool stopping = false;

  // Registers a session; returns its id.
  uint64_t Register(std::weak_ptr<Session> s);
  void Unregister(uint64_t id);

  // Declared last but one: destroyed before everything above, so handlers it still holds can
  // unregister their sessions; the acceptor goes first of all.
  asio::io_context ioc;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::optional<tcp::acceptor> acceptor;
};

// A connection's place under max_connections; released (and counted down) when destroyed.
// Moves from the HTTP session to the WebSocket session on upgrade.
class ConnectionSlot {
 public:
  // `address`: the client's address, counted under max_connections_per_address while admitted.
  ConnectionSlot(HttpServer::Shared* shared, bool admitted, std::string address = {},
                 std::string refusal = {})
      : shared_(shared),
        admitted_(admitted),
        address_(std::move(address)),
        refusal_(std::move(refusal)) {}
  ~ConnectionSlot();
  bool admitted() const { return admitted_; }
  // Why a connection that is not admitted is refused ("server at max_connections=...").
  const std::string& refusal() const { return refusal_; }

 private:
  HttpServer::Shared* shared_;
  bool admitted_;
  std::string address_;
  std::string refusal_;
};

class WsConnectionImpl;

// Starts serving HTTP on an accepted socket (whose executor is its strand).
void StartHttpSession(HttpServer::Shared* shared, tcp::socket socket,
                      std::unique_ptr<ConnectionSlot> slot);

// Creates the connection object a WebSocket handler gets before the upgrade is accepted.
std::shared_ptr<WsConnectionImpl> NewWsConnection(HttpServer::Shared* shared, std::string remote);
std::shared_ptr<WebSocketConnection> AsConnection(const std::shared_ptr<WsConnectionImpl>& c);
// Takes over an upgraded socket: accepts the handshake for `upgrade`, then runs `handler`
// (null with a non-admitted slot: the upgrade is accepted and closed with 1013).
void StartWsSession(HttpServer::Shared* shared, tcp::socket socket,
                    std::unique_ptr<ConnectionSlot> slot,
                    http::request<http::string_body> upgrade,
                    std::unique_ptr<WebSocketHandler> handler,
                    std::shared_ptr<WsConnectionImpl> connection);

// "HTTP/1.1 404 Not Found\r\n" ... head with Server, Content-Type and the given extra headers.
std::string ResponseHead(int status, std::string_view content_type,
                         const std::vector<Header>& headers, bool keep_alive,
                         std::optional<size_t> content_length);

}  // namespace hotline::server
