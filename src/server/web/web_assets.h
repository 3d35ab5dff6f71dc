// The browser pages Hotline serves (web/: the softphone and the live dashboard), embedded into the
// binary at build time by cmake/embed_files.cmake, so the server never reads the working
// directory for them.
//
//   RegisterWebPages(*server);   // GET /softphone, GET /dashboard, GET /web/<file>
//
// Every answer carries its Content-Type, `Cache-Control: no-cache` with a strong ETag (a
// revalidation gets 304 when the binary has not changed), and a strict Content-Security-Policy:
// scripts, styles, workers, media and connections from the server itself only (WebSocket to the
// same host included), no inline script or style, no framing, no plugins.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"
#include "server/http_types.h"

namespace hotline::server {

class HttpServer;

struct EmbeddedFile {
  const char* name;  // file name under web/, e.g. "softphone.js"
  const unsigned char* data;
  size_t size;
};

// Every file of web/, in the generated source (sorted by name).
std::span<const EmbeddedFile> EmbeddedWebFiles();

// The Content-Security-Policy every page is served with.
extern const char kWebContentSecurityPolicy[];

// The answer for the embedded file `name` to `request` (200, or 304 when If-None-Match holds its
// ETag); 404 when there is no such file.
Response ServeEmbeddedFile(std::string_view name, const Request& request);

// GET /softphone (softphone.html), GET /dashboard (dashboard.html) and GET /web/<file> for every
// embedded file. Before the server's Start().
Status RegisterWebPages(HttpServer& server);

}  // namespace hotline::server
