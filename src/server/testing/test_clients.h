// Small blocking clients for the server's tests: a raw TCP client that sends exact bytes and
// reads with a deadline (to test malformed, oversized, slow and abrupt clients), and a WebSocket
// client over Beast (ws_client.h). Test code only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <string_view>

#include "server/testing/ws_client.h"

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

}  // namespace hotline::server::testing
