#include "server/node/call_server.h"

#include <nlohmann/json.hpp>

#include "common/log.h"
#include "common/metrics.h"
#include "server/web/web_assets.h"

namespace hotline::server {
namespace {

AdminActions AdminActionsFor(pipeline::CallStack& stack, std::shared_ptr<CallRegistry> registry,
                             std::string effective_config_yaml) {
  pipeline::CallStack* s = &stack;
  AdminActions admin;
  admin.calls = std::move(registry);
  admin.reload_kb = [s]() -> Result<std::string> {
    ASSIGN_OR_RETURN(pipeline::KbReloadReport r, s->ReloadKnowledgeBase());
    return nlohmann::json{{"source", r.source},       {"records", r.records},
                          {"added", r.added},         {"updated", r.updated},
                          {"unchanged", r.unchanged}, {"changed", r.changed},
                          {"generation", r.generation}}
        .dump();
  };
  admin.flush_caches = [s]() -> Result<std::string> {
    ASSIGN_OR_RETURN(pipeline::CacheFlushReport r, s->FlushAnswerCaches());
    return nlohmann::json{{"stamps_bumped", r.stamps_bumped},
                          {"l2_dropped", r.l2_dropped},
                          {"audio_entries", r.audio_entries}}
        .dump();
  };
  admin.effective_config = [yaml = std::move(effective_config_yaml)] { return yaml; };
  return admin;
}

bool IsLoopback(const std::string& host) {
  return host == "127.0.0.1" || host == "::1" || host == "localhost";
}

}  // namespace

Result<std::unique_ptr<CallServer>> CallServer::Create(pipeline::CallStack& stack,
                                                       const CallServerOptions& options) {
  std::unique_ptr<CallServer> n(new CallServer());
  n->options_ = options;
  const pipeline::CallResources& resources = stack.resources();
  // One registry for the whole node: the stack's (its calls, answers and model), so /metrics and
  // the dashboard show them beside the endpoints' and the HTTP server's series.
  MetricsRegistry* metrics =
      resources.metrics != nullptr ? resources.metrics : &MetricsRegistry::Global();
  // One cap for the calls on every transport.
  n->registry_ = std::make_shared<CallRegistry>(options.calls, metrics);
  n->dashboard_ = std::make_unique<Dashboard>(*metrics, DashboardOptions{},
                                              [r = n->registry_] { return r->active(); });
  auto twilio = TwilioEndpoint::Create(resources, options.twilio, metrics, n->registry_);
  if (!twilio.ok()) return twilio.status().WithContext("twilio endpoint");
  n->twilio_ = std::move(*twilio);
  auto softphone = SoftphoneEndpoint::Create(resources, {}, metrics, n->registry_);
  if (!softphone.ok()) return softphone.status().WithContext("softphone endpoint");
  n->softphone_ = std::move(*softphone);
  ASSIGN_OR_RETURN(n->http_, HttpServer::Create(options.server, metrics));
  HttpServer& http = *n->http_;
  RETURN_IF_ERROR(http.HandleWebSocket("/twilio", n->twilio_->Factory()));
  RETURN_IF_ERROR(http.HandleWebSocket("/softphone/ws", n->softphone_->Factory()));
  RETURN_IF_ERROR(RegisterWebPages(http));
  RETURN_IF_ERROR(n->dashboard_->Register(http));
  if (options.audiosocket.port >= 0) {
    auto as = AudioSocketServer::Create(resources, options.audiosocket, metrics, n->registry_);
    if (!as.ok()) return as.status().WithContext("audiosocket");
    n->audiosocket_ = std::move(*as);
  }
  RETURN_IF_ERROR(RegisterAdminApi(
                      http, options.admin.token,
                      AdminActionsFor(stack, n->registry_, options.effective_config_yaml))
                      .WithContext("admin"));
  const int max_calls = options.calls.max_calls;
  http.SetReadinessCheck([registry = n->registry_, max_calls,
                          draining = n->draining_]() -> Status {
    if (draining->load()) return UnavailableError("draining: stopping once the calls in progress end");
    if (registry->active() >= max_calls) {
      return ResourceExhaustedError("at calls.max_calls (" + std::to_string(max_calls) +
                                    " calls on all transports)");
    }
    return Status::Ok();
  });
  return n;
}

CallServer::~CallServer() { Stop(); }

Status CallServer::Start() {
  if (started_) return FailedPreconditionError("the call server is already started");
  RETURN_IF_ERROR(http_->Start());
  started_ = true;
  if (audiosocket_ != nullptr) RETURN_IF_ERROR(audiosocket_->Start());
  dashboard_->Start();
  WarnAboutTrust();
  return Status::Ok();
}

void CallServer::BeginDrain() { draining_->store(true); }

void CallServer::Stop() {
  if (!started_ || stopped_) return;
  stopped_ = true;
  if (audiosocket_ != nullptr) audiosocket_->Stop();
  http_->Stop();
  dashboard_->Stop();
}

std::vector<std::string> CallServer::Describe() const {
  std::string calls = "answering calls at " + http_->Url("/twilio", "ws");
  if (audiosocket_ != nullptr) {
    calls += " and AudioSocket tcp://" + options_.audiosocket.host + ":" +
             std::to_string(audiosocket_->port());
  }
  calls += " (metrics at " + http_->Url("/metrics") + "; admin API " +
           (options_.admin.token.empty() ? "off" : "on") + ")";
  return {calls, "softphone at " + http_->Url("/softphone") + ", dashboard at " +
                     http_->Url("/dashboard")};
}

void CallServer::WarnAboutTrust() const {
  const TwilioConfig& tw = options_.twilio;
  if (tw.EffectiveAuthToken().empty()) {
    HLOG_WARN(
        "twilio: no auth token (twilio.auth_token, HOTLINE_TWILIO_AUTH_TOKEN or "
        "TWILIO_AUTH_TOKEN): X-Twilio-Signature is NOT checked, anyone can open /twilio; {}",
        tw.trust_unsigned_caller_id
            ? "caller numbers are believed anyway (twilio.trust_unsigned_caller_id)"
            : "its callers are treated as anonymous");
  } else if (!tw.validate_signature) {
    HLOG_WARN("twilio: twilio.validate_signature is off: X-Twilio-Signature is NOT checked");
  }
  const AudioSocketConfig& as = options_.audiosocket;
  if (audiosocket_ != nullptr && as.allowed_peers.empty() && !IsLoopback(as.host)) {
    HLOG_WARN(
        "audiosocket: listening on {} with no audiosocket.allowed_peers: any host that reaches "
        "the port can place calls",
        as.host);
  }
}

}  // namespace hotline::server
