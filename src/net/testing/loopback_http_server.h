// LoopbackHttpServer: a tiny HTTP/1.1 server on 127.0.0.1 for tests of code that talks HTTP
// (remote TTS/ASR/LLM backends). Not for production: one thread per connection, one request per
// connection, no keep-alive.
//
// The handler decides everything about the response, including slow, streamed (chunked),
// truncated or malformed ones, so tests can exercise a client's timeouts and error handling:
//
//   auto server = LoopbackHttpServer::Start([](const LoopbackRequest& req, LoopbackResponder& r) {
//     r.Send(200, "application/json", "{\"ok\":true}");
//   });
//   HttpClient().Send({.method = "GET", .url = (*server)->Url("/v1/models")});
//
// Threads: the handler runs on the connection's own thread, concurrently for concurrent
// connections. The destructor stops accepting and joins all connection threads, so handlers must
// return (a responder whose client went away returns false from its writes).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/status.h"
#include "net/http_client.h"

namespace hotline::net::testing {

struct LoopbackRequest {
  std::string method;  // "POST"
  std::string target;  // "/v1/audio/speech?x=1"
  std::vector<HttpHeader> headers;
  std::string body;
  std::string Header(std::string_view name) const;
};

// Writes one response on the connection. Use either Send(), or BeginChunked() + WriteChunk()... +
// EndChunked(), or WriteRaw() for anything else. Writes return false once the client has gone.
class LoopbackResponder {
 public:
  virtual ~LoopbackResponder() = default;
  virtual bool Send(int status, std::string_view content_type, std::string_view body) = 0;
  virtual bool BeginChunked(int status, std::string_view content_type) = 0;
  virtual bool WriteChunk(std::string_view data) = 0;
  virtual bool EndChunked() = 0;
  virtual bool WriteRaw(std::string_view bytes) = 0;
};

using LoopbackHandler = std::function<void(const LoopbackRequest&, LoopbackResponder&)>;

class LoopbackHttpServer {
 public:
  // Binds 127.0.0.1 on a free port and starts accepting.
  static Result<std::unique_ptr<LoopbackHttpServer>> Start(LoopbackHandler handler);
  ~LoopbackHttpServer();

  int port() const { return port_; }
  // "http://127.0.0.1:<port>" + path.
  std::string Url(std::string_view path = "") const;
  // Requests whose head was read completely.
  int requests() const { return requests_.load(); }

  struct Impl;

 private:
  explicit LoopbackHttpServer(std::unique_ptr<Impl> impl, int port);
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
  std::atomic<int> requests_{0};
};

}  // namespace hotline::net::testing
