// The admin API: token-protected operations on a running `hotline serve`, over its HTTP server.
//
//   GET  /admin/calls           calls in progress (every transport) as JSON
//   POST /admin/calls/end       {"id": "<call id>"}: ends that call (the agent hangs up)
//   POST /admin/kb/reload       re-imports the knowledge base, invalidates what changed
//   POST /admin/caches/flush    makes every cached answer a miss
//   GET  /admin/config          the effective configuration as YAML, secrets redacted
//
// Every request must carry `Authorization: Bearer <admin.token>`; without it, or with another
// token, the answer is 401 with a JSON error (the token is compared in constant time). With no
// token configured the admin API is off: every path above answers 404 with a JSON message saying
// how to turn it on (never open by default). Errors are JSON {"error": "..."}; the operations'
// results JSON objects (the configuration excepted).
//
// Threads: handlers run on the server's worker threads (reload and flush block on SQLite and the
// cache store); the actions must be thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "server/calls/call_registry.h"
#include "server/http_server.h"

namespace hotline::server {

struct AdminConfig {
  // Bearer token for /admin/*. Empty: the admin API is off. Prefer token_env to keeping it here.
  std::string token;
  // Environment variable that, when set and non-empty, replaces `token` (read by `hotline serve`).
  std::string token_env = "HOTLINE_ADMIN_TOKEN";

  template <class V>
  void Visit(V& v) {
    v.Field("token", token, "Bearer token for /admin/* (empty: admin API off)");
    v.Field("token_env", token_env, "Environment variable overriding token when set");
  }
  Status Validate() const;
};

// What the admin endpoints do; each returns a JSON object text or an error.
struct AdminActions {
  std::function<Result<std::string>()> reload_kb;
  std::function<Result<std::string>()> flush_caches;
  std::function<std::string()> effective_config;  // YAML, secrets already redacted
  std::shared_ptr<CallRegistry> calls;
};

// Registers the routes above on `server` (before Start()). `token` empty: the routes answer 404.
Status RegisterAdminApi(HttpServer& server, const std::string& token, AdminActions actions);

// Equal contents, in time that depends on neither the contents nor the lengths (SHA-256 digests
// compared with CRYPTO_memcmp).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace hotline::server
