// `hotline doctor --url http://HOST:PORT [--json] [--min-turns N] [--min-answers N]`
// Reads a running server's /metrics and reports the usual troubles (long-tail latency, engine
// queueing, low cache hit rate, dropped audio, the call cap) with the figures behind them and the
// setting to change. Exit status 0 when nothing was found, 3 when something was, 1 on errors.
#include <iostream>

#include "app/cli.h"
#include "app/doctor.h"
#include "net/http_client.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline doctor --url http://HOST:PORT [--json] [--min-turns N] [--min-answers N]\n"
    "  Reads the server's /metrics and names what is wrong, with figures and the setting to\n"
    "  change: long-tail voice-to-voice latency (and the stage behind it), LLM requests queueing\n"
    "  for the engine, a low share of answers from the cache tiers, dropped inbound audio,\n"
    "  pacer stalls, calls turned away at the cap.\n"
    "  --url URL          the server (hotline serve or hotline engine serve)\n"
    "  --json             the report as JSON\n"
    "  --min-turns N      turns before latency is judged (default 20)\n"
    "  --min-answers N    answers before the cache hit rate is judged (default 20)\n"
    "  Exit status: 0 no trouble, 3 trouble found, 1 error.\n";

int RunDoctor(std::span<const std::string> argv) {
  auto args = Args::Parse(argv, {"--url", "--min-turns", "--min-answers"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  const std::string url = args->GetOr("--url", "");
  const bool json = args->Has("--json");
  auto min_turns = args->GetInt("--min-turns", 20, 1, 1000000);
  auto min_answers = args->GetInt("--min-answers", 20, 1, 1000000);
  for (const Status& s : {min_turns.status(), min_answers.status(), args->Finish()}) {
    if (!s.ok()) return UsageError(s.message(), kUsage);
  }
  if (!args->positional().empty()) return UsageError("unexpected argument", kUsage);
  if (url.rfind("http://", 0) != 0) return UsageError("--url must be http://HOST:PORT", kUsage);
  std::string base = url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.size() > 8 && base.compare(base.size() - 8, 8, "/metrics") == 0) {
    base.resize(base.size() - 8);
  }

  net::HttpClient http;
  auto response = http.Send(net::HttpRequest::Get(base + "/metrics"));
  if (!response.ok()) return Fail(response.status());
  if (response->status != 200) {
    return Fail("GET " + base + "/metrics answered " + std::to_string(response->status));
  }
  auto samples = ParsePrometheusText(response->body);
  if (!samples.ok()) return Fail(samples.status().WithContext(base + "/metrics"));

  DoctorOptions options;
  options.min_turns = static_cast<int>(*min_turns);
  options.min_answers = static_cast<int>(*min_answers);
  DoctorReport report = Diagnose(*samples, options);
  if (json) {
    std::cout << DoctorReportJson(report) << "\n";
  } else {
    std::cout << "hotline doctor: " << base << "\n" << FormatDoctorReport(report);
  }
  return report.findings.empty() ? 0 : 3;
}

const CommandRegistrar kDoctor({"doctor", "diagnose a running server from its /metrics", kUsage,
                                RunDoctor});

}  // namespace
}  // namespace hotline::cli
