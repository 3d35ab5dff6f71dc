#include "server/openai_api.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <random>

#include "common/log.h"
#include "common/metrics.h"

namespace hotline::server {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxStops = 4;
constexpr size_t kMaxStopBytes = 256;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string ErrorBody(std::string_view message, std::string_view type, std::string_view param) {
  json e = {{"message", std::string(message)}, {"type", std::string(type)}, {"code", nullptr}};
  e["param"] = param.empty() ? json(nullptr) : json(std::string(param));
  return Dump(json{{"error", e}});
}

Response ErrorResponse(int status, std::string_view message, std::string_view type,
                       std::string_view param = "") {
  return Response::Json(status, ErrorBody(message, type, param));
}

// HTTP status and OpenAI error type for a backend failure.
std::pair<int, const char*> StatusFor(const Status& s) {
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

std::string NewCompletionId() {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng(std::random_device{}());
  char buf[40];
  snprintf(buf, sizeof(buf), "chatcmpl-%016llx%04llx", static_cast<unsigned long long>(rng()),
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
  static ApiMetrics& Get() {
    static ApiMetrics* m = [] {
      auto& r = MetricsRegistry::Global();
      return new ApiMetrics{
          r.GetCounter("hotline_openai_requests_total", "Chat completion requests"),
          r.GetCounter("hotline_openai_bad_requests_total", "Chat completion requests refused 400"),
          r.GetCounter("hotline_openai_cancelled_total",
                       "Chat completions cancelled by a client disconnect"),
          r.GetCounter("hotline_openai_failed_total", "Chat completions failed in the backend"),
          r.GetCounter("hotline_openai_tokens_generated_total", "Tokens generated for the API"),
          r.GetHistogram("hotline_openai_first_token_seconds",
                         "Request start to first streamed text", LatencyBucketsSeconds()),
      };
    }();
    return *m;
  }
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

  if (!f.Bool("stream", out.stream)) return false;
  if (const json* so = f.Find("stream_options")) {
    if (!so->is_object()) return f.Fail("stream_options must be an object", "stream_options");
    if (!out.stream) return f.Fail("stream_options is only allowed with stream: true", "stream_options");
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

namespace {

class ChatApi {
 public:
  ChatApi(std::shared_ptr<llm::LanguageModel> model, const OpenAiApiConfig& config)
      : model_(std::move(model)),
        config_(config),
        model_id_(config.model_id.empty() ? model_->name() : config.model_id),
        created_(UnixSeconds()),
        metrics_(ApiMetrics::Get()) {}

  Response Models() const {
    json data = json::array();
    data.push_back(
        {{"id", model_id_}, {"object", "model"}, {"created", created_}, {"owned_by", "hotline"}});
    return Response::Json(200, Dump(json{{"object", "list"}, {"data", data}}));
  }

  // Both stream and non-stream requests come here: the stream flag is in the body.
  void Completions(const Request& request, ResponseStream& out) {
    metrics_.requests.Increment();
    ChatCompletionRequest req;
    ChatRequestError error;
    if (!ParseChatCompletionRequest(request.body, config_, req, error)) {
      metrics_.bad_requests.Increment();
      return Send(out, ErrorResponse(400, error.message, "invalid_request_error", error.param));
    }
    req.generate.cancel = &out.cancel();
    if (req.stream) return Stream(req, out);

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
    if (!stats.ok()) return Send(out, BackendError(stats.status()));
    metrics_.tokens_generated.Increment(static_cast<uint64_t>(stats->generated_tokens));
    json body = {
        {"id", NewCompletionId()},
        {"object", "chat.completion"},
        {"created", UnixSeconds()},
        {"model", model_id_},
        {"choices",
         json::array({{{"index", 0},
                       {"message", {{"role", "assistant"}, {"content", text}}},
                       {"finish_reason", FinishName(stats->finish)}}})},
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

  Response BackendError(const Status& s) {
    metrics_.failed.Increment();
    auto [status, type] = StatusFor(s);
    HLOG_WARN("openai api: generation failed: {}", s.ToString());
    return ErrorResponse(status, s.message(), type);
  }

  static void Send(ResponseStream& out, const Response& r) {
    out.Begin(r.status, r.content_type, r.headers);
    out.Write(r.body);
    out.End();
  }

  void Stream(ChatCompletionRequest& req, ResponseStream& out) {
    const std::string id = NewCompletionId();
    const int64_t created = UnixSeconds();
    json chunk = {{"id", id},
                  {"object", "chat.completion.chunk"},
                  {"created", created},
                  {"model", model_id_},
                  {"choices", json::array()}};
    auto event = [&](const json& delta, const json& finish) {
      chunk["choices"] = json::array({{{"index", 0}, {"delta", delta}, {"finish_reason", finish}}});
      return "data: " + Dump(chunk) + "\n\n";
    };
    bool began = false;
    bool client_gone = false;
    auto begin = [&] {
      began = true;
      if (!out.Begin(200, "text/event-stream",
                     {{"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}}) ||
          !out.Write(event({{"role", "assistant"}, {"content", ""}}, nullptr))) {
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
      if (!began) return Send(out, BackendError(stats.status()));
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
  ApiMetrics& metrics_;
};

}  // namespace

Status InstallOpenAiApi(HttpServer& server, std::shared_ptr<llm::LanguageModel> model,
                        const OpenAiApiConfig& config) {
  if (!model) return InvalidArgumentError("the OpenAI API needs a language model");
  RETURN_IF_ERROR(config.Validate().WithContext("server.openai"));
  auto api = std::make_shared<ChatApi>(std::move(model), config);
  RETURN_IF_ERROR(server.Handle("GET", "/v1/models", [api](const Request&, const CancelToken&) {
    return api->Models();
  }));
  return server.HandleStream("POST", "/v1/chat/completions",
                             [api](const Request& r, ResponseStream& out) {
                               api->Completions(r, out);
                             });
}

}  // namespace hotline::server
