// CallServer: one Hotline node's front door, assembled from a call stack.
//
// Everything `hotline serve` listens with, sharing one call registry (so calls.max_calls caps the
// calls of every transport together):
//   - the HTTP/WebSocket server: Twilio Media Streams at /twilio, the browser softphone at
//     /softphone/ws, the web pages (/softphone, /dashboard), /api/dashboard, /healthz, /readyz,
//     /metrics and the admin API at /admin/* (on only with a token);
//   - the Asterisk AudioSocket listener, when audiosocket.port >= 0;
//   - readiness: /readyz is 503 while draining or at calls.max_calls.
//
//   ASSIGN_OR_RETURN(auto node, CallServer::Create(*stack, options));
//   RETURN_IF_ERROR(node->Start());
//   ... on SIGTERM: node->BeginDrain(); wait while node->active_calls() > 0; node->Stop();
//
// Lifetime: `stack` must outlive the CallServer. Stop() (also run by the destructor) stops the
// listeners, hangs up the calls in progress and joins every thread.
// Thread-safety: Start/Stop/BeginDrain from one controlling thread; active_calls() and the URL
// accessors from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "pipeline/call_stack.h"
#include "server/admin/admin_api.h"
#include "server/calls/audiosocket_server.h"
#include "server/calls/call_registry.h"
#include "server/calls/calls_config.h"
#include "server/calls/softphone_endpoint.h"
#include "server/calls/twilio_endpoint.h"
#include "server/http_server.h"
#include "server/web/dashboard.h"

namespace hotline::server {

struct CallServerOptions {
  ServerConfig server;
  CallsConfig calls;
  TwilioConfig twilio;
  AudioSocketConfig audiosocket;  // port -1: no AudioSocket listener
  AdminConfig admin;              // admin.token empty: the admin API is off
  // What GET /admin/config returns: the effective configuration, secrets already redacted.
  std::string effective_config_yaml;
};

class CallServer {
 public:
  // Builds the endpoints and registers every route; nothing listens before Start(). Errors name
  // the part that failed ("twilio endpoint: ...", "admin: ...").
  static Result<std::unique_ptr<CallServer>> Create(pipeline::CallStack& stack,
                                                    const CallServerOptions& options);
  ~CallServer();
  CallServer(const CallServer&) = delete;
  CallServer& operator=(const CallServer&) = delete;

  // Binds and starts accepting (HTTP, then AudioSocket), and starts the dashboard's sampler.
  Status Start();
  // From now on /readyz answers 503 ("draining"), so a balancer sends new calls elsewhere; the
  // calls in progress go on.
  void BeginDrain();
  // Idempotent.
  void Stop();

  int active_calls() const { return registry_->active(); }
  bool draining() const { return draining_->load(); }
  HttpServer& http() { return *http_; }
  // The AudioSocket listener's port after Start(); -1 when there is none.
  int audiosocket_port() const { return audiosocket_ ? audiosocket_->port() : -1; }
  // Where calls are answered and where the pages are, one line each, for the operator's console
  // ("answering calls at ws://...", "softphone at http://...").
  std::vector<std::string> Describe() const;

 private:
  CallServer() = default;
  // Logs, once at start, what of the call edge is NOT checked (unsigned Twilio, open AudioSocket).
  void WarnAboutTrust() const;

  CallServerOptions options_;
  std::shared_ptr<CallRegistry> registry_;
  std::shared_ptr<std::atomic<bool>> draining_ = std::make_shared<std::atomic<bool>>(false);
  // Declared before the HTTP server: its handler must outlive the server.
  std::unique_ptr<Dashboard> dashboard_;
  std::unique_ptr<TwilioEndpoint> twilio_;
  std::unique_ptr<SoftphoneEndpoint> softphone_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<AudioSocketServer> audiosocket_;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace hotline::server
