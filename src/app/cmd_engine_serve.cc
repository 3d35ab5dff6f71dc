// `hotline engine serve -m MODEL.gguf [--host H] [--port P] [--threads T] [--config FILE]
//                      [--set key=value ...]`
// Serves the embedded engine over the OpenAI-compatible API (/v1/chat/completions,
// /v1/completions, /v1/models) plus /healthz, /readyz and /metrics, until SIGINT or SIGTERM.
// Settings come from the `server` and `llm.engine` sections of the configuration; the flags
// override them.
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "app/cli.h"
#include "app/hotline_config.h"
#include "common/log.h"
#include "llm/llm_config.h"
#include "server/http_server.h"
#include "server/openai_api.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline engine serve -m MODEL.gguf [--host H] [--port P] [--threads T]\n"
    "                            [--config FILE] [--set key=value ...]\n"
    "  Serves the model over the OpenAI-compatible API until SIGINT/SIGTERM:\n"
    "  POST /v1/chat/completions and /v1/completions (stream true|false), GET /v1/models,\n"
    "  /healthz, /readyz, /metrics. Over llm.engine.max_seq_len the oldest turns are dropped\n"
    "  whole; a prompt that still does not fit is a 400 context_length_exceeded.\n"
    "  -m, --model FILE   GGUF model (llama or qwen2 family; default llm.engine.model_path, the\n"
    "                     demo model when that is empty)\n"
    "  --host H           listen address (default server.host, 127.0.0.1)\n"
    "  --port P           listen port, 0 = any free port (default server.port, 8080)\n"
    "  --threads T        engine compute threads (default llm.engine.threads)\n"
    "  --config FILE      configuration file (server.*, llm.engine.*)\n"
    "  --set key=value    override one configuration key (repeatable)\n"
    "  The listening URL is printed on stderr once the model is loaded.\n";

int RunEngineServe(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"-m", "--model", "--host", "--port", "--threads", "--config",
                                 "--set"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  std::optional<std::string> model = args->Get("-m");
  if (!model) model = args->Get("--model");
  std::optional<std::string> host = args->Get("--host");
  auto port = args->GetInt("--port", -1, 0, 65535);
  auto threads = args->GetInt("--threads", 0, 1, 256);
  const std::string config_path = args->GetOr("--config", "");
  const std::vector<std::string> overrides = args->GetAll("--set");
  for (const Status& s : {port.status(), threads.status(), args->Finish()}) {
    if (!s.ok()) return UsageError(s.message(), kUsage);
  }
  if (!args->positional().empty()) return UsageError("unexpected argument", kUsage);

  auto loaded = LoadHotlineConfig(config_path, overrides);
  if (!loaded.ok()) return Fail(loaded.status());
  HotlineConfig cfg = std::move(loaded).value();
  if (model) cfg.llm.engine.engine.model_path = *model;
  if (cfg.llm.engine.engine.model_path.empty()) return UsageError("missing -m MODEL.gguf", kUsage);
  if (host) cfg.server.host = *host;
  if (*port >= 0) cfg.server.port = static_cast<int>(*port);
  if (*threads > 0) cfg.llm.engine.engine.threads = static_cast<int>(*threads);
  cfg.llm.backend = "engine";
  // Each streaming request blocks a worker in Generate; fewer workers than batch slots would cap
  // how many requests the batching scheduler ever sees at once.
  cfg.server.worker_threads =
      std::max(cfg.server.worker_threads, cfg.llm.engine.engine.max_batch_size + 4);
  if (cfg.server.openai.model_id.empty()) {  // clients name models by id, not by local path
    cfg.server.openai.model_id = std::filesystem::path(cfg.llm.engine.engine.model_path).stem();
  }
  if (Status s = ValidateConfig(cfg); !s.ok()) return Fail(s);
  InitLogging(cfg.log_level);

  // Every thread started from here on inherits the blocked signals; this thread takes them with
  // sigwait, so no handler runs on an engine or I/O thread.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto lm = llm::CreateLanguageModel(cfg.llm);
  if (!lm.ok()) return Fail(lm.status());
  std::shared_ptr<llm::LanguageModel> language_model = std::move(lm).value();

  auto server = server::HttpServer::Create(cfg.server);
  if (!server.ok()) return Fail(server.status());
  if (Status s = server::InstallOpenAiApi(**server, language_model, cfg.server.openai); !s.ok()) {
    return Fail(s);
  }
  if (Status s = (*server)->Start(); !s.ok()) return Fail(s);
  std::cerr << "hotline: serving " << language_model->name() << " at " << (*server)->Url()
            << " (OpenAI API: " << (*server)->Url("/v1/chat/completions") << ")" << std::endl;

  int sig = 0;
  sigwait(&signals, &sig);
  std::cerr << "hotline: " << (sig == SIGINT ? "SIGINT" : "SIGTERM") << ", stopping" << std::endl;
  (*server)->Stop();
  return 0;
}

const CommandRegistrar kEngineServe({"engine serve",
                                     "serve a model over the OpenAI-compatible HTTP API",
                                     kUsage, RunEngineServe});

}  // namespace
}  // namespace hotline::cli
