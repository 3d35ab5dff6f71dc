#include "server/http_request_reader.h"

#include <cstdint>
#include <utility>

namespace hotline::server {

void LimitRequestParser(RequestParser& parser, const ServerConfig& config) {
  parser.header_limit(static_cast<uint32_t>(config.max_header_bytes));
  parser.body_limit(static_cast<uint64_t>(config.max_request_body_bytes));
}

Request ToRequest(ParsedRequest& parsed, std::string remote) {
  Request request;
  request.method = std::string(parsed.method_string());
  request.target = std::string(parsed.target());
  const size_t q = request.target.find('?');
  request.path = request.target.substr(0, q);
  if (q != std::string::npos) request.query = request.target.substr(q + 1);
  for (const auto& f : parsed) {
    request.headers.push_back({std::string(f.name_string()), std::string(f.value())});
  }
  request.body = std::move(parsed.body());
  request.remote = std::move(remote);
  return request;
}

}  // namespace hotline::server
