#include "net/testing/loopback_http_server.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cstdio>
#include <strings.h>

namespace hotline::net::testing {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::string ReasonPhrase(int status) {
  return std::string(http::obsolete_reason(static_cast<http::status>(status)));
}

class SocketResponder : public LoopbackResponder {
 public:
  explicit SocketResponder(tcp::socket& socket) : socket_(socket) {}

  bool Send(int status, std::string_view content_type, std::string_view body) override {
    std::string head = "HTTP/1.1 " + std::to_string(status) + " " + ReasonPhrase(status) +
                       "\r\nContent-Type: " + std::string(content_type) +
                       "\r\nContent-Length: " + std::to_string(body.size()) +
                       "\r\nConnection: close\r\n\r\n";
    return WriteRaw(head) && WriteRaw(body);
  }
  bool BeginChunked(int status, std::string_view content_type) override {
    return WriteRaw("HTTP/1.1 " + std::to_string(status) + " " + ReasonPhrase(status) +
                    "\r\nContent-Type: " + std::string(content_type) +
                    "\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
  }
  bool WriteChunk(std::string_view data) override {
    if (data.empty()) return true;  // an empty chunk would end the body
    char size[32];
    std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
    return WriteRaw(size) && WriteRaw(data) && WriteRaw("\r\n");
  }
  bool EndChunked() override { return WriteRaw("0\r\n\r\n"); }
  bool WriteRaw(std::string_view bytes) override {
    if (broken_) return false;
    beast::error_code ec;
    asio::write(socket_, asio::buffer(bytes.data(), bytes.size()), ec);
    if (ec) broken_ = true;
    return !broken_;
  }

 private:
  tcp::socket& socket_;
  bool broken_ = false;
};

}  // namespace

struct LoopbackHttpServer::Impl {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  LoopbackHandler handler;
  std::atomic<bool> stopping{false};
  std::thread accept_thread;
  std::mutex mu;
  std::vector<std::thread> connections;  // guarded by mu
  std::atomic<int>* requests = nullptr;

  void Serve(tcp::socket socket) {
    beast::flat_buffer buffer;
    http::request_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    beast::error_code ec;
    http::read(socket, buffer, parser, ec);
    if (ec) return;
    requests->fetch_add(1);
    LoopbackRequest req;
    const auto& msg = parser.get();
    req.method = std::string(msg.method_string());
    req.target = std::string(msg.target());
    for (const auto& f : msg) req.headers.push_back({std::string(f.name_string()), std::string(f.value())});
    req.body = msg.body();
    SocketResponder responder(socket);
    handler(req, responder);
    socket.shutdown(tcp::socket::shutdown_both, ec);
    socket.close(ec);
  }

  void AcceptLoop() {
    while (!stopping.load()) {
      tcp::socket socket(ioc);
      beast::error_code ec;
      acceptor.accept(socket, ec);
      if (stopping.load()) break;
      if (ec) continue;
      std::lock_guard<std::mutex> lock(mu);
      connections.emplace_back([this, s = std::move(socket)]() mutable { Serve(std::move(s)); });
    }
  }
};

std::string LoopbackRequest::Header(std::string_view name) const {
  for (const auto& h : headers) {
    if (h.name.size() == name.size() && strncasecmp(h.name.data(), name.data(), name.size()) == 0) {
      return h.value;
    }
  }
  return "";
}

Result<std::unique_ptr<LoopbackHttpServer>> LoopbackHttpServer::Start(LoopbackHandler handler) {
  auto impl = std::make_unique<Impl>();
  impl->handler = std::move(handler);
  beast::error_code ec;
  tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
  impl->acceptor.open(ep.protocol(), ec);
  if (!ec) impl->acceptor.bind(ep, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return UnavailableError("loopback HTTP server: cannot listen on 127.0.0.1: " + ec.message());
  int port = impl->acceptor.local_endpoint().port();
  std::unique_ptr<LoopbackHttpServer> server(new LoopbackHttpServer(std::move(impl), port));
  return server;
}

LoopbackHttpServer::LoopbackHttpServer(std::unique_ptr<Impl> impl, int port)
    : impl_(std::move(impl)), port_(port) {
  impl_->requests = &requests_;
  impl_->accept_thread = std::thread([this] { impl_->AcceptLoop(); });
}

LoopbackHttpServer::~LoopbackHttpServer() {
  impl_->stopping.store(true);
  {
    // Wake the blocking accept() with a connection of our own.
    asio::io_context ioc;
    tcp::socket wake(ioc);
    beast::error_code ec;
    wake.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
  }
  impl_->accept_thread.join();
  std::vector<std::thread> connections;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    connections.swap(impl_->connections);
  }
  for (auto& t : connections) t.join();
  beast::error_code ec;
  impl_->acceptor.close(ec);
}

std::string LoopbackHttpServer::Url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
}

}  // namespace hotline::net::testing
