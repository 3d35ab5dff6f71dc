#include "server/admin/admin_api.h"

#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/log.h"

namespace hotline::server {

namespace {

using json = nlohmann::json;

constexpr size_t kMinTokenBytes = 16;
constexpr size_t kMaxTokenBytes = 256;
constexpr size_t kMaxCallIdBytes = 256;

Response JsonError(int status, std::string_view message) {
  return Response::Json(status, json{{"error", message}}.dump());
}

}  // namespace

Status AdminConfig::Validate() const {
  if (!token.empty() && (token.size() < kMinTokenBytes || token.size() > kMaxTokenBytes)) {
    return InvalidArgumentError(
        "token must be empty (admin API off) or 16..256 characters; use a "
        "long random string, e.g. `openssl rand -hex 24`");
  }
  for (char c : token) {
    if (c <= ' ' || c > '~') {
      return InvalidArgumentError("token must be printable ASCII without spaces");
    }
  }
  if (token_env.size() > 128) return InvalidArgumentError("token_env is too long");
  return Status::Ok();
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  // Fixed-size digests compared with OpenSSL's constant-time compare: neither the contents nor
  // the lengths of the inputs show in the timing.
  unsigned char da[SHA256_DIGEST_LENGTH], db[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(a.data()), a.size(), da);
  SHA256(reinterpret_cast<const unsigned char*>(b.data()), b.size(), db);
  return CRYPTO_memcmp(da, db, sizeof da) == 0;
}

Status RegisterAdminApi(HttpServer& server, const std::string& token, AdminActions actions) {
  if (!token.empty() && (token.size() < kMinTokenBytes || token.size() > kMaxTokenBytes)) {
    return InvalidArgumentError("admin token must be 16..256 characters");
  }
  auto shared = std::make_shared<AdminActions>(std::move(actions));
  // Wraps an operation with the token check (or the "disabled" answer).
  auto guarded = [token](std::function<Response(const Request&)> op) -> Handler {
    return [token, op = std::move(op)](const Request& req, const CancelToken&) -> Response {
      if (token.empty()) {
        return JsonError(404,
                         "the admin API is disabled: set admin.token in the configuration (or "
                         "the HOTLINE_ADMIN_TOKEN environment variable) to enable it");
      }
      const std::string auth = req.HeaderValue("Authorization");
      constexpr std::string_view kBearer = "Bearer ";
      const bool has_bearer =
          auth.size() > kBearer.size() && auth.compare(0, kBearer.size(), kBearer) == 0;
      if (!has_bearer ||
          !ConstantTimeEquals(std::string_view(auth).substr(kBearer.size()), token)) {
        HLOG_WARN("admin: {} {} from {} refused ({} token)", req.method, req.path, req.remote,
                  has_bearer ? "wrong" : "no");
        Response r = JsonError(401, has_bearer ? "wrong admin token"
                                               : "missing admin token: send Authorization: "
                                                 "Bearer <admin.token>");
        r.headers.push_back({"WWW-Authenticate", "Bearer realm=\"hotline-admin\""});
        return r;
      }
      HLOG_INFO("admin: {} {} from {}", req.method, req.path, req.remote);
      return op(req);
    };
  };

  RETURN_IF_ERROR(
      server.Handle("GET", "/admin/calls", guarded([shared](const Request&) {
                      json calls = json::array();
                      if (shared->calls != nullptr) {
                        for (const auto& c : shared->calls->List()) {
                          calls.push_back({{"id", c.id},
                                           {"transport", c.transport},
                                           {"caller_id", c.caller_id},
                                           {"remote", c.remote},
                                           {"started_unix_ms", c.started_unix_ms},
                                           {"duration_ms", c.duration_ms}});
                        }
                      }
                      json out = {{"calls", calls},
                                  {"active", calls.size()},
                                  {"max_calls", shared->calls ? shared->calls->max_calls() : 0}};
                      return Response::Json(200, out.dump());
                    })));

  RETURN_IF_ERROR(
      server.Handle("POST", "/admin/calls/end", guarded([shared](const Request& req) {
                      json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
                      if (body.is_discarded() || !body.is_object() || !body.contains("id") ||
                          !body["id"].is_string()) {
                        return JsonError(400, "expected a JSON object {\"id\": \"<call id>\"}");
                      }
                      const std::string id = body["id"].get<std::string>();
                      if (id.empty() || id.size() > kMaxCallIdBytes) {
                        return JsonError(400, "id must be 1..256 characters");
                      }
                      const size_t ended =
                          shared->calls ? shared->calls->End(id, "ended by an administrator") : 0;
                      if (ended == 0)
                        return JsonError(404, "no call in progress with id '" + id + "'");
                      return Response::Json(200, json{{"id", id}, {"ended", ended}}.dump());
                    })));

  auto run = [](const std::function<Result<std::string>()>& action, std::string_view what) {
    if (!action) return JsonError(501, std::string(what) + " is not available in this server");
    Result<std::string> r = action();
    if (!r.ok()) {
      HLOG_WARN("admin: {} failed: {}", what, r.status().ToString());
      const int status = r.status().code() == StatusCode::kInvalidArgument ? 422 : 500;
      return JsonError(status, std::string(what) + " failed: " + r.status().message());
    }
    return Response::Json(200, *r);
  };
  RETURN_IF_ERROR(server.Handle("POST", "/admin/kb/reload", guarded([shared, run](const Request&) {
                                  return run(shared->reload_kb, "knowledge-base reload");
                                })));
  RETURN_IF_ERROR(server.Handle(
      "POST", "/admin/caches/flush",
      guarded([shared, run](const Request&) { return run(shared->flush_caches, "cache flush"); })));
  RETURN_IF_ERROR(server.Handle("GET", "/admin/config", guarded([shared](const Request&) {
                                  if (!shared->effective_config)
                                    return JsonError(501, "no configuration to show");
                                  Response r;
                                  r.status = 200;
                                  r.content_type = "application/yaml; charset=utf-8";
                                  r.body = shared->effective_config();
                                  return r;
                                })));
  return Status::Ok();
}

}  // namespace hotline::server
