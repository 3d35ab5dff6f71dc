// `hotline serve [--config FILE] [--host H] [--port P] [--audiosocket-port Q] [--kb FILE.csv]
//                [--set key=value ...]`
// Hotline's server: Twilio Media Streams calls at ws://H:P/twilio and Asterisk AudioSocket calls
// on TCP port Q, each a CallSession over the shared call stack (recognizer, synthesizer,
// knowledge base, answer caches), browser calls from the /softphone page (ws://H:P/softphone/ws),
// the live /dashboard (/api/dashboard), plus /healthz, /readyz, /metrics and the token-protected
// admin API (/admin/*), until SIGINT or SIGTERM (SIGTERM first drains the calls in progress for
// up to calls.drain_timeout_ms, not ready meanwhile).
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/call_runner.h"
#include "app/cli.h"
#include "app/domain.h"
#include "app/hotline_config.h"
#include "common/log.h"
#include "pipeline/call_stack.h"
#include "server/admin/admin_api.h"
#include "server/calls/audiosocket_server.h"
#include "server/calls/call_registry.h"
#include "server/calls/softphone_endpoint.h"
#include "server/calls/twilio_endpoint.h"
#include "server/http_server.h"
#include "server/web/dashboard.h"
#include "server/web/web_assets.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline serve [--config FILE] [--host H] [--port P] [--audiosocket-port Q]\n"
    "                     [--kb FILE.csv] [--set key=value ...]\n"
    "  Answers phone calls until SIGINT/SIGTERM: Twilio Media Streams at ws://H:P/twilio\n"
    "  (TwiML <Connect><Stream url=\"wss://.../twilio\"> with <Parameter name=\"caller\"\n"
    "  value=\"{{From}}\"/>), Asterisk AudioSocket on TCP port Q (dialplan: Answer() then\n"
    "  AudioSocket(<uuid>,H:Q)), /healthz, /readyz, /metrics, and the admin API at /admin/*\n"
    "  (Authorization: Bearer <admin.token or $HOTLINE_ADMIN_TOKEN>; off without a token).\n"
    "  Browser pages: http://H:P/softphone (microphone calls; browsers allow the microphone on\n"
    "  localhost or over HTTPS) and http://H:P/dashboard (live figures).\n"
    "  --host H           listen address (default server.host, 127.0.0.1)\n"
    "  --port P           listen port, 0 = any free port (default server.port, 8080)\n"
    "  --audiosocket-port Q  AudioSocket TCP port, 0 = any free port, -1 = off\n"
    "                     (default audiosocket.port, -1); it listens on audiosocket.host\n"
    "  --kb FILE.csv      knowledge base to serve (default: the demo knowledge base)\n"
    "  --domain NAME      a shipped line: retail (the default) or banking (assets/kb/banking/kb.csv\n"
    "                     with config/banking.yaml); --kb and --config still override\n"
    "  --config FILE      configuration file\n"
    "  --set key=value    override one configuration key (repeatable)\n"
    "  The listening URL is printed on stderr once the call stack is ready. On SIGTERM it\n"
    "  drains first when calls.drain_timeout_ms > 0: /readyz answers 503 while the calls in\n"
    "  progress end (at most that long); SIGINT stops at once.\n";

int RunServe(std::span<const std::string> argv) {
  auto args =
      Args::Parse(argv, {"--host", "--port", "--config", "--set", "--kb", "--audiosocket-port",
                         "--domain"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  std::optional<std::string> host = args->Get("--host");
  auto port = args->GetInt("--port", -1, 0, 65535);
  auto as_port = args->GetInt("--audiosocket-port", -2, -1, 65535);
  // A shipped line of business: its knowledge base and preset (app/domain.h).
  DomainFiles domain{std::string(HOTLINE_ASSETS_DIR) + "/kb/bitext_kb.csv", ""};
  if (auto name = args->Get("--domain")) {
    auto resolved = ResolveDomain(*name);
    if (!resolved.ok()) return UsageError(resolved.status().message(), kUsage);
    domain = *resolved;
  }
  const std::string config_path = args->GetOr("--config", domain.config);
  const std::vector<std::string> overrides = args->GetAll("--set");
  const std::string kb_csv = args->GetOr("--kb", domain.kb_csv);
  for (const Status& s : {port.status(), as_port.status(), args->Finish()}) {
    if (!s.ok()) return UsageError(s.message(), kUsage);
  }
  if (!args->positional().empty()) return UsageError("unexpected argument", kUsage);

  auto loaded = LoadHotlineConfig(config_path, overrides);
  if (!loaded.ok()) return Fail(loaded.status());
  HotlineConfig cfg = std::move(loaded).value();
  if (host) cfg.server.host = *host;
  if (*port >= 0) cfg.server.port = static_cast<int>(*port);
  if (*as_port >= -1) cfg.audiosocket.port = static_cast<int>(*as_port);
  if (!cfg.admin.token_env.empty()) {
    if (const char* env = std::getenv(cfg.admin.token_env.c_str()); env != nullptr && *env != 0) {
      cfg.admin.token = env;
    }
  }
  if (Status s = ValidateConfig(cfg); !s.ok()) return Fail(s);
  InitLogging(cfg.log_level);

  // Every thread started from here on inherits the blocked signals; this thread takes them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  pipeline::CallStackOptions options = CallStackOptionsFrom(cfg);
  const std::filesystem::path kb_db = std::filesystem::temp_directory_path() /
                                      ("hotline-serve-" + std::to_string(getpid()) + ".kb.sqlite");
  options.kb_db = kb_db.string();
  options.kb_csv = kb_csv;
  auto stack = pipeline::CallStack::Build(options);
  if (!stack.ok()) return Fail(stack.status().WithContext("call stack"));

  int rc = 0;
  {
    // One cap for the calls on every transport.
    auto registry = std::make_shared<server::CallRegistry>(cfg.calls);
    // Declared before the server: its handler must outlive the server on every return path.
    server::Dashboard dashboard(MetricsRegistry::Global(), {},
                                [registry] { return registry->active(); });
    auto twilio =
        server::TwilioEndpoint::Create((*stack)->resources(), cfg.twilio, nullptr, registry);
    if (!twilio.ok()) return Fail(twilio.status().WithContext("twilio endpoint"));
    auto server = server::HttpServer::Create(cfg.server);
    if (!server.ok()) return Fail(server.status());
    if (Status s = (*server)->HandleWebSocket("/twilio", (*twilio)->Factory()); !s.ok()) {
      return Fail(s);
    }
    // The shared registry carries calls.max_calls and calls.over_capacity_text.
    auto softphone =
        server::SoftphoneEndpoint::Create((*stack)->resources(), {}, nullptr, registry);
    if (!softphone.ok()) return Fail(softphone.status().WithContext("softphone endpoint"));
    if (Status s = (*server)->HandleWebSocket("/softphone/ws", (*softphone)->Factory()); !s.ok()) {
      return Fail(s);
    }
    if (Status s = server::RegisterWebPages(**server); !s.ok()) return Fail(s);
    if (Status s = dashboard.Register(**server); !s.ok()) return Fail(s);

    std::unique_ptr<server::AudioSocketServer> audiosocket;
    if (cfg.audiosocket.port >= 0) {
      auto as = server::AudioSocketServer::Create((*stack)->resources(), cfg.audiosocket, nullptr,
                                                  registry);
      if (!as.ok()) return Fail(as.status().WithContext("audiosocket"));
      audiosocket = std::move(*as);
    }

    pipeline::CallStack* call_stack = stack->get();
    server::AdminActions admin;
    admin.calls = registry;
    admin.reload_kb = [call_stack]() -> Result<std::string> {
      ASSIGN_OR_RETURN(pipeline::KbReloadReport r, call_stack->ReloadKnowledgeBase());
      return nlohmann::json{{"source", r.source},        {"records", r.records},
                            {"added", r.added},          {"updated", r.updated},
                            {"unchanged", r.unchanged},  {"changed", r.changed},
                            {"generation", r.generation}}
          .dump();
    };
    admin.flush_caches = [call_stack]() -> Result<std::string> {
      ASSIGN_OR_RETURN(pipeline::CacheFlushReport r, call_stack->FlushAnswerCaches());
      return nlohmann::json{{"stamps_bumped", r.stamps_bumped},
                            {"l2_dropped", r.l2_dropped},
                            {"audio_entries", r.audio_entries}}
          .dump();
    };
    const std::string effective = RedactedConfigYaml(cfg);
    admin.effective_config = [effective] { return effective; };
    if (Status s = server::RegisterAdminApi(**server, cfg.admin.token, admin); !s.ok()) {
      return Fail(s.WithContext("admin"));
    }

    const int max_calls = cfg.calls.max_calls;
    auto draining = std::make_shared<std::atomic<bool>>(false);
    (*server)->SetReadinessCheck([registry, max_calls, draining]() -> Status {
      if (draining->load()) {
        return UnavailableError("draining: stopping once the calls in progress end");
      }
      if (registry->active() >= max_calls) {
        return ResourceExhaustedError("at calls.max_calls (" + std::to_string(max_calls) +
                                      " calls on all transports)");
      }
      return Status::Ok();
    });
    if (Status s = (*server)->Start(); !s.ok()) return Fail(s);
    if (audiosocket != nullptr) {
      if (Status s = audiosocket->Start(); !s.ok()) return Fail(s);
    }
    dashboard.Start();
    // Trust of the call edge: say plainly what is not checked.
    if (cfg.twilio.EffectiveAuthToken().empty()) {
      HLOG_WARN(
          "twilio: no auth token (twilio.auth_token, HOTLINE_TWILIO_AUTH_TOKEN or "
          "TWILIO_AUTH_TOKEN): X-Twilio-Signature is NOT checked, anyone can open /twilio; "
          "{}",
          cfg.twilio.trust_unsigned_caller_id
              ? "caller numbers are believed anyway (twilio.trust_unsigned_caller_id)"
              : "its callers are treated as anonymous");
    } else if (!cfg.twilio.validate_signature) {
      HLOG_WARN("twilio: twilio.validate_signature is off: X-Twilio-Signature is NOT checked");
    }
    if (audiosocket != nullptr && cfg.audiosocket.allowed_peers.empty() &&
        cfg.audiosocket.host != "127.0.0.1" && cfg.audiosocket.host != "::1" &&
        cfg.audiosocket.host != "localhost") {
      HLOG_WARN(
          "audiosocket: listening on {} with no audiosocket.allowed_peers: any host that "
          "reaches the port can place calls",
          cfg.audiosocket.host);
    }
    std::cerr << "hotline: answering calls at " << (*server)->Url("/twilio", "ws");
    if (audiosocket != nullptr) {
      std::cerr << " and AudioSocket tcp://" << cfg.audiosocket.host << ":" << audiosocket->port();
    }
    std::cerr << " (metrics at " << (*server)->Url("/metrics") << "; admin API "
              << (cfg.admin.token.empty() ? "off" : "on") << ")" << std::endl;
    std::cerr << "hotline: softphone at " << (*server)->Url("/softphone") << ", dashboard at "
              << (*server)->Url("/dashboard") << std::endl;

    int sig = 0;
    sigwait(&signals, &sig);
    if (sig == SIGTERM && cfg.calls.drain_timeout_ms > 0) {
      // Graceful drain: not ready (the balancer sends new calls elsewhere) while the calls in
      // progress end by themselves; a second SIGTERM or a SIGINT cuts it short.
      draining->store(true);
      std::cerr << "hotline: SIGTERM, draining " << registry->active() << " calls (up to "
                << cfg.calls.drain_timeout_ms << " ms)" << std::endl;
      const auto deadline =
          std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg.calls.drain_timeout_ms);
      const timespec tick{0, 50 * 1000 * 1000};
      while (registry->active() > 0 && std::chrono::steady_clock::now() < deadline) {
        if (sigtimedwait(&signals, nullptr, &tick) > 0) break;
      }
      std::cerr << "hotline: drained, " << registry->active() << " calls left" << std::endl;
    }
    std::cerr << "hotline: " << (sig == SIGINT ? "SIGINT" : "SIGTERM") << ", stopping" << std::endl;
    if (audiosocket != nullptr) audiosocket->Stop();
    (*server)->Stop();
    dashboard.Stop();
  }
  std::error_code ec;
  std::filesystem::remove(kb_db, ec);
  return rc;
}

const CommandRegistrar kServe({"serve",
                               "answer phone calls (Twilio Media Streams, Asterisk AudioSocket)",
                               kUsage, RunServe});

}  // namespace
}  // namespace hotline::cli
