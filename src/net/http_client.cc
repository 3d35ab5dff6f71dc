#include "net/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <functional>
#include <strings.h>

#include "net/url.h"

namespace hotline::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

std::string FindHeader(const std::vector<HttpHeader>& headers, std::string_view name) {
  for (const auto& h : headers) {
    if (h.name.size() == name.size() &&
        strncasecmp(h.name.data(), name.data(), name.size()) == 0) {
      return h.value;
    }
  }
  return "";
}

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
      return DeadlineExceededError(where_ + ": timed out " + std::string(during) +
                                   " (connect_timeout_ms=" +
                                   std::to_string(config_.connect_timeout_ms) +
                                   ", idle_timeout_ms=" + std::to_string(config_.idle_timeout_ms) +
                                   ")");
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

}  // namespace

Status HttpClientConfig::Validate() const {
  if (connect_timeout_ms < 1) return InvalidArgumentError("connect_timeout_ms must be >= 1");
  if (idle_timeout_ms < 1) return InvalidArgumentError("idle_timeout_ms must be >= 1");
  if (total_timeout_ms < 1) return InvalidArgumentError("total_timeout_ms must be >= 1");
  if (max_response_bytes < 1) return InvalidArgumentError("max_response_bytes must be >= 1");
  if (max_header_bytes < 256) return InvalidArgumentError("max_header_bytes must be >= 256");
  if (poll_ms < 1 || poll_ms > 1000) return InvalidArgumentError("poll_ms must be in [1, 1000]");
  return Status::Ok();
}

std::string HttpResponseHead::Header(std::string_view name) const {
  return FindHeader(headers, name);
}
std::string HttpResponse::Header(std::string_view name) const { return FindHeader(headers, name); }

Status HttpClient::Stream(const HttpRequest& request, const HttpStreamCallbacks& callbacks,
                          const CancelToken* cancel) const {
  RETURN_IF_ERROR(config_.Validate().WithContext("http client config"));
  ASSIGN_OR_RETURN(HttpUrl url, ParseHttpUrl(request.url));
  http::verb verb = http::string_to_verb(request.method);
  if (verb == http::verb::unknown) {
    return InvalidArgumentError("unknown HTTP method '" + request.method + "'");
  }
  const std::string where = request.method + " " + request.url;
  if (IsCancelled(cancel)) return CancelledError(where + ": request cancelled");

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

  // Send the request.
  http::request<http::string_body> req{verb, url.target, 11};
  req.set(http::field::host, url.port == 80 ? url.host : url.host + ":" + std::to_string(url.port));
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

  stream.expires_after(std::chrono::milliseconds(config_.idle_timeout_ms));
  done = false;
  http::async_write(stream, req, [&](beast::error_code e, size_t) {
    ec = e;
    done = true;
  });
  RETURN_IF_ERROR(ex.Wait(done));
  if (ec) return ex.ErrorStatus(ec, "sending the request");

  // Read the head.
  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.header_limit(static_cast<uint32_t>(config_.max_header_bytes));
  parser.body_limit(static_cast<uint64_t>(config_.max_response_bytes));
  if (verb == http::verb::head) parser.skip(true);
  stream.expires_after(std::chrono::milliseconds(config_.idle_timeout_ms));
  done = false;
  http::async_read_header(stream, buffer, parser, [&](beast::error_code e, size_t) {
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
    stream.expires_after(std::chrono::milliseconds(config_.idle_timeout_ms));
    done = false;
    http::async_read_some(stream, buffer, parser, [&](beast::error_code e, size_t) {
      ec = e;
      done = true;
    });
    RETURN_IF_ERROR(ex.Wait(done));
    if (ec == http::error::need_buffer) ec = {};
    if (ec) return ex.ErrorStatus(ec, "reading the response body");
    size_t got = piece.size() - parser.get().body().size;
    if (got > 0 && callbacks.on_body) {
      RETURN_IF_ERROR(callbacks.on_body(std::string_view(piece.data(), got)));
    }
  }
  return Status::Ok();
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
