#include "server/openai_api.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <random>

#include "common/log.h"
#include "common/metrics.h"
#include "engine/context_fit.h"

namespace hotline::server {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxStops = 4;
constexpr size_t kMaxStopBytes = 256;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string ErrorBody(std::string_view message, std::string_view type, std::string_view param,
                      std::string_view code = "") {
  json e = {{"message", std::string(message)}, {"type", std::string(type)}};
  e["param"] = param.empty() ? json(nullptr) : json(std::string(param));
  e["code"] = code.empty() ? json(nullptr) : json(std::string(code));
  return Dump(json{{"error", e}});
}

Response ErrorResponse(int status, std::string_view message, std::string_view type,
                       std::string_view param = "", std::string_view code = "") {
  return Response::Json(status, ErrorBody(message, type, param, code));
}

constexpr std::string_view kContextCode = "context_length_exceeded";

// HTTP status and OpenAI error type for a backend failure.
std::pair<int, const char*> StatusFor(const Status& s) {
  if (engine::IsContextLengthExceeded(s)) return {400, "invalid_request_error"};
  switch (s.code()) {
    case StatusCode::kInvalidArgument: return {400, "invalid_request_error"};
    case StatusCode::kResourceExhausted: return {503, "server_overloaded"};
    case StatusCode::kUnavailable: return {503, "server_error"};
    case StatusCode::kDeadlineExceeded: return {504, "timeout"};
    default: return {500, "server_error"};
  }
}

const char* FinishName(llm::FinishReason r) {
  switch (r) {
    case llm::FinishReason::kLength:
    case llm::FinishReason::kContextFull: return "length";
    default: return "stop";
  }
}

std::string NewCompletionId(bool chat) {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[40];
  snprintf(buf, sizeof(buf), "%s-%016llx%04llx", chat ? "chatcmpl" : "cmpl",
           static_cast<unsigned long long>(rng()),
           static_cast<unsigned long long>(counter.fetch_add(1) & 0xffff));
  return buf;
}

int64_t UnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct ApiMetrics {
  Counter& requests;
  Counter& bad_requests;
  Counter& cancelled;
  Counter& failed;
  Counter& tokens_generated;
  Histogram& first_token_seconds;
  explicit ApiMetrics(MetricsRegistry& r)
      : requests(r.GetCounter("hotline_openai_requests_total", "Chat completion requests")),
        bad_requests(r.GetCounter("hotline_openai_bad_requests_total",
                                  "Chat completion requests refused 400")),
        cancelled(r.GetCounter("hotline_openai_cancelled_total",
                               "Chat completions cancelled by a client disconnect")),
        failed(
            r.GetCounter("hotline_openai_failed_total", "Chat completions failed in the backend")),
        tokens_generated(
            r.GetCounter("hotline_openai_tokens_generated_total", "Tokens generated for the API")),
        first_token_seconds(r.GetHistogram("hotline_openai_first_token_seconds",
                                           "Request start to first streamed text",
                                           LatencyBucketsSeconds())) {}
};

// Field readers that fill `error` and return false on a wrong type or range.
class Fields {
 public:
  Fields(const json& obj, ChatRequestError& error) : obj_(obj), error_(error) {}

  const json* Find(const char* key) const {
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) return nullptr;
    return &*it;
  }
  bool Fail(std::string message, const char* param) {
    error_ = {std::move(message), param};
    return false;
  }
  bool Number(const char* key, double lo, double hi, bool lo_open, float& out) {
    const json* v = Find(key);
    if (!v) return true;
    if (!v->is_number()) return Fail(std::string(key) + " must be a number", key);
    double d = v->get<double>();
    if (!std::isfinite(d) || d < lo || d > hi || (lo_open && d == lo)) {
      return Fail(std::string(key) + " must be in " + (lo_open ? "(" : "[") + Short(lo) + ", " +
                      Short(hi) + "], got " + v->dump(),
                  key);
    }
    out = static_cast<float>(d);
    return true;
  }
  bool Integer(const char* key, int64_t lo, int64_t hi, int64_t& out, bool& present) {
    present = false;
    const json* v = Find(key);
    if (!v) return true;
    if (!v->is_number_integer()) return Fail(std::string(key) + " must be an integer", key);
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return Fail(std::string(key) + " is out of range", key);
    }
    int64_t i = v->get<int64_t>();
    if (i < lo || i > hi) {
      return Fail(std::string(key) + " must be in [" + std::to_string(lo) + ", " +
                      std::to_string(hi) + "], got " + std::to_string(i),
                  key);
    }
    out = i;
    present = true;
    return true;
  }
  bool Bool(const char* key, bool& out) {
    const json* v = Find(key);
    if (!v) return true;
    if (!v->is_boolean()) return Fail(std::string(key) + " must be true or false", key);
    out = v->get<bool>();
    return true;
  }

 private:
  static std::string Short(double d) {
    char buf[32];
    snprintf(buf, sizeof(buf), "%g", d);
    return buf;
  }
  const json& obj_;
  ChatRequestError& error_;
};

bool ParseContent(const json& content, size_t index, std::string& out, ChatRequestError& error) {
  const std::string where = "messages[" + std::to_string(index) + "].content";
  if (content.is_string()) {
    out = content.get<std::string>();
    return true;
  }
  if (content.is_array()) {  // [{"type":"text","text":"..."}, ...]
    for (const json& part : content) {
      if (!part.is_object() || !part.contains("type") || part["type"] != "text" ||
          !part.contains("text") || !part["text"].is_string()) {
        error = {where + ": only {\"type\":\"text\",\"text\":...} parts are supported", "messages"};
        return false;
      }
      out += part["text"].get<std::string>();
    }
    return true;
  }
  error = {where + " must be a string or an array of text parts", "messages"};
  return false;
}

// Fields /v1/chat/completions and /v1/completions share: streaming, answer length, sampling,
// stop strings.
bool ParseCommonFields(Fields& f, const OpenAiApiConfig& config, ChatCompletionRequest& out,
                       ChatRequestError& error) {
  llm::GenerateRequest& g = out.generate;
  if (!f.Bool("stream", out.stream)) return false;
  if (const json* so = f.Find("stream_options")) {
    if (!so->is_object()) return f.Fail("stream_options must be an object", "stream_options");
    if (!out.stream) {
      return f.Fail("stream_options is only allowed with stream: true", "stream_options");
    }
    Fields sf(*so, error);
    if (!sf.Bool("include_usage", out.include_usage)) return false;
  }

  int64_t max_tokens = config.default_max_tokens;
  bool present = false;
  if (!f.Integer("max_tokens", 1, config.max_tokens_limit, max_tokens, present)) return false;
  if (!present &&
      !f.Integer("max_completion_tokens", 1, config.max_tokens_limit, max_tokens, present)) {
    return false;
  }
  g.max_tokens = static_cast<int>(max_tokens);

  if (!f.Number("temperature", 0.0, 2.0, false, g.temperature)) return false;
  if (!f.Number("top_p", 0.0, 1.0, true, g.top_p)) return false;
  int64_t top_k = 0;
  if (!f.Integer("top_k", 0, 1 << 20, top_k, present)) return false;
  g.top_k = static_cast<int>(top_k);
  if (!f.Number("repetition_penalty", 0.0, 10.0, true, g.repetition_penalty)) return false;
  int64_t seed = 0;
  if (!f.Integer("seed", INT64_MIN, INT64_MAX, seed, present)) return false;
  g.seed = static_cast<uint64_t>(seed);
  int64_t n = 1;
  if (!f.Integer("n", 1, 1, n, present)) return false;

  if (const json* stop = f.Find("stop")) {
    std::vector<std::string> stops;
    if (stop->is_string()) {
      stops.push_back(stop->get<std::string>());
    } else if (stop->is_array()) {
      if (stop->size() > kMaxStops) {
        return f.Fail("stop may hold at most " + std::to_string(kMaxStops) + " strings", "stop");
      }
      for (const json& s : *stop) {
        if (!s.is_string()) return f.Fail("stop must be a string or an array of strings", "stop");
        stops.push_back(s.get<std::string>());
      }
    } else {
      return f.Fail("stop must be a string or an array of strings", "stop");
    }
    for (const std::string& s : stops) {
      if (s.empty() || s.size() > kMaxStopBytes) {
        return f.Fail("each stop string must be 1-" + std::to_string(kMaxStopBytes) + " bytes",
                      "stop");
      }
    }
    g.stop = std::move(stops);
  }
  return true;
}

}  // namespace

bool ParseChatCompletionRequest(std::string_view body, const OpenAiApiConfig& config,
                                ChatCompletionRequest& out, ChatRequestError& error) {
  out = ChatCompletionRequest();
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    error = {"the request body is not valid JSON", ""};
    return false;
  }
  if (!j.is_object()) {
    error = {"the request body must be a JSON object", ""};
    return false;
  }
  Fields f(j, error);
  llm::GenerateRequest& g = out.generate;

  const json* model = f.Find("model");
  if (model) {
    if (!model->is_string()) return f.Fail("model must be a string", "model");
    out.model = model->get<std::string>();
  }

  const json* messages = f.Find("messages");
  if (!messages) return f.Fail("messages is required", "messages");
  if (!messages->is_array() || messages->empty()) {
    return f.Fail("messages must be a non-empty array", "messages");
  }
  if (messages->size() > static_cast<size_t>(config.max_messages)) {
    return f.Fail("messages has " + std::to_string(messages->size()) +
                      " entries, more than the limit of " + std::to_string(config.max_messages),
                  "messages");
  }
  for (size_t i = 0; i < messages->size(); ++i) {
    const json& m = (*messages)[i];
    const std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return f.Fail(where + " must be an object", "messages");
    auto role = m.find("role");
    if (role == m.end() || !role->is_string()) {
      return f.Fail(where + ".role must be a string", "messages");
    }
    std::string r = role->get<std::string>();
    if (r == "developer") r = "system";
    if (r != "system" && r != "user" && r != "assistant") {
      return f.Fail(where + ".role must be system, user or assistant, got '" +
                        role->get<std::string>() + "'",
                    "messages");
    }
    auto content = m.find("content");
    if (content == m.end()) return f.Fail(where + ".content is required", "messages");
    llm::Message msg{r, ""};
    if (!ParseContent(*content, i, msg.content, error)) return false;
    g.messages.push_back(std::move(msg));
  }

  return ParseCommonFields(f, config, out, error);
}

bool ParseCompletionRequest(std::string_view body, const OpenAiApiConfig& config,
                            ChatCompletionRequest& out, ChatRequestError& error) {
  out = ChatCompletionRequest();
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    error = {"the request body is not valid JSON", ""};
    return false;
  }
  if (!j.is_object()) {
    error = {"the request body must be a JSON object", ""};
    return false;
  }
  Fields f(j, error);
  const json* model = f.Find("model");
  if (model) {
    if (!model->is_string()) return f.Fail("model must be a string", "model");
    out.model = model->get<std::string>();
  }
  const json* prompt = f.Find("prompt");
  if (!prompt) return f.Fail("prompt is required", "prompt");
  if (prompt->is_array() && prompt->size() == 1 && (*prompt)[0].is_string()) {
    out.generate.prompt = (*prompt)[0].get<std::string>();
  } else if (prompt->is_string()) {
    out.generate.prompt = prompt->get<std::string>();
  } else {
    return f.Fail("prompt must be a string (or an array of one string)", "prompt");
  }
  if (out.generate.prompt.empty()) return f.Fail("prompt must not be empty", "prompt");
  bool echo = false;
  if (!f.Bool("echo", echo)) return false;
  if (echo) return f.Fail("echo is not supported", "echo");
  if (f.Find("logprobs")) return f.Fail("logprobs is not supported", "logprobs");
  if (f.Find("suffix")) return f.Fail("suffix is not supported", "suffix");
  int64_t best_of = 1;
  bool present = false;
  if (!f.Integer("best_of", 1, 1, best_of, present)) return false;
  return ParseCommonFields(f, config, out, error);
}

namespace {

class ChatApi {
 public:
  ChatApi(std::shared_ptr<llm::LanguageModel> model, const OpenAiApiConfig& config,
          MetricsRegistry& metrics)
      : model_(std::move(model)),
        config_(config),
        model_id_(config.model_id.empty() ? model_->name() : config.model_id),
        created_(UnixSeconds()),
        metrics_(metrics) {}

  Response Models() const {
    json data = json::array();
    data.push_back(
        {{"id", model_id_}, {"object", "model"}, {"created", created_}, {"owned_by", "hotline"}});
    return Response::Json(200, Dump(json{{"object", "list"}, {"data", data}}));
  }

  // Both stream and non-stream requests come here: the stream flag is in the body. `chat`:
  // /v1/chat/completions (messages), else /v1/completions (a raw prompt).
  void Completions(const Request& request, ResponseStream& out, bool chat) {
    metrics_.requests.Increment();
    ChatCompletionRequest req;
    ChatRequestError error;
    const bool parsed = chat ? ParseChatCompletionRequest(request.body, config_, req, error)
                             : ParseCompletionRequest(request.body, config_, req, error);
    if (!parsed) {
      metrics_.bad_requests.Increment();
      return Send(out, ErrorResponse(400, error.message, "invalid_request_error", error.param));
    }
    req.generate.cancel = &out.cancel();
    if (req.stream) return Stream(req, out, chat);

    std::string text;
    auto t0 = std::chrono::steady_clock::now();
    auto stats = model_->Generate(req.generate, [&](std::string_view delta) {
      if (text.empty()) ObserveFirst(t0);
      text.append(delta);
      return true;
    });
    if (out.cancel().cancelled()) {
      metrics_.cancelled.Increment();
      return;  // nobody to answer
    }
    if (!stats.ok()) return Send(out, BackendError(stats.status(), chat ? "messages" : "prompt"));
    metrics_.tokens_generated.Increment(static_cast<uint64_t>(stats->generated_tokens));
    json choice = {{"index", 0}, {"finish_reason", FinishName(stats->finish)}};
    if (chat) {
      choice["message"] = {{"role", "assistant"}, {"content", text}};
    } else {
      choice["text"] = text;
      choice["logprobs"] = nullptr;
    }
    json body = {
        {"id", NewCompletionId(chat)},
        {"object", chat ? "chat.completion" : "text_completion"},
        {"created", UnixSeconds()},
        {"model", model_id_},
        {"choices", json::array({choice})},
        {"usage", Usage(*stats)},
    };
    Send(out, Response::Json(200, Dump(body)));
  }

 private:
  static json Usage(const llm::GenerateStats& s) {
    return {{"prompt_tokens", s.prompt_tokens},
            {"completion_tokens", s.generated_tokens},
            {"total_tokens", s.prompt_tokens + s.generated_tokens}};
  }

  void ObserveFirst(std::chrono::steady_clock::time_point t0) {
    metrics_.first_token_seconds.Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }

  // `input`: the request's input field ("messages" or "prompt"), named by a context error.
  Response BackendError(const Status& s, std::string_view input) {
    auto [status, type] = StatusFor(s);
    if (engine::IsContextLengthExceeded(s)) {  // the client's prompt, not a failure here
      metrics_.bad_requests.Increment();
      std::string_view message = s.message();
      message.remove_prefix(std::min(message.size(), kContextCode.size() + 2));  // "...: "
      return ErrorResponse(status, message, type, input, kContextCode);
    }
    metrics_.failed.Increment();
    HLOG_WARN("openai api: generation failed: {}", s.ToString());
    return ErrorResponse(status, s.message(), type);
  }

  static void Send(ResponseStream& out, const Response& r) {
    out.Begin(r.status, r.content_type, r.headers);
    out.Write(r.body);
    out.End();
  }

  void Stream(ChatCompletionRequest& req, ResponseStream& out, bool chat) {
    const std::string id = NewCompletionId(chat);
    const int64_t created = UnixSeconds();
    json chunk = {{"id", id},
                  {"object", chat ? "chat.completion.chunk" : "text_completion"},
                  {"created", created},
                  {"model", model_id_},
                  {"choices", json::array()}};
    // `delta` is the chat delta object; a completion chunk carries its content as "text".
    auto event = [&](const json& delta, const json& finish) {
      json choice = {{"index", 0}, {"finish_reason", finish}};
      if (chat) {
        choice["delta"] = delta;
      } else {
        choice["text"] = delta.value("content", "");
        choice["logprobs"] = nullptr;
      }
      chunk["choices"] = json::array({choice});
      return "data: " + Dump(chunk) + "\n\n";
    };
    bool began = false;
    bool client_gone = false;
    auto begin = [&] {
      began = true;
      // A chat stream opens with the assistant's role; a completion stream with its first text.
      if (!out.Begin(200, "text/event-stream",
                     {{"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}}) ||
          (chat && !out.Write(event({{"role", "assistant"}, {"content", ""}}, nullptr)))) {
        client_gone = true;
      }
    };
    auto t0 = std::chrono::steady_clock::now();
    auto stats = model_->Generate(req.generate, [&](std::string_view delta) {
      if (!began) {
        ObserveFirst(t0);
        begin();
      }
      if (client_gone || !out.Write(event({{"content", std::string(delta)}}, nullptr))) {
        client_gone = true;
        return false;
      }
      return true;
    });
    if (client_gone || out.cancel().cancelled()) {
      metrics_.cancelled.Increment();
      return;
    }
    if (!stats.ok()) {
      if (!began) return Send(out, BackendError(stats.status(), chat ? "messages" : "prompt"));
      auto [status, type] = StatusFor(stats.status());
      (void)status;
      metrics_.failed.Increment();
      out.Write("data: " + ErrorBody(stats.status().message(), type, "") + "\n\n");
      out.Write("data: [DONE]\n\n");
      return;
    }
    metrics_.tokens_generated.Increment(static_cast<uint64_t>(stats->generated_tokens));
    if (!began) begin();
    out.Write(event(json::object(), FinishName(stats->finish)));
    if (req.include_usage) {
      chunk["choices"] = json::array();
      chunk["usage"] = Usage(*stats);
      out.Write("data: " + Dump(chunk) + "\n\n");
    }
    out.Write("data: [DONE]\n\n");
  }

  std::shared_ptr<llm::LanguageModel> model_;
  OpenAiApiConfig config_;
  std::string model_id_;
  int64_t created_;
  ApiMetrics metrics_;
};

}  // namespace

Status InstallOpenAiApi(HttpServer& server, std::shared_ptr<llm::LanguageModel> model,
                        const OpenAiApiConfig& config) {
  if (!model) return InvalidArgumentError("the OpenAI API needs a language model");
  RETURN_IF_ERROR(config.Validate().WithContext("server.openai"));
  auto api = std::make_shared<ChatApi>(std::move(model), config, server.metrics_registry());
  RETURN_IF_ERROR(server.Handle("GET", "/v1/models", [api](const Request&, const CancelToken&) {
    return api->Models();
  }));
  RETURN_IF_ERROR(server.HandleStream("POST", "/v1/chat/completions",
                                      [api](const Request& r, ResponseStream& out) {
                                        api->Completions(r, out, /*chat=*/true);
                                      }));
  return server.HandleStream("POST", "/v1/completions",
                             [api](const Request& r, ResponseStream& out) {
                               api->Completions(r, out, /*chat=*/false);
                             });
}

}  // namespace hotline::server
