#include "net/http_client.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <strings.h>

#include <algorithm>
#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "net/url.h"

namespace hotline::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

std::string FindHeader(const std::vector<HttpHeader>& headers, std::string_view name) {
  for (const auto& h : headers) {
    if (h.name.size() == name.size() && strncasecmp(h.name.data(), name.data(), name.size()) == 0) {
      return h.value;
    }
  }
  return "";
}

// The TLS client contexts, one per trusted-authorities file ("" = the system's store). An
// SSL_CTX may be shared by connections on any thread once it is set up; it is never changed
// after it enters the cache, only replaced when its file changes.
class TrustStore {
 public:
  static TrustStore& Get() {
    static TrustStore* store = new TrustStore();  // never destroyed: requests may run at exit
    return *store;
  }

  Result<std::shared_ptr<ssl::context>> Context(const std::string& ca_file) {
    // The file's bytes are the cache key: reading a few kilobytes is cheap next to a handshake,
    // and a certificate rotated in place (same name, even the same size) is never missed.
    std::string pem;
    if (!ca_file.empty()) {
      std::error_code ec;
      std::ifstream in(ca_file, std::ios::binary);
      // A regular file only: a folder, a FIFO or a device (/dev/zero) would never end.
      if (!in || !std::filesystem::is_regular_file(ca_file, ec)) {
        return InvalidArgumentError("'" + ca_file + "' is not a readable file");
      }
      char buf[16384];
      while (in.read(buf, sizeof buf) || in.gcount() > 0) {
        pem.append(buf, static_cast<size_t>(in.gcount()));
        if (pem.size() > kMaxCaFileBytes) {
          return InvalidArgumentError("'" + ca_file + "' is over " +
                                      std::to_string(kMaxCaFileBytes >> 20) +
                                      " MiB; a CA bundle is far smaller");
        }
      }
    }
    std::lock_guard<std::mutex> lock(mu_);
    auto it = contexts_.find(ca_file);
    if (it != contexts_.end() && it->second.pem == pem) return it->second.ctx;
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                     ssl::context::no_tlsv1_1);
    beast::error_code ec;
    if (ca_file.empty()) {
      ctx->set_default_verify_paths(ec);
    } else {
      ctx->add_certificate_authority(asio::buffer(pem), ec);
      // An empty or PEM-less file can come back without an error: count what was added.
      if (!ec && sk_X509_OBJECT_num(X509_STORE_get0_objects(
                     SSL_CTX_get_cert_store(ctx->native_handle()))) <= 0) {
        ec = asio::error::invalid_argument;
      }
    }
    if (ec) {
      return InvalidArgumentError("cannot load the trusted certificates (" +
                                  (ca_file.empty() ? std::string("system store") : ca_file) +
                                  "): " + ec.message() + " (a PEM file of CA certificates?)");
    }
    ctx->set_verify_mode(ssl::verify_peer);
    contexts_[ca_file] = Entry{std::move(pem), ctx};
    return ctx;
  }

 private:
  static constexpr size_t kMaxCaFileBytes = 16 << 20;
  struct Entry {
    std::string pem;  // the file's bytes when loaded ("" for the system store)
    std::shared_ptr<ssl::context> ctx;
  };
  std::mutex mu_;
  std::map<std::string, Entry> contexts_;
};

// Runs one asynchronous operation to completion on a private io_context, watching the cancel
// token and the overall deadline. The operation's handler sets `done`.
class Exchange {
 public:
  Exchange(const HttpClientConfig& config, const CancelToken* cancel, std::string where)
      : config_(config),
        cancel_(cancel),
        where_(std::move(where)),
        deadline_(Clock::now() + std::chrono::milliseconds(config.total_timeout_ms)),
        stream_(ioc_) {}

  ~Exchange() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  beast::tcp_stream& stream() { return stream_; }
  asio::io_context& ioc() { return ioc_; }

  // Waits for `done`; on cancel or deadline closes the socket, lets the aborted handler run and
  // returns the reason.
  // `abort` makes the pending operation complete early (default: close the socket).
  Status Wait(const bool& done, const std::function<void()>& abort = nullptr) {
    ioc_.restart();
    Status stop;
    while (!done) {
      if (stop.ok()) {
        if (IsCancelled(cancel_)) {
          stop = CancelledError(where_ + ": request cancelled");
        } else if (Clock::now() >= deadline_) {
          stop = DeadlineExceededError(where_ + ": no complete response within total_timeout_ms=" +
                                       std::to_string(config_.total_timeout_ms));
        }
        if (!stop.ok()) {  // the pending operation completes with an error
          if (abort) abort();
          stream_.close();
        }
      }
      ioc_.run_for(std::chrono::milliseconds(config_.poll_ms));
      if (ioc_.stopped()) ioc_.restart();
    }
    return stop;
  }

  Status ErrorStatus(const beast::error_code& ec, std::string_view during) const {
    std::string what = where_ + ": " + std::string(during) + ": " + ec.message();
    if (ec == beast::error::timeout) {
      return DeadlineExceededError(
          where_ + ": timed out " + std::string(during) +
          " (connect_timeout_ms=" + std::to_string(config_.connect_timeout_ms) +
          ", idle_timeout_ms=" + std::to_string(config_.idle_timeout_ms) + ")");
    }
    if (ec == http::error::body_limit) {
      return ResourceExhaustedError(where_ + ": response body exceeds max_response_bytes=" +
                                    std::to_string(config_.max_response_bytes));
    }
    if (ec == http::error::header_limit) {
      return ResourceExhaustedError(where_ + ": response headers exceed max_header_bytes=" +
                                    std::to_string(config_.max_header_bytes));
    }
    if (ec.category() == http::make_error_code(http::error::bad_target).category()) {
      return DataLossError(what + " (malformed or truncated HTTP response)");
    }
    if (ec.category() == asio::error::get_ssl_category() &&
        ERR_GET_REASON(static_cast<unsigned long>(ec.value())) ==
            SSL_R_CERTIFICATE_VERIFY_FAILED) {
      return UnavailableError(what +
                              " (TLS: is the server's certificate valid for this host and "
                              "signed by a trusted authority? see ca_file)");
    }
    if (ec.category() == asio::error::get_ssl_category() ||
        ec.category() == ssl::error::get_stream_category()) {
      return UnavailableError(what + " (TLS: does the server speak TLS 1.2 or later on this port?)");
    }
    return UnavailableError(what + " (is the server running and reachable?)");
  }

 private:
  const HttpClientConfig& config_;
  const CancelToken* cancel_;
  std::string where_;
  Clock::time_point deadline_;
  asio::io_context ioc_;
  beast::tcp_stream stream_;
};

// Sends the request over `s` (the TCP stream, or TLS over it) and reads the response into
// `callbacks`. Timeouts are set on `tcp`, which carries every byte either way.
template <class AsyncStream>
Status Converse(Exchange& ex, AsyncStream& s, const HttpUrl& url, http::verb verb,
                const HttpRequest& request, const HttpStreamCallbacks& callbacks,
                const HttpClientConfig& config, const std::string& where) {
  beast::tcp_stream& stream = ex.stream();
  bool done = false;
  beast::error_code ec;
  // Send the request.
  http::request<http::string_body> req{verb, url.target, 11};
  const int default_port = url.tls ? 443 : 80;
  req.set(http::field::host,
          url.port == default_port ? url.host : url.host + ":" + std::to_string(url.port));
  req.set(http::field::user_agent, "hotline");
  for (const auto& h : request.headers) {
    if (h.name.find_first_of("\r\n:") != std::string::npos ||
        h.value.find_first_of("\r\n") != std::string::npos) {
      return InvalidArgumentError(where + ": header '" + h.name + "' contains CR, LF or ':'");
    }
    req.set(h.name, h.value);
  }
  req.set(http::field::connection, "close");
  req.body() = request.body;
  req.prepare_payload();

  stream.expires_after(std::chrono::milliseconds(config.idle_timeout_ms));
  done = false;
  http::async_write(s, req, [&](beast::error_code e, size_t) {
    ec = e;
    done = true;
  });
  RETURN_IF_ERROR(ex.Wait(done));
  if (ec) return ex.ErrorStatus(ec, "sending the request");

  // Read the head.
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.header_limit(static_cast<uint32_t>(config.max_header_bytes));
  parser.body_limit(static_cast<uint64_t>(config.max_response_bytes));
  if (verb == http::verb::head) parser.skip(true);
  stream.expires_after(std::chrono::milliseconds(config.idle_timeout_ms));
  done = false;
  http::async_read_header(s, buffer, parser, [&](beast::error_code e, size_t) {
    ec = e;
    done = true;
  });
  RETURN_IF_ERROR(ex.Wait(done));
  if (ec) return ex.ErrorStatus(ec, "reading the response head");

  HttpResponseHead head;
  head.status = static_cast<int>(parser.get().result_int());
  for (const auto& field : parser.get()) {
    head.headers.push_back({std::string(field.name_string()), std::string(field.value())});
  }
  if (callbacks.on_head) RETURN_IF_ERROR(callbacks.on_head(head));

  // Read the body piece by piece; each piece goes to the callback as soon as it is decoded.
  std::array<char, 16384> piece;
  while (!parser.is_done()) {
    parser.get().body().data = piece.data();
    parser.get().body().size = piece.size();
    stream.expires_after(std::chrono::milliseconds(config.idle_timeout_ms));
    done = false;
    http::async_read_some(s, buffer, parser, [&](beast::error_code e, size_t) {
      ec = e;
      done = true;
    });
    RETURN_IF_ERROR(ex.Wait(done));
    if (ec == http::error::need_buffer) ec = {};
    if (ec == ssl::error::stream_truncated && !parser.chunked() && !parser.content_length()) {
      // A body that ends with the connection: a TLS peer that closes without close_notify has
      // still sent it whole.
      ec = {};
      parser.put_eof(ec);
    }
    if (ec) return ex.ErrorStatus(ec, "reading the response body");
    size_t got = piece.size() - parser.get().body().size;
    if (got > 0 && callbacks.on_body) {
      RETURN_IF_ERROR(callbacks.on_body(std::string_view(piece.data(), got)));
    }
  }
  return Status::Ok();
}

}  // namespace

Status HttpClientConfig::Validate() const {
  RETURN_IF_ERROR(ValidateLimits());
  if (!ca_file.empty()) RETURN_IF_ERROR(CheckTrustedAuthorities(ca_file).WithContext("ca_file"));
  return Status::Ok();
}

Status HttpClientConfig::ValidateLimits() const {
  if (connect_timeout_ms < 1) return InvalidArgumentError("connect_timeout_ms must be >= 1");
  if (idle_timeout_ms < 1) return InvalidArgumentError("idle_timeout_ms must be >= 1");
  if (total_timeout_ms < 1) return InvalidArgumentError("total_timeout_ms must be >= 1");
  if (max_response_bytes < 1) return InvalidArgumentError("max_response_bytes must be >= 1");
  if (max_header_bytes < 256) return InvalidArgumentError("max_header_bytes must be >= 256");
  if (poll_ms < 1 || poll_ms > 1000) return InvalidArgumentError("poll_ms must be in [1, 1000]");
  return Status::Ok();
}

Status CheckTrustedAuthorities(const std::string& ca_file) {
  return TrustStore::Get().Context(ca_file).status();
}

std::string HttpResponseHead::Header(std::string_view name) const {
  return FindHeader(headers, name);
}
std::string HttpResponse::Header(std::string_view name) const { return FindHeader(headers, name); }

Status HttpClient::Stream(const HttpRequest& request, const HttpStreamCallbacks& callbacks,
                          const CancelToken* cancel) const {
  // The limits only: ca_file is read once per https request, by the context lookup below.
  RETURN_IF_ERROR(config_.ValidateLimits().WithContext("http client config"));
  ASSIGN_OR_RETURN(HttpUrl url, ParseHttpUrl(request.url));
  http::verb verb = http::string_to_verb(request.method);
  if (verb == http::verb::unknown) {
    return InvalidArgumentError("unknown HTTP method '" + request.method + "'");
  }
  const std::string where = request.method + " " + request.url;
  if (IsCancelled(cancel)) return CancelledError(where + ": request cancelled");
  // https: the trusted authorities first, so a bad ca_file fails before anything goes out.
  std::shared_ptr<ssl::context> tls_context;
  if (url.tls) {
    Result<std::shared_ptr<ssl::context>> ctx = TrustStore::Get().Context(config_.ca_file);
    if (!ctx.ok()) return ctx.status().WithContext(where);
    tls_context = std::move(*ctx);
  }

  Exchange ex(config_, cancel, where);
  beast::tcp_stream& stream = ex.stream();
  bool done = false;
  beast::error_code ec;

  // Resolve and connect.
  tcp::resolver resolver(ex.ioc());
  tcp::resolver::results_type endpoints;
  resolver.async_resolve(url.host, std::to_string(url.port),
                         [&](beast::error_code e, tcp::resolver::results_type r) {
                           ec = e;
                           endpoints = std::move(r);
                           done = true;
                         });
  RETURN_IF_ERROR(ex.Wait(done, [&] { resolver.cancel(); }));
  if (ec) return ex.ErrorStatus(ec, "resolving " + url.host);

  stream.expires_after(std::chrono::milliseconds(config_.connect_timeout_ms));
  done = false;
  stream.async_connect(endpoints, [&](beast::error_code e, const tcp::endpoint&) {
    ec = e;
    done = true;
  });
  RETURN_IF_ERROR(ex.Wait(done));
  if (ec) return ex.ErrorStatus(ec, "connecting");

  if (!url.tls) return Converse(ex, stream, url, verb, request, callbacks, config_, where);

  // TLS: the peer's certificate must chain to a trusted authority (the system's, or ca_file) and
  // name the host; the host name also goes out as SNI.
  ssl::stream<beast::tcp_stream&> tls(stream, *tls_context);
  tls.set_verify_callback(ssl::host_name_verification(url.host));
  if (SSL_set_tlsext_host_name(tls.native_handle(), url.host.c_str()) != 1) {
    return InvalidArgumentError(where + ": cannot use '" + url.host + "' as the TLS server name");
  }
  stream.expires_after(std::chrono::milliseconds(config_.connect_timeout_ms));
  done = false;
  tls.async_handshake(ssl::stream_base::client, [&](beast::error_code e) {
    ec = e;
    done = true;
  });
  RETURN_IF_ERROR(ex.Wait(done));
  if (ec) return ex.ErrorStatus(ec, "TLS handshake with " + url.host);
  return Converse(ex, tls, url, verb, request, callbacks, config_, where);
}

Result<HttpResponse> HttpClient::Send(const HttpRequest& request, const CancelToken* cancel) const {
  HttpResponse response;
  HttpStreamCallbacks callbacks;
  callbacks.on_head = [&](const HttpResponseHead& head) {
    response.status = head.status;
    response.headers = head.headers;
    return Status::Ok();
  };
  callbacks.on_body = [&](std::string_view bytes) {
    response.body.append(bytes);  // the parser's body_limit bounds the total
    return Status::Ok();
  };
  RETURN_IF_ERROR(Stream(request, callbacks, cancel));
  return response;
}

}  // namespace hotline::net
