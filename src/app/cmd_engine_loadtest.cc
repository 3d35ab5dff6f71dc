// `hotline engine loadtest --url http://H:P --clients N [--requests R] [--max-tokens M]
//  [--model ID] [--system-tokens-words W] [--json]`
// N concurrent streaming clients of an OpenAI-compatible server (`hotline engine serve`, or any
// other), each sending R chat completions one after another. Reports time to first content
// delta and the time between content deltas (P50/P90/P99 over every request), aggregate deltas/s
// and errors. All clients share a system prompt (the prefix cache's case) and differ in the user
// turn.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "app/cli.h"
#include "net/http_client.h"
#include "net/sse_parser.h"

namespace hotline::cli {
namespace {

constexpr char kUsage[] =
    "usage: hotline engine loadtest --url http://HOST:PORT --clients N [--requests R]\n"
    "         [--max-tokens M] [--model ID] [--system-words W] [--json]\n"
    "  N clients (default 16) each stream R chat completions (default 2) of up to M tokens\n"
    "  (default 32, temperature 0) from URL/v1/chat/completions. The system prompt is W words\n"
    "  (default 200) shared by every client; the user turn names the client and request.\n"
    "  first_token_ms: request sent -> first content delta; inter_token_ms: between deltas.\n";

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

// One streamed chat completion: time to its first content delta, the gaps between deltas.
struct StreamTiming {
  Status status;
  double first_ms = -1;  // < 0: no content streamed
  std::vector<double> inter_ms;
  long deltas = 0;
};

StreamTiming StreamOne(const net::HttpClient& client, const std::string& endpoint,
                       const nlohmann::json& body) {
  StreamTiming t;
  const auto sent = std::chrono::steady_clock::now();
  auto last = sent;
  int status = 0;
  std::string error_body;
  net::SseParser parser([&](const net::SseEvent& ev) -> Status {
    if (ev.data == "[DONE]") return Status::Ok();
    auto j = nlohmann::json::parse(ev.data, nullptr, false);
    if (j.is_discarded()) return DataLossError("bad JSON in an SSE event");
    if (j.contains("error")) return UnavailableError("server error: " + ev.data);
    if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) {
      return Status::Ok();  // usage chunk
    }
    const auto& delta = j["choices"][0]["delta"];
    if (!delta.is_object() || !delta.contains("content") || !delta["content"].is_string() ||
        delta["content"].get<std::string>().empty()) {
      return Status::Ok();
    }
    const auto now = std::chrono::steady_clock::now();
    if (t.first_ms < 0) {
      t.first_ms = std::chrono::duration<double, std::milli>(now - sent).count();
    } else {
      t.inter_ms.push_back(std::chrono::duration<double, std::milli>(now - last).count());
    }
    last = now;
    ++t.deltas;
    return Status::Ok();
  });
  net::HttpStreamCallbacks cb;
  cb.on_head = [&](const net::HttpResponseHead& h) {
    status = h.status;
    return Status::Ok();
  };
  cb.on_body = [&](std::string_view bytes) -> Status {
    if (status != 200) {
      if (error_body.size() < 2000) error_body.append(bytes);
      return Status::Ok();
    }
    return parser.Feed(bytes);
  };
  Status s = client.Stream(net::HttpRequest::Post(endpoint, body.dump(), "application/json"), cb);
  if (s.ok() && status == 200) s = parser.Finish();
  if (s.ok() && status != 200) {
    s = UnavailableError("HTTP " + std::to_string(status) + ": " + error_body);
  }
  t.status = std::move(s);
  return t;
}

// What every client's requests added up to.
struct LoadTotals {
  std::vector<double> first_ms, inter_ms;
  long deltas = 0, errors = 0, ok = 0;
  std::string first_error;
  double wall_s = 0;
};

void PrintLoadtest(const LoadTotals& t, const std::string& url, const std::string& endpoint,
                   long long clients, long long requests, long long max_tokens, bool json) {
  const double dps = static_cast<double>(t.deltas) / t.wall_s;
  if (json) {
    nlohmann::json out = {
        {"url", url},
        {"clients", clients},
        {"requests_per_client", requests},
        {"max_tokens", max_tokens},
        {"ok", t.ok},
        {"errors", t.errors},
        {"wall_s", t.wall_s},
        {"deltas_per_s", dps},
        {"first_token_ms",
         {{"p50", Percentile(t.first_ms, 0.5)},
          {"p90", Percentile(t.first_ms, 0.9)},
          {"p99", Percentile(t.first_ms, 0.99)}}},
        {"inter_token_ms",
         {{"p50", Percentile(t.inter_ms, 0.5)},
          {"p90", Percentile(t.inter_ms, 0.9)},
          {"p99", Percentile(t.inter_ms, 0.99)}}},
    };
    if (!t.first_error.empty()) out["first_error"] = t.first_error;
    std::printf("%s\n", out.dump().c_str());
    return;
  }
  std::printf("%lld clients x %lld requests against %s: %ld ok, %ld errors, %.1f s\n", clients,
              requests, endpoint.c_str(), t.ok, t.errors, t.wall_s);
  std::printf("first token ms   p50 %.1f  p90 %.1f  p99 %.1f\n", Percentile(t.first_ms, 0.5),
              Percentile(t.first_ms, 0.9), Percentile(t.first_ms, 0.99));
  std::printf("inter-token ms   p50 %.1f  p90 %.1f  p99 %.1f\n", Percentile(t.inter_ms, 0.5),
              Percentile(t.inter_ms, 0.9), Percentile(t.inter_ms, 0.99));
  std::printf("aggregate %.1f deltas/s\n", dps);
  if (!t.first_error.empty()) std::printf("first error: %s\n", t.first_error.c_str());
}

int RunLoadtest(std::span<const std::string> argv) {
  auto args = Args::Parse(
      argv, {"--url", "--clients", "--requests", "--max-tokens", "--model", "--system-words"});
  if (!args.ok()) return UsageError(args.status().message(), kUsage);
  if (args->Has("--help") || args->Has("-h")) {
    std::cout << kUsage;
    return 0;
  }
  std::string url = args->GetOr("--url", "");
  auto clients = args->GetInt("--clients", 16, 1, 1024);
  auto requests = args->GetInt("--requests", 2, 1, 100000);
  auto max_tokens = args->GetInt("--max-tokens", 32, 1, 8192);
  auto system_words = args->GetInt("--system-words", 200, 0, 100000);
  const std::string model = args->GetOr("--model", "default");
  const bool json = args->Has("--json");
  if (Status s = args->Finish(); !s.ok()) return UsageError(s.message(), kUsage);
  for (const auto* r : {&clients, &requests, &max_tokens, &system_words}) {
    if (!r->ok()) return UsageError(r->status().message(), kUsage);
  }
  if (url.empty()) return UsageError("missing --url http://HOST:PORT", kUsage);
  if (!args->positional().empty()) return UsageError("unexpected argument", kUsage);
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.size() >= 3 && url.compare(url.size() - 3, 3, "/v1") == 0) url.resize(url.size() - 3);
  const std::string endpoint = url + "/v1/chat/completions";

  std::string system = "You are the voice agent of a call centre. Answer briefly.";
  static const char* kWords[] = {"account",  "balance", "order",   "delivery", "refund",
                                 "password", "address", "invoice", "support",  "schedule"};
  for (long long i = 0; i < *system_words; ++i) {
    system += ' ';
    system += kWords[i % 10];
  }

  net::HttpClientConfig hc;
  hc.idle_timeout_ms = 120000;
  hc.total_timeout_ms = 600000;
  const net::HttpClient client(hc);
  std::mutex mu;
  LoadTotals totals;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (long long c = 0; c < *clients; ++c) {
    threads.emplace_back([&, c] {
      for (long long k = 0; k < *requests; ++k) {
        nlohmann::json body = {{"model", model},
                               {"stream", true},
                               {"max_tokens", *max_tokens},
                               {"temperature", 0},
                               {"messages",
                                {{{"role", "system"}, {"content", system}},
                                 {{"role", "user"},
                                  {"content", "Caller " + std::to_string(c) + ", question " +
                                                  std::to_string(k) + ": where is my order?"}}}}};
        StreamTiming t = StreamOne(client, endpoint, body);
        std::lock_guard<std::mutex> lock(mu);
        totals.deltas += t.deltas;
        if (!t.status.ok() || t.first_ms < 0) {
          ++totals.errors;
          if (totals.first_error.empty()) {
            totals.first_error = t.status.ok() ? "no content streamed" : t.status.ToString();
          }
          continue;
        }
        ++totals.ok;
        totals.first_ms.push_back(t.first_ms);
        totals.inter_ms.insert(totals.inter_ms.end(), t.inter_ms.begin(), t.inter_ms.end());
      }
    });
  }
  for (auto& t : threads) t.join();
  totals.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  PrintLoadtest(totals, url, endpoint, *clients, *requests, *max_tokens, json);
  return totals.errors == 0 ? 0 : 1;
}

const CommandRegistrar kLoadtest({"engine loadtest",
                                  "stream chat completions from N concurrent clients, report "
                                  "P50/P99 first-token and inter-token latency",
                                  kUsage, RunLoadtest});

}  // namespace
}  // namespace hotline::cli
