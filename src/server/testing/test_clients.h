// Small blocking clients for the server's tests: a raw TCP client that sends exact bytes and
// reads with a deadline (to test malformed, oversized, slow and abrupt clients), and a WebSocket
// client over Beast. Test code only.
#pragma once

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <string_view>

namespace hotline::server::testing {

// A plain TCP connection to 127.0.0.1:port.
class RawClient {
 public:
  explicit RawClient(int port, int rcvbuf_bytes = 0) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (rcvbuf_bytes > 0) {
      ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf_bytes, sizeof(rcvbuf_bytes));
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawClient() { Close(); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool connected() const { return connected_; }
  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }
  // Reads until `done(received)` is true, EOF, an error, or `timeout_ms`. Returns what arrived.
  template <typename Pred>
  std::string ReadUntil(Pred done, int timeout_ms = 3000) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (!done(buffer_)) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                      deadline - std::chrono::steady_clock::now())
                      .count();
      if (left <= 0) break;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left)) <= 0) break;
      char buf[65536];
      ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) {
        eof_ = true;
        break;
      }
      buffer_.append(buf, static_cast<size_t>(n));
    }
    return buffer_;
  }
  // Reads until the connection closes (or timeout).
  std::string ReadAll(int timeout_ms = 3000) {
    return ReadUntil([](const std::string&) { return false; }, timeout_ms);
  }
  // Reads one whole response with a Content-Length body.
  std::string ReadResponse(int timeout_ms = 3000) {
    ReadUntil(
        [](const std::string& b) {
          size_t end = b.find("\r\n\r\n");
          if (end == std::string::npos) return false;
          size_t cl = b.find("Content-Length: ");
          if (cl == std::string::npos || cl > end) return true;
          size_t len = std::stoul(b.substr(cl + 16));
          return b.size() >= end + 4 + len;
        },
        timeout_ms);
    size_t end = buffer_.find("\r\n\r\n");
    std::string out = buffer_;
    if (end != std::string::npos) {
      size_t cl = buffer_.find("Content-Length: ");
      size_t total = buffer_.size();
      if (cl != std::string::npos && cl < end) total = end + 4 + std::stoul(buffer_.substr(cl + 16));
      out = buffer_.substr(0, total);
      buffer_.erase(0, std::min(total, buffer_.size()));
    } else {
      buffer_.clear();
    }
    return out;
  }
  bool eof() const { return eof_; }
  // Closes with a reset (RST) instead of an orderly FIN: an abrupt disconnect.
  void Abort() {
    linger l{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
    Close();
  }
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string buffer_;
};

// "HTTP/1.1 200 OK..." -> 200; 0 when unparseable.
inline int StatusOf(const std::string& response) {
  if (response.size() < 12 || response.compare(0, 9, "HTTP/1.1 ") != 0) return 0;
  return std::stoi(response.substr(9, 3));
}

// A synchronous WebSocket client (Beast). Throws boost::system::system_error on failure, which
// gtest reports.
class WsClient {
 public:
  // Connects and performs the handshake for `path`; ok() says whether it worked.
  WsClient(int port, const std::string& path) : ws_(ioc_) {
    boost::beast::error_code ec;
    boost::asio::ip::tcp::endpoint ep(boost::asio::ip::make_address("127.0.0.1"),
                                      static_cast<unsigned short>(port));
    ws_.next_layer().connect(ep, ec);
    if (!ec) ws_.handshake(response_, "127.0.0.1:" + std::to_string(port), path, ec);
    error_ = ec;
  }
  bool ok() const { return !error_; }
  const boost::beast::error_code& error() const { return error_; }
  // The handshake's HTTP response (status 101 when accepted).
  const boost::beast::websocket::response_type& response() const { return response_; }

  bool SendText(std::string_view text) {
    boost::beast::error_code ec;
    ws_.text(true);
    ws_.write(boost::asio::buffer(text.data(), text.size()), ec);
    return !ec;
  }
  bool SendBinary(std::string_view bytes) {
    boost::beast::error_code ec;
    ws_.binary(true);
    ws_.write(boost::asio::buffer(bytes.data(), bytes.size()), ec);
    return !ec;
  }
  // Reads one message; false at close or error (see close_code()).
  bool Read(std::string& out) {
    boost::beast::flat_buffer buf;
    boost::beast::error_code ec;
    ws_.read(buf, ec);
    if (ec) {
      error_ = ec;
      return false;
    }
    out = boost::beast::buffers_to_string(buf.data());
    return true;
  }
  // Reads until the server closes; returns its close code (0: no close frame).
  int ReadUntilClosed() {
    std::string ignored;
    while (Read(ignored)) {
    }
    if (error_ == boost::beast::websocket::error::closed) return ws_.reason().code;
    return 0;
  }
  std::string close_reason() const {
    return std::string(ws_.reason().reason.data(), ws_.reason().reason.size());
  }
  void Close(uint16_t code = 1000) {
    boost::beast::error_code ec;
    ws_.close(static_cast<boost::beast::websocket::close_code>(code), ec);
  }
  // Drops the TCP connection without a close frame.
  void Drop() {
    boost::beast::error_code ec;
    ws_.next_layer().close(ec);
  }
  boost::asio::ip::tcp::socket& socket() { return ws_.next_layer(); }

 private:
  boost::asio::io_context ioc_;
  boost::beast::websocket::stream<boost::asio::ip::tcp::socket> ws_;
  boost::beast::websocket::response_type response_;
  boost::beast::error_code error_;
};

}  // namespace hotline::server::testing
