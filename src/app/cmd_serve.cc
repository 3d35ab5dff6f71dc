// `hotline serve [--config FILE] [--host H] [--port P] [--kb FILE.csv] [--set key=value ...]`
// Hotline's server: Twilio Media Streams calls at ws://H:P/twilio, each a CallSession over the
// shared call stack (recognizer, synthesizer, knowledge base, answer caches), plus /healthz,
// /readyz and /metrics, until SIGINT or SIGTERM.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "app/call_runner.h"
#include "app/cli.h"
#include "app/hotline_config.h"
#include "common/log.h"
#include "pipeline/call_stack.h"
#include "server/calls/twilio_endpoint.h"
#include "server/http_server.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline serve [--config FILE] [--host H] [--port P] [--kb FILE.csv]\n"
    "                     [--set key=value ...]\n"
    "  Answers phone calls until SIGINT/SIGTERM: Twilio Media Streams at ws://H:P/twilio\n"
    "  (TwiML <Connect><Stream url=\"wss://.../twilio\"> with <Parameter name=\"caller\"\n"
    "  value=\"{{From}}\"/>), and /healthz, /readyz, /metrics.\n"
    "  --host H           listen address (default server.host, 127.0.0.1)\n"
    "  --port P           listen port, 0 = any free port (default server.port, 8080)\n"
    "  --kb FILE.csv      knowledge base to serve (default: the demo knowledge base)\n"
    "  --config FILE      configuration file\n"
    "  --set key=value    override one configuration key (repeatable)\n"
    "  The listening URL is printed on stderr once the call stack is ready.\n";

int RunServe(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"--host", "--port", "--config", "--set", "--kb"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  std::optional<std::string> host = args->Get("--host");
  auto port = args->GetInt("--port", -1, 0, 65535);
  const std::string config_path = args->GetOr("--config", "");
  const std::vector<std::string> overrides = args->GetAll("--set");
  const std::string kb_csv =
      args->GetOr("--kb", std::string(HOTLINE_ASSETS_DIR) + "/kb/bitext_kb.csv");
  for (const Status& s : {port.status(), args->Finish()}) {
    if (!s.ok()) return UsageError(s.message(), kUsage);
  }
  if (!args->positional().empty()) return UsageError("unexpected argument", kUsage);

  auto loaded = LoadHotlineConfig(config_path, overrides);
  if (!loaded.ok()) return Fail(loaded.status());
  HotlineConfig cfg = std::move(loaded).value();
  if (host) cfg.server.host = *host;
  if (*port >= 0) cfg.server.port = static_cast<int>(*port);
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
    auto twilio = server::TwilioEndpoint::Create((*stack)->resources(), cfg.twilio);
    if (!twilio.ok()) return Fail(twilio.status().WithContext("twilio endpoint"));
    auto server = server::HttpServer::Create(cfg.server);
    if (!server.ok()) return Fail(server.status());
    if (Status s = (*server)->HandleWebSocket("/twilio", (*twilio)->Factory()); !s.ok()) {
      return Fail(s);
    }
    server::TwilioEndpoint* endpoint = twilio->get();
    const int max_calls = cfg.twilio.max_calls;
    (*server)->SetReadinessCheck([endpoint, max_calls]() -> Status {
      if (endpoint->active_calls() >= max_calls) {
        return ResourceExhaustedError("at twilio.max_calls (" + std::to_string(max_calls) + ")");
      }
      return Status::Ok();
    });
    if (Status s = (*server)->Start(); !s.ok()) return Fail(s);
    std::cerr << "hotline: answering calls at " << (*server)->Url("/twilio", "ws")
              << " (metrics at " << (*server)->Url("/metrics") << ")" << std::endl;

    int sig = 0;
    sigwait(&signals, &sig);
    std::cerr << "hotline: " << (sig == SIGINT ? "SIGINT" : "SIGTERM") << ", stopping" << std::endl;
    (*server)->Stop();
  }
  std::error_code ec;
  std::filesystem::remove(kb_db, ec);
  return rc;
}

const CommandRegistrar kServe({"serve", "answer phone calls (Twilio Media Streams at /twilio)",
                               kUsage, RunServe});

}  // namespace
}  // namespace hotline::cli
