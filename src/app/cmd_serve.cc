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

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "app/call_runner.h"
#include "app/cli.h"
#include "app/domain.h"
#include "app/hotline_config.h"
#include "common/build_paths.h"
#include "common/log.h"
#include "pipeline/call_stack.h"
#include "server/node/call_server.h"

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

constexpr char kScratchPrefix[] = "hotline-serve-";

// Removes the scratch files (the knowledge base's SQLite copy and the recognizer model built
// from it) of `hotline serve` processes that no longer run: one killed with SIGKILL, or one that
// crashed, cannot remove its own. A process id that runs again (reused) keeps its files.
void RemoveScratchOfGoneServers(const std::filesystem::path& dir) {
  const std::string_view prefix = kScratchPrefix;
  std::error_code ec;
  std::vector<std::filesystem::path> gone;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!std::string_view(name).starts_with(prefix)) continue;
    const std::string_view rest = std::string_view(name).substr(prefix.size());
    const size_t n = rest.find_first_not_of("0123456789");
    if (n == 0 || n > 9 || n == std::string_view::npos ||
        !rest.substr(n).starts_with(".kb.sqlite")) {
      continue;
    }
    const auto pid = static_cast<pid_t>(std::stol(std::string(rest.substr(0, n))));
    if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) gone.push_back(it->path());
  }
  for (const auto& path : gone) {
    if (std::filesystem::remove(path, ec)) {
      HLOG_INFO("removed {}, left by a hotline serve that no longer runs", path.string());
    } else if (ec) {
      HLOG_WARN("cannot remove {}, left by a hotline serve that no longer runs: {}", path.string(),
                ec.message());
    }
  }
}

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
  // The knowledge base's SQLite copy is this process's scratch file: removed on every way out
  // (the recognizer's model built from it, by the call stack).
  const std::filesystem::path scratch_dir = std::filesystem::temp_directory_path();
  RemoveScratchOfGoneServers(scratch_dir);
  const std::filesystem::path kb_db =
      scratch_dir / (kScratchPrefix + std::to_string(getpid()) + ".kb.sqlite");
  struct RemoveOnExit {
    std::filesystem::path path;
    ~RemoveOnExit() {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  } remove_kb{kb_db};
  options.kb_db = kb_db.string();
  options.kb_csv = kb_csv;
  auto stack = pipeline::CallStack::Build(options);
  if (!stack.ok()) return Fail(stack.status().WithContext("call stack"));

  server::CallServerOptions node_options;
  node_options.server = cfg.server;
  node_options.calls = cfg.calls;
  node_options.twilio = cfg.twilio;
  node_options.audiosocket = cfg.audiosocket;
  node_options.admin = cfg.admin;
  node_options.effective_config_yaml = RedactedConfigYaml(cfg);
  auto node = server::CallServer::Create(**stack, node_options);
  if (!node.ok()) return Fail(node.status());
  if (Status s = (*node)->Start(); !s.ok()) return Fail(s);
  for (const std::string& line : (*node)->Describe()) std::cerr << "hotline: " << line << std::endl;

  int sig = 0;
  sigwait(&signals, &sig);
  if (sig == SIGTERM && cfg.calls.drain_timeout_ms > 0) {
    // Graceful drain: not ready (the balancer sends new calls elsewhere) while the calls in
    // progress end by themselves; a second SIGTERM or a SIGINT cuts it short.
    (*node)->BeginDrain();
    std::cerr << "hotline: SIGTERM, draining " << (*node)->active_calls() << " calls (up to "
              << cfg.calls.drain_timeout_ms << " ms)" << std::endl;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(cfg.calls.drain_timeout_ms);
    const timespec tick{0, 50 * 1000 * 1000};
    while ((*node)->active_calls() > 0 && std::chrono::steady_clock::now() < deadline) {
      if (sigtimedwait(&signals, nullptr, &tick) > 0) break;
    }
    std::cerr << "hotline: drained, " << (*node)->active_calls() << " calls left" << std::endl;
  }
  std::cerr << "hotline: " << (sig == SIGINT ? "SIGINT" : "SIGTERM") << ", stopping" << std::endl;
  (*node)->Stop();
  return 0;
}

const CommandRegistrar kServe({"serve",
                               "answer phone calls (Twilio Media Streams, Asterisk AudioSocket)",
                               kUsage, RunServe});

}  // namespace
}  // namespace hotline::cli
