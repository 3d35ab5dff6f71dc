#include "server/web/web_assets.h"

#include <cstdint>
#include <cstdio>

#include "server/http_server.h"

namespace hotline::server {

const char kWebContentSecurityPolicy[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; media-src 'self' blob:; worker-src 'self'; manifest-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

namespace {

std::string_view ContentTypeFor(std::string_view name) {
  auto ends = [&](std::string_view ext) {
    return name.size() >= ext.size() && name.substr(name.size() - ext.size()) == ext;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".png")) return "image/png";
  if (ends(".ico")) return "image/x-icon";
  if (ends(".json")) return "application/json";
  return "application/octet-stream";
}

// FNV-1a 64 of the bytes: the ETag changes when the embedded file does.
std::string ETagOf(const EmbeddedFile& f) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < f.size; ++i) {
    h ^= f.data[i];
    h *= 1099511628211ull;
  }
  char buf[24];
  std::snprintf(buf, sizeof buf, "\"%016llx\"", static_cast<unsigned long long>(h));
  return buf;
}

const EmbeddedFile* Find(std::string_view name) {
  for (const EmbeddedFile& f : EmbeddedWebFiles()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

void AddSecurityHeaders(Response& r) {
  r.headers.push_back({"Content-Security-Policy", kWebContentSecurityPolicy});
  r.headers.push_back({"X-Content-Type-Options", "nosniff"});
  r.headers.push_back({"Referrer-Policy", "no-referrer"});
  r.headers.push_back({"X-Frame-Options", "DENY"});
  r.headers.push_back({"Cross-Origin-Opener-Policy", "same-origin"});
  r.headers.push_back({"Permissions-Policy", "microphone=(self), camera=(), geolocation=()"});
}

}  // namespace

Response ServeEmbeddedFile(std::string_view name, const Request& request) {
  const EmbeddedFile* f = Find(name);
  if (f == nullptr) {
    Response r = Response::Text(404, "not found\n");
    AddSecurityHeaders(r);
    return r;
  }
  const std::string etag = ETagOf(*f);
  Response r;
  // Revalidation is cheap and a new binary must show its own pages at once: no-cache + ETag.
  if (request.HeaderValue("If-None-Match") == etag) {
    r.status = 304;
  } else {
    r.status = 200;
    r.body.assign(reinterpret_cast<const char*>(f->data), f->size);
  }
  r.content_type = std::string(ContentTypeFor(name));
  r.headers.push_back({"Cache-Control", "no-cache"});
  r.headers.push_back({"ETag", etag});
  AddSecurityHeaders(r);
  return r;
}

Status RegisterWebPages(HttpServer& server) {
  auto page = [](std::string file) {
    return [file](const Request& req, const CancelToken&) { return ServeEmbeddedFile(file, req); };
  };
  if (Find("softphone.html") == nullptr || Find("dashboard.html") == nullptr) {
    return InternalError("the embedded web pages are missing softphone.html or dashboard.html");
  }
  RETURN_IF_ERROR(server.Handle("GET", "/softphone", page("softphone.html")));
  RETURN_IF_ERROR(server.Handle("GET", "/dashboard", page("dashboard.html")));
  for (const EmbeddedFile& f : EmbeddedWebFiles()) {
    RETURN_IF_ERROR(server.Handle("GET", std::string("/web/") + f.name, page(f.name)));
  }
  return Status::Ok();
}

}  // namespace hotline::server
