#include "server/http_types.h"

#include <strings.h>

namespace hotline::server {

std::string Request::HeaderValue(std::string_view name) const {
  for (const auto& h : headers) {
    if (h.name.size() == name.size() && strncasecmp(h.name.data(), name.data(), name.size()) == 0) {
      return h.value;
    }
  }
  return "";
}

Response Response::Text(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Response Response::Json(int status, std::string body) {
  Response r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

}  // namespace hotline::server
