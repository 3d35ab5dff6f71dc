// One WebSocket connection: accepts the upgrade, reads messages (bounded by
// max_ws_message_bytes, enforced here so the close carries a reason), hands them to the handler
// on the connection's strand, and writes the handler's queued messages in order. WsConnectionImpl
// is the thread-safe face handlers use; it only queues and posts to the strand.
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>

#include <chrono>
#include <deque>

#include "common/log.h"
#include "server/server_internal.h"

namespace hotline::server {

namespace websocket = beast::websocket;

class WsSession;

class WsConnectionImpl : public WebSocketConnection {
 public:
  WsConnectionImpl(int64_t limit_bytes, std::string remote)
      : limit_(limit_bytes), remote_(std::move(remote)) {}

  struct Item {
    std::string data;
    bool binary = false;
    bool close = false;
    uint16_t code = 0;
  };

  Status SendText(std::string text) override { return Queue(std::move(text), false); }
  Status SendBinary(std::string bytes) override { return Queue(std::move(bytes), true); }
  void Close(uint16_t code, std::string reason) override {
    if (reason.size() > 123) reason.resize(123);  // RFC 6455: the close payload is <= 125 bytes
    {
      std::lock_guard lock(mu_);
      if (closing_ || closed_) return;
      closing_ = true;
      queue_.push_back({std::move(reason), false, true, code});
    }
    Kick();
  }
  // Closes ahead of anything queued (protocol violations).
  void CloseNow(uint16_t code, std::string reason) {
    {
      std::lock_guard lock(mu_);
      if (closed_) return;
      for (const Item& i : queue_) queued_ -= static_cast<int64_t>(i.data.size());
      queue_.clear();
      closing_ = true;
      queue_.push_back({std::move(reason), false, true, code});
    }
    Kick();
  }
  bool closed() const override {
    std::lock_guard lock(mu_);
    return closed_ || closing_;
  }
  int64_t queued_bytes() const override {
    std::lock_guard lock(mu_);
    return queued_;
  }
  const std::string& remote() const override { return remote_; }

  // --- used by WsSession on its strand ---
  void Bind(std::weak_ptr<WsSession> session, asio::any_io_executor ex) {
    std::lock_guard lock(mu_);
    session_ = std::move(session);
    ex_ = std::move(ex);
  }
  std::optional<Item> Pop() {
    std::lock_guard lock(mu_);
    if (queue_.empty()) return std::nullopt;
    Item i = std::move(queue_.front());
    queue_.pop_front();
    return i;
  }
  void Written(size_t n) {
    std::lock_guard lock(mu_);
    queued_ -= static_cast<int64_t>(n);
  }
  void MarkClosed() {
    std::lock_guard lock(mu_);
    closed_ = true;
    queue_.clear();
    queued_ = 0;
  }

 private:
  Status Queue(std::string data, bool binary) {
    const int64_t size = static_cast<int64_t>(data.size());
    {
      std::lock_guard lock(mu_);
      if (closing_ || closed_) return FailedPreconditionError("the WebSocket is closing");
      if (queued_ > 0 && queued_ + size > limit_) {
        return ResourceExhaustedError("WebSocket send queue full (" + std::to_string(queued_) +
                                      " bytes queued, server.max_send_queue_bytes=" +
                                      std::to_string(limit_) + "): the client is not reading");
      }
      queued_ += size;
      queue_.push_back({std::move(data), binary, false, 0});
    }
    Kick();
    return Status::Ok();
  }
  void Kick();

  const int64_t limit_;
  const std::string remote_;
  mutable std::mutex mu_;
  std::deque<Item> queue_;
  int64_t queued_ = 0;
  bool closing_ = false;
  bool closed_ = false;
  std::weak_ptr<WsSession> session_;
  asio::any_io_executor ex_;
};

class WsSession : public Session, public std::enable_shared_from_this<WsSession> {
 public:
  WsSession(HttpServer::Shared* shared, tcp::socket socket, std::unique_ptr<ConnectionSlot> slot,
            std::unique_ptr<WebSocketHandler> handler, std::shared_ptr<WsConnectionImpl> conn)
      : shared_(shared),
        ws_(std::move(socket)),
        timer_(ws_.get_executor()),
        slot_(std::move(slot)),
        handler_(std::move(handler)),
        conn_(std::move(conn)) {}
  ~WsSession() override {
    if (id_ != 0) shared_->Unregister(id_);
  }

  void Begin(http::request<http::string_body> upgrade) {
    id_ = shared_->Register(weak_from_this());
    if (!conn_) conn_ = NewWsConnection(shared_, "");
    conn_->Bind(weak_from_this(), ws_.get_executor());
    if (id_ == 0) {  // stopping: refuse politely
      conn_->Close(kCloseGoingAway, "server shutting down");
    }
    const ServerConfig& cfg = shared_->config;
    websocket::stream_base::timeout t;
    t.handshake_timeout = std::chrono::milliseconds(cfg.idle_timeout_ms);
    t.idle_timeout = std::chrono::milliseconds(cfg.idle_timeout_ms);
    t.keep_alive_pings = true;
    ws_.set_option(t);
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "hotline"); }));
    // Our own check in OnRead enforces the limit with a reason; this is a backstop.
    ws_.read_message_max(static_cast<uint64_t>(cfg.max_ws_message_bytes) + kReadChunk + 1);
    if (!slot_->admitted()) {
      conn_->Close(kCloseTryAgainLater, slot_->refusal() + "; try again later");
    }
    auto req = std::make_shared<http::request<http::string_body>>(std::move(upgrade));
    ws_.async_accept(*req, [self = shared_from_this(), req](beast::error_code ec) {
      self->OnAccept(ec);
    });
  }

  void Shutdown() override { conn_->Close(kCloseGoingAway, "server shutting down"); }
  void Cut() override {
    asio::post(ws_.get_executor(), [self = shared_from_this()] {
      beast::error_code ignored;
      self->ws_.next_layer().close(ignored);
    });
  }

  void Pump() {
    if (writing_ || !open_ || finished_) return;
    std::optional<WsConnectionImpl::Item> item = conn_->Pop();
    if (!item) return;
    writing_ = true;
    current_ = std::move(*item);
    ArmWriteTimer();
    if (current_.close) {
      close_code_ = current_.code;
      close_reason_ = current_.data;
      closing_ = true;
      ws_.async_close(websocket::close_reason(static_cast<websocket::close_code>(current_.code),
                                                      current_.data),
                      [self = shared_from_this()](beast::error_code ec) { self->OnClosed(ec); });
      return;
    }
    ws_.binary(current_.binary);
    ws_.async_write(asio::buffer(current_.data),
                    [self = shared_from_this()](beast::error_code ec, size_t) {
                      self->OnWrite(ec);
                    });
  }

 private:
  static constexpr size_t kReadChunk = 64 << 10;

  void ArmWriteTimer() {
    uint64_t gen = ++timer_gen_;
    timer_.expires_after(std::chrono::milliseconds(shared_->config.idle_timeout_ms));
    timer_.async_wait([self = shared_from_this(), gen](beast::error_code ec) {
      if (ec || gen != self->timer_gen_) return;
      beast::error_code ignored;
      self->ws_.next_layer().close(ignored);  // a write that made no progress: the client is stuck
    });
  }
  void DisarmWriteTimer() {
    ++timer_gen_;
    timer_.cancel();
  }

  void OnAccept(beast::error_code ec) {
    if (ec) return Finish(kCloseAbnormal, "WebSocket handshake failed: " + ec.message());
    open_ = true;
    Pump();
    Read();
  }

  void Read() {
    if (finished_) return;
    const size_t room = static_cast<size_t>(shared_->config.max_ws_message_bytes) + 1 -
                        std::min(rbuf_.size(), static_cast<size_t>(
                                                   shared_->config.max_ws_message_bytes));
    ws_.async_read_some(rbuf_, std::min(kReadChunk, room),
                        [self = shared_from_this()](beast::error_code ec, size_t) {
                          self->OnRead(ec);
                        });
  }

  void OnRead(beast::error_code ec) {
    if (ec) {
      if (ec == websocket::error::closed) {
        return Finish(ws_.reason().code, std::string(ws_.reason().reason.c_str()));
      }
      if (closing_) return Finish(close_code_, close_reason_);
      return Finish(kCloseAbnormal, ec.message());
    }
    if (discard_) {
      rbuf_.consume(rbuf_.size());
      return Read();
    }
    if (rbuf_.size() > static_cast<size_t>(shared_->config.max_ws_message_bytes)) {
      shared_->metrics.ws_too_big.Increment();
      ReleaseBuffered();
      discard_ = true;
      rbuf_.consume(rbuf_.size());
      conn_->CloseNow(kCloseTooBig, "message exceeds server.max_ws_message_bytes=" +
                                        std::to_string(shared_->config.max_ws_message_bytes));
      Pump();
      return Read();
    }
    if (!ws_.is_message_done()) {
      // A partial message: charge what it holds to the server-wide budget.
      const auto held = static_cast<int64_t>(rbuf_.size());
      const int64_t total = shared_->ws_buffered.fetch_add(held - charged_) + (held - charged_);
      charged_ = held;
      if (total > shared_->config.max_ws_buffered_bytes) {
        ReleaseBuffered();
        discard_ = true;
        rbuf_.consume(rbuf_.size());
        HLOG_WARN(
            "server: WebSocket from {} closed: unfinished messages of all connections "
            "exceed server.max_ws_buffered_bytes={}",
            conn_->remote(), shared_->config.max_ws_buffered_bytes);
        conn_->CloseNow(kCloseTryAgainLater,
                        "server-wide buffer for unfinished messages is full; try again later");
        Pump();
        return Read();
      }
    }
    if (ws_.is_message_done()) {
      ReleaseBuffered();
      shared_->metrics.ws_messages_received.Increment();
      auto data = rbuf_.cdata();
      std::string_view view(static_cast<const char*>(data.data()), data.size());
      if (handler_) {
        try {
          handler_->OnMessage(view, !ws_.got_text());
        } catch (const std::exception& e) {
          HLOG_ERROR("server: WebSocket handler threw: {}", e.what());
          conn_->CloseNow(kCloseInternalError, "internal error");
          Pump();
        }
      }
      rbuf_.consume(rbuf_.size());
    }
    Read();
  }

  void OnWrite(beast::error_code ec) {
    writing_ = false;
    DisarmWriteTimer();
    conn_->Written(current_.data.size());
    current_.data.clear();
    if (ec) return Finish(kCloseAbnormal, "write failed: " + ec.message());
    shared_->metrics.ws_messages_sent.Increment();
    Pump();
  }

  void OnClosed(beast::error_code ec) {
    writing_ = false;
    DisarmWriteTimer();
    (void)ec;  // either way the connection is over
    Finish(close_code_, close_reason_);
  }

  void ReleaseBuffered() {
    if (charged_ != 0) shared_->ws_buffered.fetch_sub(charged_);
    charged_ = 0;
  }

  void Finish(uint16_t code, std::string reason) {
    if (finished_) return;
    finished_ = true;
    ReleaseBuffered();
    DisarmWriteTimer();
    conn_->MarkClosed();
    if (handler_) {
      try {
        handler_->OnClose(code, reason);
      } catch (const std::exception& e) {
        HLOG_ERROR("server: WebSocket handler threw in OnClose: {}", e.what());
      }
      handler_.reset();
    }
    beast::error_code ignored;
    ws_.next_layer().close(ignored);
  }

  HttpServer::Shared* shared_;
  websocket::stream<tcp::socket> ws_;
  asio::steady_timer timer_;
  uint64_t timer_gen_ = 0;
  std::unique_ptr<ConnectionSlot> slot_;
  std::unique_ptr<WebSocketHandler> handler_;
  std::shared_ptr<WsConnectionImpl> conn_;
  uint64_t id_ = 0;
  beast::flat_buffer rbuf_;
  int64_t charged_ = 0;  // bytes of rbuf_ counted in Shared::ws_buffered
  WsConnectionImpl::Item current_;
  uint16_t close_code_ = kCloseNormal;
  std::string close_reason_;
  bool open_ = false;
  bool writing_ = false;
  bool closing_ = false;
  bool discard_ = false;
  bool finished_ = false;
};

void WsConnectionImpl::Kick() {
  std::weak_ptr<WsSession> w;
  asio::any_io_executor ex;
  {
    std::lock_guard lock(mu_);
    w = session_;
    ex = ex_;
  }
  if (!ex) return;  // not bound yet: the session pumps once the handshake is done
  asio::post(ex, [w] {
    if (auto s = w.lock()) s->Pump();
  });
}

std::shared_ptr<WsConnectionImpl> NewWsConnection(HttpServer::Shared* shared, std::string remote) {
  return std::make_shared<WsConnectionImpl>(shared->config.max_send_queue_bytes, std::move(remote));
}

std::shared_ptr<WebSocketConnection> AsConnection(const std::shared_ptr<WsConnectionImpl>& c) {
  return c;
}

void StartWsSession(HttpServer::Shared* shared, tcp::socket socket,
                    std::unique_ptr<ConnectionSlot> slot,
                    http::request<http::string_body> upgrade,
                    std::unique_ptr<WebSocketHandler> handler,
                    std::shared_ptr<WsConnectionImpl> connection) {
  auto session = std::make_shared<WsSession>(shared, std::move(socket), std::move(slot),
                                             std::move(handler), std::move(connection));
  session->Begin(std::move(upgrade));
}

}  // namespace hotline::server
