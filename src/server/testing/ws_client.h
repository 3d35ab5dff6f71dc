// WsClient: a blocking WebSocket client over Boost.Beast for the server's tests, safe to read on
// one thread while another sends. Test code only.
//
//   WsClient ws(port, "/softphone/ws");
//   ws.SetReadTimeout(std::chrono::seconds(10));   // a silent server fails the test, not hangs it
//   std::thread reader([&] { std::string in; while (ws.Read(in)) ...; });
//   ws.SendBinary(frame);                            // meanwhile, from this thread
//   ws.SendText(R"({"type":"hangup"})");             // the server's close ends the reader
//   reader.join();
//
// Ownership: one io thread, started by the constructor, is the only thread that ever touches the
// Beast stream after the handshake. Read, SendText/SendBinary, Close and Drop post their operation
// to it and block until it completes. A websocket stream allows one read and one write in flight
// together on its one thread (Beast orders its own close and pong replies against the user's
// write); the client keeps it at that: reads are serialized among themselves, and so are writes,
// so any number of threads may call it. A read is only started when Read is called, so a client
// that does not read exerts back-pressure on the server like a slow peer does.
#pragma once

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

namespace hotline::server::testing {

class WsClient {
 public:
  // Connects to 127.0.0.1:port and performs the handshake for `path` (on the calling thread,
  // before the io thread exists); ok() says whether it worked.
  WsClient(int port, const std::string& path) : ws_(ioc_), work_(ioc_.get_executor()) {
    boost::beast::error_code ec;
    boost::asio::ip::tcp::endpoint ep(boost::asio::ip::make_address("127.0.0.1"),
                                      static_cast<unsigned short>(port));
    ws_.next_layer().connect(ep, ec);
    if (!ec) ws_.handshake(response_, "127.0.0.1:" + std::to_string(port), path, ec);
    error_ = ec;
    fd_ = ws_.next_layer().native_handle();
    io_thread_ = std::thread([this] { ioc_.run(); });
  }
  // Closes the socket (no close frame), which ends any operation still in flight, and joins the
  // io thread. No other thread may be inside a method by then.
  ~WsClient() {
    boost::asio::post(ioc_, [this] {
      boost::beast::error_code ignored;
      ws_.next_layer().close(ignored);
    });
    work_.reset();
    io_thread_.join();
  }
  WsClient(const WsClient&) = delete;
  WsClient& operator=(const WsClient&) = delete;

  bool ok() const {
    std::lock_guard lock(state_mu_);
    return !error_;
  }
  // The handshake's error, or after a failed Read its error (websocket::error::closed after a
  // close frame, asio::error::timed_out after the read time-out).
  boost::beast::error_code error() const {
    std::lock_guard lock(state_mu_);
    return error_;
  }
  // The handshake's HTTP response (status 101 when accepted).
  const boost::beast::websocket::response_type& response() const { return response_; }

  // Bounds each Read: a read that gets no whole message in `timeout` fails with timed_out, and
  // the connection is not usable afterwards. Without it, the socket's SO_RCVTIMEO (set on
  // socket().native_handle()) is taken as the bound, as it bounds a blocking read; neither:
  // Read waits as long as the connection lives.
  void SetReadTimeout(std::chrono::milliseconds timeout) {
    std::lock_guard lock(state_mu_);
    read_timeout_ = timeout;
  }

  bool SendText(std::string_view text) { return Write(std::string(text), /*binary=*/false); }
  bool SendBinary(std::string_view bytes) { return Write(std::string(bytes), /*binary=*/true); }

  // Reads one message; false at close or error (see error() and close_code()).
  bool Read(std::string& out) {
    std::lock_guard lock(read_mu_);
    auto buffer = std::make_shared<boost::beast::flat_buffer>();
    auto done = std::make_shared<std::promise<boost::beast::error_code>>();
    std::future<boost::beast::error_code> result = done->get_future();
    boost::asio::post(ioc_, [this, buffer, done] {
      ws_.async_read(*buffer, [this, buffer, done](boost::beast::error_code ec, size_t) {
        // The close frame's reason is copied here, on the stream's thread.
        if (ec == boost::beast::websocket::error::closed) {
          std::lock_guard lock(state_mu_);
          reason_ = ws_.reason();
        }
        done->set_value(ec);
      });
    });
    bool timed_out = false;
    if (const auto timeout = ReadTimeout();
        timeout && result.wait_for(*timeout) == std::future_status::timeout) {
      timed_out = true;
      // Cancelling ends the read (operation_aborted); the stream is failed from then on.
      boost::asio::post(ioc_, [this] {
        boost::beast::error_code ignored;
        ws_.next_layer().cancel(ignored);
      });
    }
    const boost::beast::error_code ec = result.get();
    if (ec) {
      std::lock_guard state_lock(state_mu_);
      error_ = timed_out ? boost::beast::error_code(boost::asio::error::timed_out) : ec;
      return false;
    }
    out = boost::beast::buffers_to_string(buffer->data());
    return true;
  }
  // Reads until the server closes; returns its close code (0: no close frame).
  int ReadUntilClosed() {
    std::string ignored;
    while (Read(ignored)) {
    }
    return close_code();
  }
  // The server's close code once a Read ended at its close frame; 0 otherwise.
  int close_code() const {
    std::lock_guard lock(state_mu_);
    return error_ == boost::beast::websocket::error::closed ? reason_.code : 0;
  }
  // The server's close reason (after a Read ended at its close frame).
  std::string close_reason() const {
    std::lock_guard lock(state_mu_);
    return std::string(reason_.reason.data(), reason_.reason.size());
  }
  // Sends a close frame and waits for the server's (a reader on another thread sees the close).
  void Close(uint16_t code = 1000) {
    std::lock_guard lock(write_mu_);
    RunOnStream([this, code](const Done& done) {
      ws_.async_close(static_cast<boost::beast::websocket::close_code>(code),
                      [done](boost::beast::error_code ec) { done->set_value(ec); });
    });
  }
  // Drops the TCP connection without a close frame.
  void Drop() {
    RunOnStream([this](const Done& done) {
      boost::beast::error_code ec;
      ws_.next_layer().close(ec);
      done->set_value(ec);
    });
  }
  // The TCP socket, for socket options and shutdown(2) on native_handle() only: its operations
  // belong to the io thread.
  boost::asio::ip::tcp::socket& socket() { return ws_.next_layer(); }

 private:
  using Done = std::shared_ptr<std::promise<boost::beast::error_code>>;

  // Runs `start(done)` on the io thread and waits until it sets `done`.
  template <typename Start>
  boost::beast::error_code RunOnStream(Start start) {
    auto done = std::make_shared<std::promise<boost::beast::error_code>>();
    std::future<boost::beast::error_code> result = done->get_future();
    boost::asio::post(ioc_, [start = std::move(start), done]() mutable { start(done); });
    return result.get();
  }

  bool Write(std::string data, bool binary) {
    std::lock_guard lock(write_mu_);
    auto payload = std::make_shared<std::string>(std::move(data));
    return !RunOnStream([this, payload, binary](const Done& done) {
      ws_.binary(binary);
      ws_.async_write(
          boost::asio::buffer(*payload),
          [payload, done](boost::beast::error_code ec, size_t) { done->set_value(ec); });
    });
  }

  std::optional<std::chrono::milliseconds> ReadTimeout() {
    {
      std::lock_guard lock(state_mu_);
      if (read_timeout_) return read_timeout_;
    }
    timeval tv{};
    socklen_t len = sizeof tv;
    if (::getsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, &len) != 0) return std::nullopt;
    const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::seconds(tv.tv_sec) + std::chrono::microseconds(tv.tv_usec));
    if (timeout <= std::chrono::milliseconds(0)) return std::nullopt;
    return timeout;
  }

  boost::asio::io_context ioc_;
  boost::beast::websocket::stream<boost::asio::ip::tcp::socket> ws_;  // io thread only
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  boost::beast::websocket::response_type response_;  // written before the io thread starts
  std::thread io_thread_;

  int fd_ = -1;  // the socket's descriptor, for getsockopt from the calling threads

  std::mutex write_mu_;  // one write or close in flight
  std::mutex read_mu_;   // one read in flight
  mutable std::mutex state_mu_;
  boost::beast::error_code error_;  // the handshake's, then the last failed read's
  boost::beast::websocket::close_reason reason_;
  std::optional<std::chrono::milliseconds> read_timeout_;
};

}  // namespace hotline::server::testing
