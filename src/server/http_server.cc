#include "server/http_server.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>

#include "common/log.h"
#include "server/server_internal.h"

namespace hotline::server {
namespace {
constexpr const char* kResponsesHelp = "HTTP responses sent, by status class";
}  // namespace

ServerMetrics::ServerMetrics(MetricsRegistry& r)
    : connections_active(
          r.GetGauge("hotline_server_connections_active", "Open HTTP and WebSocket connections")),
      connections_total(r.GetCounter("hotline_server_connections_total", "Connections accepted")),
      connections_rejected(
          r.GetCounter("hotline_server_connections_rejected_total",
                       "Connections over max_connections (answered 503 / close 1013, or dropped)")),
      requests_2xx(
          r.GetCounter("hotline_server_http_responses_total", kResponsesHelp, {{"class", "2xx"}})),
      requests_4xx(
          r.GetCounter("hotline_server_http_responses_total", kResponsesHelp, {{"class", "4xx"}})),
      requests_5xx(
          r.GetCounter("hotline_server_http_responses_total", kResponsesHelp, {{"class", "5xx"}})),
      request_seconds(
          r.GetHistogram("hotline_server_http_request_seconds",
                         "Time from a request's arrival to its last response byte written",
                         LatencyBucketsSeconds())),
      ws_messages_received(
          r.GetCounter("hotline_server_ws_messages_received_total", "WebSocket messages received")),
      ws_messages_sent(
          r.GetCounter("hotline_server_ws_messages_sent_total", "WebSocket messages sent")),
      ws_too_big(r.GetCounter("hotline_server_ws_too_big_total",
                              "WebSockets closed with 1009 for a message over "
                              "max_ws_message_bytes")) {}

void ServerMetrics::CountStatus(int status) {
  if (status >= 500) {
    requests_5xx.Increment();
  } else if (status >= 400) {
    requests_4xx.Increment();
  } else {
    requests_2xx.Increment();
  }
}

uint64_t HttpServer::Shared::Register(std::weak_ptr<Session> s) {
  std::lock_guard lock(mu);
  if (stopping) return 0;
  uint64_t id = next_session_id++;
  sessions.emplace(id, std::move(s));
  return id;
}

void HttpServer::Shared::Unregister(uint64_t id) {
  {
    std::lock_guard lock(mu);
    sessions.erase(id);
  }
  sessions_changed.notify_all();
}

ConnectionSlot::~ConnectionSlot() {
  {
    std::lock_guard lock(shared_->mu);
    if (admitted_) {
      --shared_->admitted;
      shared_->metrics.connections_active.Set(shared_->admitted);
      if (auto it = shared_->per_address.find(address_); it != shared_->per_address.end()) {
        if (--it->second <= 0) shared_->per_address.erase(it);
      }
    } else {
      --shared_->rejecting;
    }
  }
  shared_->sessions_changed.notify_all();
}

namespace {

// Accepts connections; each new socket gets its own strand.
class Acceptor : public std::enable_shared_from_this<Acceptor> {
 public:
  explicit Acceptor(HttpServer::Shared* shared)
      : shared_(shared), retry_(shared->acceptor->get_executor()) {}

  void Accept() {
    shared_->acceptor->async_accept(
        asio::make_strand(shared_->ioc),
        [self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
          self->OnAccept(ec, std::move(socket));
        });
  }

 private:
  void OnAccept(beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !shared_->acceptor->is_open()) return;
    if (ec) {  // out of file descriptors and the like: back off briefly rather than spin
      HLOG_WARN("server: accept failed: {}", ec.message());
      retry_.expires_after(std::chrono::milliseconds(50));
      retry_.async_wait([self = shared_from_this()](beast::error_code) { self->Accept(); });
      return;
    }
    shared_->metrics.connections_total.Increment();
    bool admitted = false;
    bool rejected = false;
    beast::error_code peer_ec;
    const auto peer = socket.remote_endpoint(peer_ec);
    const std::string address = peer_ec ? std::string() : peer.address().to_string();
    std::string refusal;
    {
      std::lock_guard lock(shared_->mu);
      const int from_address =
          shared_->per_address.count(address) ? shared_->per_address.find(address)->second : 0;
      if (shared_->admitted < shared_->config.max_connections &&
          from_address < shared_->config.max_connections_per_address) {
        ++shared_->admitted;
        ++shared_->per_address[address];
        admitted = true;
        shared_->metrics.connections_active.Set(shared_->admitted);
      } else if (shared_->rejecting < 64) {
        ++shared_->rejecting;  // answered 503 / 1013
      } else {
        rejected = true;  // too many even to answer: drop
      }
    }
    if (!admitted) {
      shared_->metrics.connections_rejected.Increment();
      std::lock_guard lock(shared_->mu);
      refusal = shared_->admitted >= shared_->config.max_connections
                    ? "server at max_connections=" + std::to_string(shared_->config.max_connections)
                    : "too many connections from " + address + " (max_connections_per_address=" +
                          std::to_string(shared_->config.max_connections_per_address) + ")";
    }
    if (rejected) {
      beast::error_code ignored;
      socket.close(ignored);
    } else {
      StartHttpSession(shared_, std::move(socket),
                       std::make_unique<ConnectionSlot>(shared_, admitted, address, refusal));
    }
    Accept();
  }

  HttpServer::Shared* shared_;
  asio::steady_timer retry_;
};

}  // namespace

HttpServer::HttpServer(const ServerConfig& config, MetricsRegistry& metrics)
    : shared_(std::make_shared<Shared>(config, metrics)) {}

Result<std::unique_ptr<HttpServer>> HttpServer::Create(const ServerConfig& config,
                                                       MetricsRegistry* metrics) {
  RETURN_IF_ERROR(ValidateConfig(config).WithContext("server"));
  std::unique_ptr<HttpServer> server(
      new HttpServer(config, metrics != nullptr ? *metrics : MetricsRegistry::Global()));
  Status s = server->Handle("GET", "/healthz", [](const Request&, const CancelToken&) {
    return Response::Text(200, "ok\n");
  });
  if (s.ok()) {
    MetricsRegistry* registry = &server->shared_->registry;
    s = server->Handle("GET", "/metrics", [registry](const Request&, const CancelToken&) {
      RefreshProcessMetrics(*registry);
      Response r = Response::Text(200, registry->ExposeText());
      r.content_type = "text/plain; version=0.0.4; charset=utf-8";
      return r;
    });
  }
  if (s.ok()) {
    Shared* shared = server->shared_.get();
    s = server->Handle("GET", "/readyz", [shared](const Request&, const CancelToken&) {
      Status ready = shared->readiness ? shared->readiness() : Status::Ok();
      if (ready.ok()) return Response::Text(200, "ready\n");
      return Response::Text(503, "not ready: " + ready.message() + "\n");
    });
  }
  if (!s.ok()) return s;
  // Health checks answer on the I/O thread: they must answer even when every worker is busy.
  for (const char* path : {"/healthz", "/readyz"}) {
    server->shared_->routes[path][0].on_io_thread = true;
  }
  return server;
}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::AddRoute(std::string method, std::string path, Handler handler,
                            StreamHandler stream, WebSocketFactory ws) {
  if (started_) return FailedPreconditionError("routes must be added before Start()");
  if (path.empty() || path[0] != '/') {
    return InvalidArgumentError("route path must start with '/', got '" + path + "'");
  }
  std::vector<Route>& routes = shared_->routes[path];
  for (const Route& r : routes) {
    if ((ws && r.ws) || (!ws && !r.ws && r.method == method)) {
      return InvalidArgumentError("a route for " + (ws ? std::string("WebSocket") : method) +
                                  " " + path + " already exists");
    }
  }
  routes.push_back(Route{std::move(method), std::move(handler), std::move(stream), std::move(ws)});
  return Status::Ok();
}

Status HttpServer::Handle(std::string method, std::string path, Handler handler) {
  if (!handler) return InvalidArgumentError("null handler for " + path);
  return AddRoute(std::move(method), std::move(path), std::move(handler), nullptr, nullptr);
}

Status HttpServer::HandleStream(std::string method, std::string path, StreamHandler handler) {
  if (!handler) return InvalidArgumentError("null handler for " + path);
  return AddRoute(std::move(method), std::move(path), nullptr, std::move(handler), nullptr);
}

Status HttpServer::HandleWebSocket(std::string path, WebSocketFactory factory) {
  if (!factory) return InvalidArgumentError("null WebSocket factory for " + path);
  return AddRoute("", std::move(path), nullptr, nullptr, std::move(factory));
}

void HttpServer::SetReadinessCheck(ReadinessCheck check) {
  if (!started_) shared_->readiness = std::move(check);
}

Status HttpServer::Start() {
  if (started_) return FailedPreconditionError("server already started");
  if (stopped_) return FailedPreconditionError("server was stopped; create a new one");
  const ServerConfig& cfg = shared_->config;
  beast::error_code ec;
  tcp::resolver resolver(shared_->ioc);
  auto endpoints = resolver.resolve(cfg.host, std::to_string(cfg.port),
                                    tcp::resolver::passive, ec);
  if (ec || endpoints.empty()) {
    return InvalidArgumentError("server.host '" + cfg.host + "' does not resolve: " +
                                ec.message());
  }
  tcp::endpoint endpoint = endpoints.begin()->endpoint();
  shared_->acceptor.emplace(asio::make_strand(shared_->ioc));
  tcp::acceptor& acceptor = *shared_->acceptor;
  const std::string where = cfg.host + ":" + std::to_string(cfg.port);
  if (acceptor.open(endpoint.protocol(), ec)) {
    return UnavailableError("cannot open a socket for " + where + ": " + ec.message());
  }
  acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (acceptor.bind(endpoint, ec)) {
    return UnavailableError("cannot listen on " + where + ": " + ec.message() +
                            " (is another process using the port? set server.port)");
  }
  if (acceptor.listen(asio::socket_base::max_listen_connections, ec)) {
    return UnavailableError("cannot listen on " + where + ": " + ec.message());
  }
  port_ = acceptor.local_endpoint().port();
  shared_->workers = std::make_unique<ThreadPool>(static_cast<size_t>(cfg.worker_threads),
                                                  static_cast<size_t>(cfg.worker_queue));
  shared_->work.emplace(shared_->ioc.get_executor());
  std::make_shared<Acceptor>(shared_.get())->Accept();
  started_ = true;
  for (int i = 0; i < cfg.io_threads; ++i) {
    io_threads_.emplace_back([shared = shared_.get()] {
      for (;;) {
        try {
          shared->ioc.run();
          return;
        } catch (const std::exception& e) {  // a handler bug must not take the process down
          HLOG_ERROR("server: I/O handler threw: {}", e.what());
        } catch (...) {
          HLOG_ERROR("server: I/O handler threw a non-standard exception");
        }
      }
    });
  }
  HLOG_INFO("server: listening on http://{}:{}", cfg.host, port_);
  return Status::Ok();
}

void HttpServer::Stop() {
  if (stopped_.exchange(true)) return;
  if (!started_) return;
  Shared& s = *shared_;
  asio::post(s.acceptor->get_executor(), [&s] {
    beast::error_code ignored;
    s.acceptor->close(ignored);
  });
  auto snapshot = [&s] {
    std::vector<std::shared_ptr<Session>> out;
    std::lock_guard lock(s.mu);
    for (auto& [id, w] : s.sessions) {
      if (auto p = w.lock()) out.push_back(std::move(p));
    }
    return out;
  };
  {
    std::lock_guard lock(s.mu);
    s.stopping = true;
  }
  for (auto& session : snapshot()) session->Shutdown();
  auto drained = [&s] { return s.sessions.empty() && s.admitted == 0 && s.rejecting == 0; };
  {
    std::unique_lock lock(s.mu);
    s.sessions_changed.wait_for(lock, std::chrono::milliseconds(s.config.stop_timeout_ms),
                                drained);
  }
  auto rest = snapshot();
  if (!rest.empty()) {
    HLOG_WARN("server: cutting {} connection(s) still open after stop_timeout_ms={}",
              rest.size(), s.config.stop_timeout_ms);
    for (auto& session : rest) session->Cut();
    rest.clear();
    std::unique_lock lock(s.mu);
    s.sessions_changed.wait_for(lock, std::chrono::seconds(2), drained);
  }
  s.workers->Shutdown();  // handlers saw their cancel tokens raised
  s.work.reset();
  s.ioc.stop();
  for (auto& t : io_threads_) t.join();
  io_threads_.clear();
  HLOG_INFO("server: stopped");
}

std::string HttpServer::Url(std::string_view path, std::string_view scheme) const {
  std::string host = shared_->config.host;
  if (host == "0.0.0.0" || host == "::") host = "127.0.0.1";
  return std::string(scheme) + "://" + host + ":" + std::to_string(port_) + std::string(path);
}

int HttpServer::active_connections() const {
  std::lock_guard lock(shared_->mu);
  return shared_->admitted + shared_->rejecting;
}

MetricsRegistry& HttpServer::metrics_registry() const { return shared_->registry; }

}  // namespace hotline::server
