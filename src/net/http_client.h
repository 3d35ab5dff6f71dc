// HttpClient: a small blocking HTTP/1.1 client for talking to model servers (OpenAI-compatible
// TTS, ASR and LLM endpoints) and downloading models, over http:// or https://.
//
// TLS (https://): TLS 1.2 or later; the server's certificate must chain to a trusted authority
// (the system's store, or `ca_file`) and name the URL's host (checked as RFC 6125 host names and
// IP addresses); the host goes out as SNI. There is no switch to skip the checks.
//
// Every call opens one connection, sends one request with "Connection: close", reads the response
// and closes (no pooling: the remote servers Hotline talks to spend far longer computing than a
// loopback or LAN connect costs). Bodies may arrive with Content-Length, chunked transfer coding or
// until EOF; Stream() hands each piece of the decoded body to a callback as soon as it is read,
// which is what Server-Sent Events (token streams) and streamed audio need.
//
// Bounds: connect, idle (no byte for that long) and total timeouts; header and body size limits.
// Cancellation: a CancelToken is polled every `poll_ms` while waiting on the network; once raised
// the socket is closed and the call returns kCancelled within about one poll period.
//
// Threads: calls block the calling thread (never call from an I/O thread). An HttpClient is a
// value holding only its config; one instance may be used from many threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/cancel_token.h"
#include "common/status.h"

namespace hotline::net {

struct HttpClientConfig {
  // Time to resolve and connect. Short fails over fast; long tolerates a busy remote accept queue.
  int connect_timeout_ms = 3000;
  // Longest silence between two reads. Must exceed the server's time to first byte (an LLM's
  // prompt processing); shorter notices a hung server sooner.
  int idle_timeout_ms = 30000;
  // Limit for the whole exchange. Bounds a stream that trickles forever.
  int total_timeout_ms = 120000;
  // Largest response body accepted; larger responses fail with kResourceExhausted.
  int64_t max_response_bytes = 64ll << 20;
  // Largest response header block accepted.
  int max_header_bytes = 64 << 10;
  // How often a blocked call looks at its CancelToken. Smaller reacts faster, wakes more often.
  int poll_ms = 5;
  // PEM file of the authorities trusted for https:// ("" = the system's store, from the
  // ca-certificates package). A private CA, or a test's self-signed certificate.
  std::string ca_file;

  template <class V>
  void Visit(V& v) {
    v.Field("connect_timeout_ms", connect_timeout_ms, "Resolve+connect timeout (ms)");
    v.Field("idle_timeout_ms", idle_timeout_ms, "Longest wait for the next bytes (ms)");
    v.Field("total_timeout_ms", total_timeout_ms, "Limit for a whole request/response (ms)");
    v.Field("max_response_bytes", max_response_bytes, "Largest response body accepted (bytes)");
    v.Field("max_header_bytes", max_header_bytes, "Largest response header block (bytes)");
    v.Field("poll_ms", poll_ms, "Cancellation polling period while blocked (ms)");
    v.Field("ca_file", ca_file,
            "PEM file of the authorities trusted for https:// (empty: the system's store)");
  }
  // Checks the limits, and that ca_file loads (see CheckTrustedAuthorities): what a
  // configuration runs once when it is loaded.
  Status Validate() const;
  // The limits only: what every request checks (the TLS context lookup reads ca_file itself).
  Status ValidateLimits() const;
};

// Loads the authorities an https:// request trusts: `ca_file` (a PEM file), or the system's store
// when it is empty. The loaded set is kept for the process and shared by every request that names
// the same file (reloaded when the file's size or modification time changes), so a request pays
// for the TLS handshake, not for parsing the store. Configurations call it when they are
// validated: a missing, unreadable or non-PEM file is reported at start-up with its name, not at
// the first request. Thread-safe.
Status CheckTrustedAuthorities(const std::string& ca_file);

struct HttpHeader {
  std::string name;
  std::string value;
};

struct HttpRequest {
  std::string method = "GET";       // GET, POST, PUT, DELETE, ...
  std::string url;                  // http[s]://host[:port]/path
  std::vector<HttpHeader> headers;  // Host, Content-Length and Connection are set by the client
  std::string body;

  static HttpRequest Get(std::string url) {
    HttpRequest r;
    r.url = std::move(url);
    return r;
  }
  static HttpRequest Post(std::string url, std::string body, std::string content_type) {
    HttpRequest r;
    r.method = "POST";
    r.url = std::move(url);
    r.body = std::move(body);
    r.headers.push_back({"Content-Type", std::move(content_type)});
    return r;
  }
};

struct HttpResponseHead {
  int status = 0;
  std::vector<HttpHeader> headers;
  // Value of the first header named `name` (case-insensitive), or "" when absent.
  std::string Header(std::string_view name) const;
};

struct HttpResponse {
  int status = 0;
  std::vector<HttpHeader> headers;
  std::string body;
  std::string Header(std::string_view name) const;
};

struct HttpStreamCallbacks {
  // Called once when the status line and headers have been read. A non-OK return stops the
  // exchange and becomes Stream()'s result. May be empty.
  std::function<Status(const HttpResponseHead&)> on_head;
  // Called for each piece of decoded body (any size >= 1 byte), in order. A non-OK return stops
  // the exchange and becomes Stream()'s result. May be empty (body discarded).
  std::function<Status(std::string_view bytes)> on_body;
};

class HttpClient {
 public:
  explicit HttpClient(HttpClientConfig config = {}) : config_(config) {}

  // Sends `request` and reads the whole response into memory (bounded by max_response_bytes).
  // Any HTTP status is a successful exchange: check `status` yourself. Errors: kInvalidArgument
  // (bad URL/method), kUnavailable (cannot connect / connection lost), kDeadlineExceeded
  // (a timeout), kResourceExhausted (response too large), kDataLoss (malformed response),
  // kCancelled.
  Result<HttpResponse> Send(const HttpRequest& request, const CancelToken* cancel = nullptr) const;

  // Like Send(), but hands the head and each body piece to `callbacks` as they arrive; the
  // callbacks run on the calling thread. Returns OK when the whole body was read.
  Status Stream(const HttpRequest& request, const HttpStreamCallbacks& callbacks,
                const CancelToken* cancel = nullptr) const;

  const HttpClientConfig& config() const { return config_; }

 private:
  HttpClientConfig config_;
};

}  // namespace hotline::net
