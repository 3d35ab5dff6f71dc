#include "net/url.h"

#include <charconv>

namespace hotline::net {

Result<HttpUrl> ParseHttpUrl(std::string_view url) {
  constexpr std::string_view kHttp = "http://";
  constexpr std::string_view kHttps = "https://";
  if (url.size() > 8192) return InvalidArgumentError("URL is longer than 8192 characters");
  HttpUrl out;
  std::string_view rest;
  if (url.substr(0, kHttps.size()) == kHttps) {
    out.tls = true;
    out.port = 443;
    rest = url.substr(kHttps.size());
  } else if (url.substr(0, kHttp.size()) == kHttp) {
    rest = url.substr(kHttp.size());
  } else {
    return InvalidArgumentError("'" + std::string(url) +
                                "' is not an http:// or https:// URL (expected "
                                "http[s]://host[:port]/path)");
  }
  size_t slash = rest.find_first_of("/?");
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    out.target = std::string(rest.substr(slash));
    if (out.target[0] == '?') out.target.insert(out.target.begin(), '/');
  }
  if (authority.find('@') != std::string_view::npos) {
    return InvalidArgumentError("'" + std::string(url) +
                                "': credentials in URLs are not supported; use a header");
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return InvalidArgumentError("'" + std::string(url) + "': unterminated IPv6 address");
    }
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') return InvalidArgumentError("'" + std::string(url) + "': bad host");
      port = after.substr(1);
    }
  } else if (size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return InvalidArgumentError("'" + std::string(url) + "' has no host");
  for (char c : host) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_' || c == ':';
    if (!ok) return InvalidArgumentError("'" + std::string(url) + "': bad character in host");
  }
  out.host = std::string(host);
  if (!port.empty() || authority.ends_with(":")) {
    int p = 0;
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || ptr != port.data() + port.size() || p < 1 || p > 65535) {
      return InvalidArgumentError("'" + std::string(url) + "': port must be in [1, 65535]");
    }
    out.port = p;
  }
  for (char c : out.target) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
      return InvalidArgumentError("'" + std::string(url) +
                                  "': spaces and control characters must be percent-encoded");
    }
  }
  return out;
}

std::string JoinUrl(std::string_view base, std::string_view path) {
  std::string out(base);
  while (!out.empty() && out.back() == '/') out.pop_back();
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  out += '/';
  out += path;
  return out;
}

}  // namespace hotline::net
