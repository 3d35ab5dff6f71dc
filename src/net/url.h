// Parsing of the http:// and https:// URLs Hotline's HTTP client accepts.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace hotline::net {

struct HttpUrl {
  std::string host;          // "127.0.0.1", "localhost", "[::1]" is returned as "::1"
  int port = 80;             // explicit port, or 80 (443 for https)
  std::string target = "/";  // path and query, always starting with '/'
  bool tls = false;          // https://
};

// Accepts "http[s]://host[:port][/path][?query]" (no credentials in the authority; spaces and
// control characters in the target must be percent-encoded).
Result<HttpUrl> ParseHttpUrl(std::string_view url);

// Joins a base URL ("http://h:8000/v1/") and a path ("/audio/speech") with exactly one '/'.
std::string JoinUrl(std::string_view base, std::string_view path);

}  // namespace hotline::net
