// One HTTP/1.1 connection: reads requests (bounded), routes them, runs handlers on the worker pool
// while watching the socket for a disconnect, writes responses (buffered or chunked) through a
// bounded output queue, keeps the connection alive between requests, and hands WebSocket
// upgrades to ws_session.cc. Everything here runs on the connection's strand except
// StreamState's methods, which worker threads call.
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include <chrono>
#include <deque>

#include "common/clock.h"
#include "common/log.h"
#include "server/http_request_reader.h"
#include "server/server_internal.h"

namespace hotline::server {
namespace {

class HttpSession;

std::string Hex(size_t n) {
  char buf[24];
  int len = snprintf(buf, sizeof(buf), "%zx", n);
  return std::string(buf, static_cast<size_t>(len));
}

bool SafeHeader(const Header& h) {
  return !h.name.empty() && h.name.find_first_of("\r\n: ") == std::string::npos &&
         h.value.find_first_of("\r\n") == std::string::npos;
}

// What a worker thread running a handler shares with the connection. The connection may be gone
// by the time the worker uses it; then every write fails and the cancel token is raised.
class StreamState {
 public:
  StreamState(std::weak_ptr<HttpSession> session, asio::any_io_executor ex, int64_t limit_bytes,
              int idle_ms)
      : session_(std::move(session)), ex_(std::move(ex)), limit_(limit_bytes), idle_ms_(idle_ms) {}

  CancelToken cancel;
  bool keep_alive = true;  // what the response head announces

  const std::weak_ptr<HttpSession>& session() const { return session_; }
  const asio::any_io_executor& executor() const { return ex_; }

  // Queues bytes for the client, waiting while too much is queued. `last` ends the response.
  bool Enqueue(std::string bytes, bool last);
  void Written(int64_t n) {
    std::lock_guard lock(mu_);
    queued_ -= n;
    cv_.notify_all();
  }
  void MarkGone() {
    cancel.Cancel();
    std::lock_guard lock(mu_);
    gone_ = true;
    cv_.notify_all();
  }

 private:
  std::weak_ptr<HttpSession> session_;
  asio::any_io_executor ex_;
  const int64_t limit_;
  const int idle_ms_;
  std::mutex mu_;
  std::condition_variable cv_;
  int64_t queued_ = 0;
  bool gone_ = false;
};

class HttpSession : public Session, public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(HttpServer::Shared* shared, tcp::socket socket, std::unique_ptr<ConnectionSlot> slot)
      : shared_(shared),
        socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        slot_(std::move(slot)) {
    beast::error_code ec;
    auto ep = socket_.remote_endpoint(ec);
    if (!ec) remote_ = ep.address().to_string() + ":" + std::to_string(ep.port());
  }
  ~HttpSession() override {
    if (id_ != 0) shared_->Unregister(id_);
  }

  void Begin() {
    id_ = shared_->Register(weak_from_this());
    if (id_ == 0) return;  // the server is stopping
    asio::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->DoRead(); });
  }

  void Shutdown() override {
    asio::post(socket_.get_executor(), [self = shared_from_this()] {
      self->shutting_down_ = true;
      if (self->stream_) {
        self->stream_->cancel.Cancel();  // the handler ends early; its response still goes out
      } else if (!self->writing_) {
        self->Close();
      }
    });
  }
  void Cut() override {
    asio::post(socket_.get_executor(), [self = shared_from_this()] { self->Close(); });
  }

  // --- called on the strand by StreamState ---
  void QueueOutput(std::string bytes, bool last) {
    if (closed_) {
      if (stream_) stream_->MarkGone();
      return;
    }
    if (!bytes.empty()) out_.push_back(std::move(bytes));
    if (last) response_done_ = true;
    WriteNext();
  }
  void SetStatus(int status, bool close) {
    status_ = status;
    if (close) close_after_ = true;
  }
  void WriteResponse(const Response& r, bool close = false) {
    status_ = r.status;
    if (close) close_after_ = true;
    bool keep = keep_alive_ && !close_after_ && !shutting_down_;
    std::string bytes =
        ResponseHead(r.status, r.content_type, r.headers, keep, r.body.size()) + r.body;
    QueueOutput(std::move(bytes), true);
  }

 private:
  void ArmTimer(int ms) {
    uint64_t gen = ++timer_gen_;
    timer_.expires_after(std::chrono::milliseconds(ms));
    timer_.async_wait([self = shared_from_this(), gen](beast::error_code ec) {
      if (ec || gen != self->timer_gen_) return;
      self->Close();
    });
  }
  void DisarmTimer() {
    ++timer_gen_;
    timer_.cancel();
  }

  void DoRead() {
    if (closed_) return;
    if (shutting_down_) return Close();
    parser_.emplace();
    LimitRequestParser(*parser_, shared_->config);
    ArmTimer(shared_->config.idle_timeout_ms);
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       self->OnRead(ec);
                     });
  }

  void OnRead(beast::error_code ec) {
    DisarmTimer();
    if (closed_) return;
    const ServerConfig& cfg = shared_->config;
    if (ec) unread_input_ = true;  // errors below answer a request we did not read to its end
    if (ec == http::error::header_limit) {
      return SendError(431, "request line and headers exceed server.max_header_bytes=" +
                                std::to_string(cfg.max_header_bytes));
    }
    if (ec == http::error::body_limit) {
      return SendError(413, "request body exceeds server.max_request_body_bytes=" +
                                std::to_string(cfg.max_request_body_bytes));
    }
    if (ec && ec.category() == http::make_error_code(http::error::bad_target).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message) {
      return SendError(400, "malformed HTTP request: " + ec.message());
    }
    if (ec) {
      HLOG_DEBUG("server: {} closed while reading a request: {}", remote_, ec.message());
      return Close();  // end of stream, reset, idle timeout
    }

    started_ = std::chrono::steady_clock::now();
    http::request<http::string_body> req = parser_->release();
    parser_.reset();
    Request request = ToRequest(req, remote_);
    keep_alive_ = req.keep_alive();
    status_ = 0;
    close_after_ = false;
    response_done_ = false;

    const bool upgrade = beast::websocket::is_upgrade(req);
    if (!slot_->admitted()) {
      if (upgrade) return StartWsSession(shared_, std::move(socket_), std::move(slot_),
                                         std::move(req), nullptr, nullptr);
      return SendError(503, slot_->refusal() + "; retry later");
    }
    auto it = shared_->routes.find(request.path);
    const std::vector<Route>* routes = it == shared_->routes.end() ? nullptr : &it->second;
    const Route* ws_route = nullptr;
    const Route* route = nullptr;
    std::string allow;
    if (routes) {
      for (const Route& r : *routes) {
        if (r.ws) {
          ws_route = &r;
        } else {
          allow += (allow.empty() ? "" : ", ") + r.method;
          if (r.method == request.method) route = &r;
        }
      }
    }
    if (upgrade) {
      if (!ws_route) return SendError(404, "no WebSocket endpoint at " + request.path, false);
      return Upgrade(*ws_route, std::move(request), std::move(req));
    }
    if (!routes) return SendError(404, "no endpoint at " + request.path, false);
    if (!route) {
      if (ws_route && allow.empty()) {
        return SendError(426, request.path + " is a WebSocket endpoint: send a GET with "
                         "'Connection: Upgrade' and 'Upgrade: websocket'", false,
                         {{"Upgrade", "websocket"}});
      }
      return SendError(405, request.method + " is not allowed on " + request.path +
                       " (allowed: " + allow + ")", false, {{"Allow", allow}});
    }
    if (route->on_io_thread) {
      CancelToken never;
      return WriteResponse(route->handler(request, never));
    }
    RunOnWorker(*route, std::move(request));
  }

  void Upgrade(const Route& route, Request request, http::request<http::string_body> req) {
    const std::string version = request.HeaderValue("Sec-WebSocket-Version");
    if (version != "13") {
      return SendError(426, "unsupported Sec-WebSocket-Version '" + version + "' (need 13)", true,
                       {{"Sec-WebSocket-Version", "13"}});
    }
    if (request.HeaderValue("Sec-WebSocket-Key").empty()) {
      return SendError(400, "WebSocket upgrade without Sec-WebSocket-Key");
    }
    auto connection = NewWsConnection(shared_, remote_);
    auto handler = route.ws(request, AsConnection(connection));
    if (!handler.ok()) {
      int status = 400;
      switch (handler.status().code()) {
        case StatusCode::kPermissionDenied: status = 403; break;
        case StatusCode::kNotFound: status = 404; break;
        case StatusCode::kResourceExhausted:
        case StatusCode::kUnavailable: status = 503; break;
        default: break;
      }
      return SendError(status, "WebSocket upgrade refused: " + handler.status().message());
    }
    DisarmTimer();
    StartWsSession(shared_, std::move(socket_), std::move(slot_), std::move(req),
                   std::move(handler).value(), std::move(connection));
    closed_ = true;  // the socket now belongs to the WebSocket session
  }

  void RunOnWorker(const Route& route, Request request) {
    auto state = std::make_shared<StreamState>(weak_from_this(), socket_.get_executor(),
                                               shared_->config.max_send_queue_bytes,
                                               shared_->config.idle_timeout_ms);
    state->keep_alive = keep_alive_ && !shutting_down_;
    // The task holds the session: with no read pending (pipelined bytes already buffered)
    // nothing else would keep it alive while the handler runs.
    Status s = shared_->workers->TrySubmit(
        [self = shared_from_this(), state, route, request = std::move(request)] {
          RunHandler(route, request, state);
        });
    if (!s.ok()) {
      return SendError(503, "server busy: all " +
                                std::to_string(shared_->config.worker_threads) +
                                " workers occupied and the queue full (server.worker_queue); "
                                "retry later", false);
    }
    stream_ = std::move(state);
    if (shutting_down_) stream_->cancel.Cancel();
    StartWatch();
  }

  static void RunHandler(const Route& route, const Request& request,
                         const std::shared_ptr<StreamState>& state);

  // While a handler runs, keep a read pending: it notices a disconnect at once (raising the
  // handler's CancelToken) and keeps any pipelined bytes for the next request.
  void StartWatch() {
    if (watching_ || closed_) return;
    // Bytes of a pipelined request are already here: the next read parses them; no watching.
    if (buffer_.size() > 0) return;
    watching_ = true;
    socket_.async_read_some(buffer_.prepare(4096),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->OnWatch(ec, n);
                            });
  }
  void OnWatch(beast::error_code ec, size_t n) {
    watching_ = false;
    if (closed_) return;
    if (ec) {
      if (stream_) stream_->MarkGone();
      return Close();
    }
    buffer_.commit(n);
    if (awaiting_next_) {
      awaiting_next_ = false;
      DisarmTimer();
      return DoRead();
    }
    // The client sent (part of) its next request while this one runs: stop watching, the next
    // DoRead picks the bytes up once the response is out.
  }

  void SendError(int status, std::string message, bool close = true,
                 std::vector<Header> headers = {}) {
    Response r = Response::Text(status, message + "\n");
    r.headers = std::move(headers);
    if (status >= 500) HLOG_DEBUG("server: {} {} to {}", status, message, remote_);
    WriteResponse(r, close);
  }

  void WriteNext() {
    if (writing_ || closed_) return;
    if (out_.empty()) {
      if (response_done_) OnResponseFlushed();
      return;
    }
    writing_ = true;
    ArmTimer(shared_->config.idle_timeout_ms);  // a write that makes no progress this long: cut
    asio::async_write(socket_, asio::buffer(out_.front()),
                      [self = shared_from_this()](beast::error_code ec, size_t n) {
                        self->OnWrite(ec, n);
                      });
  }
  void OnWrite(beast::error_code ec, size_t n) {
    writing_ = false;
    DisarmTimer();
    if (stream_) stream_->Written(static_cast<int64_t>(n));
    if (ec) {
      if (stream_) stream_->MarkGone();
      return Close();
    }
    out_.pop_front();
    WriteNext();
  }

  void OnResponseFlushed() {
    response_done_ = false;
    stream_.reset();
    shared_->metrics.CountStatus(status_);
    shared_->metrics.request_seconds.Observe(SecondsSince(started_));
    if (close_after_ || !keep_alive_ || shutting_down_) {
      if (unread_input_) return Linger();
      return Close();
    }
    if (watching_) {
      awaiting_next_ = true;
      ArmTimer(shared_->config.idle_timeout_ms);
      return;
    }
    DoRead();
  }

  // Closes our side for writing, then reads and discards what the client still sends (a body we
  // refused) for a moment, so that it reads our answer instead of a connection reset.
  void Linger() {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    if (watching_) {  // the pending read drains; OnWatch closes on EOF
      ArmTimer(1000);
      return;
    }
    ArmTimer(1000);
    DrainSome();
  }
  void DrainSome() {
    if (closed_ || drained_ > (1 << 20)) return Close();
    socket_.async_read_some(asio::buffer(drain_buf_),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec) return self->Close();
                              self->drained_ += n;
                              self->DrainSome();
                            });
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    DisarmTimer();
    if (stream_) stream_->MarkGone();
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  static double SecondsSince(MonoTime t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  }

  HttpServer::Shared* shared_;
  tcp::socket socket_;
  asio::steady_timer timer_;
  uint64_t timer_gen_ = 0;
  std::unique_ptr<ConnectionSlot> slot_;
  uint64_t id_ = 0;
  std::string remote_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<StreamState> stream_;  // the running handler's, while one runs
  std::deque<std::string> out_;
  std::array<char, 4096> drain_buf_{};
  size_t drained_ = 0;
  MonoTime started_{};
  int status_ = 0;
  bool keep_alive_ = true;
  bool close_after_ = false;
  bool response_done_ = false;
  bool writing_ = false;
  bool watching_ = false;
  bool awaiting_next_ = false;
  bool shutting_down_ = false;
  bool unread_input_ = false;
  bool closed_ = false;
};

bool StreamState::Enqueue(std::string bytes, bool last) {
  const int64_t size = static_cast<int64_t>(bytes.size());
  {
    std::unique_lock lock(mu_);
    bool room = cv_.wait_for(lock, std::chrono::milliseconds(idle_ms_), [&] {
      return gone_ || queued_ == 0 || queued_ + size <= limit_;
    });
    if (gone_) return false;
    if (!room) {  // the client has not taken a byte for the whole idle timeout
      gone_ = true;
      cancel.Cancel();
      lock.unlock();
      if (auto s = session_.lock()) s->Cut();
      return false;
    }
    queued_ += size;
  }
  std::shared_ptr<HttpSession> s = session_.lock();
  if (!s) {
    MarkGone();
    return false;
  }
  asio::post(ex_, [s = std::move(s), bytes = std::move(bytes), last]() mutable {
    s->QueueOutput(std::move(bytes), last);
  });
  return true;
}

// The ResponseStream a streaming handler writes through (on its worker thread).
class ChunkedStream : public ResponseStream {
 public:
  explicit ChunkedStream(std::shared_ptr<StreamState> state) : state_(std::move(state)) {}

  bool Begin(int status, std::string_view content_type,
             const std::vector<Header>& headers) override {
    if (began_) return false;
    began_ = true;
    if (auto s = state_->session().lock()) {
      asio::post(state_->executor(), [s, status] { s->SetStatus(status, false); });
    }
    std::string head =
        ResponseHead(status, content_type, headers, state_->keep_alive, std::nullopt);
    return state_->Enqueue(std::move(head), false);
  }
  bool Write(std::string_view data) override {
    if (!began_ || ended_) return false;
    if (data.empty()) return !state_->cancel.cancelled();
    std::string chunk = Hex(data.size()) + "\r\n";
    chunk.append(data);
    chunk += "\r\n";
    return state_->Enqueue(std::move(chunk), false);
  }
  bool End() override {
    if (!began_ || ended_) return false;
    ended_ = true;
    return state_->Enqueue("0\r\n\r\n", true);
  }
  const CancelToken& cancel() const override { return state_->cancel; }

  bool began() const { return began_; }
  bool ended() const { return ended_; }

 private:
  std::shared_ptr<StreamState> state_;
  bool began_ = false;
  bool ended_ = false;
};

void HttpSession::RunHandler(const Route& route, const Request& request,
                             const std::shared_ptr<StreamState>& state) {
  auto respond = [&state](Response r) {
    if (auto s = state->session().lock()) {
      asio::post(state->executor(), [s, r = std::move(r)] { s->WriteResponse(r); });
    }
  };
  if (route.stream) {
    ChunkedStream out(state);
    try {
      route.stream(request, out);
    } catch (const std::exception& e) {
      HLOG_ERROR("server: handler for {} {} threw: {}", request.method, request.path, e.what());
    }
    if (!out.began()) {
      respond(Response::Text(500, "the handler produced no response\n"));
    } else if (!out.ended()) {
      out.End();
    }
    return;
  }
  Response r;
  try {
    r = route.handler(request, state->cancel);
  } catch (const std::exception& e) {
    HLOG_ERROR("server: handler for {} {} threw: {}", request.method, request.path, e.what());
    r = Response::Text(500, "internal error\n");
  }
  respond(std::move(r));
}

}  // namespace

std::string ResponseHead(int status, std::string_view content_type,
                         const std::vector<Header>& headers, bool keep_alive,
                         std::optional<size_t> content_length) {
  std::string h = "HTTP/1.1 " + std::to_string(status) + " ";
  auto reason = http::obsolete_reason(http::int_to_status(static_cast<unsigned>(status)));
  h.append(reason.data(), reason.size());
  h += "\r\nServer: hotline\r\nContent-Type: ";
  h.append(content_type);
  h += "\r\n";
  if (content_length) {
    h += "Content-Length: " + std::to_string(*content_length) + "\r\n";
  } else {
    h += "Transfer-Encoding: chunked\r\n";
  }
  h += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  for (const Header& x : headers) {
    if (!SafeHeader(x)) {
      HLOG_WARN("server: dropped response header '{}' (empty, or CR/LF/':' in it)", x.name);
      continue;
    }
    h += x.name + ": " + x.value + "\r\n";
  }
  h += "\r\n";
  return h;
}

void StartHttpSession(HttpServer::Shared* shared, tcp::socket socket,
                      std::unique_ptr<ConnectionSlot> slot) {
  auto session = std::make_shared<HttpSession>(shared, std::move(socket), std::move(slot));
  session->Begin();
}

}  // namespace hotline::server
