#include "llm/llm_config.h"

#include "llm/engine/engine_language_model.h"
#include "llm/openai/openai_language_model.h"
#include "net/http_client.h"
#include "net/url.h"

namespace hotline::llm {

Status LlmEngineConfig::Validate() const {
  RETURN_IF_ERROR(engine.Validate());
  if (chat_template != "auto") RETURN_IF_ERROR(engine::ParseChatFormat(chat_template).status());
  if (max_queue < 1 || max_queue > 100000) {
    return InvalidArgumentError("max_queue must be in [1, 100000], got " +
                                std::to_string(max_queue));
  }
  if (min_reply_tokens < 1 || min_reply_tokens > 65536) {
    return InvalidArgumentError("min_reply_tokens must be in [1, 65536], got " +
                                std::to_string(min_reply_tokens));
  }
  if (defer_horizon_ms < 0 || defer_horizon_ms > 600000) {
    return InvalidArgumentError("defer_horizon_ms must be in [0, 600000] (0 = off), got " +
                                std::to_string(defer_horizon_ms));
  }
  return Status::Ok();
}

Status OpenAiLlmConfig::Validate() const {
  auto url = net::ParseHttpUrl(base_url);
  if (!url.ok()) return url.status().WithContext("base_url");
  if (model.empty()) return InvalidArgumentError("model must name the served model");
  auto in_range = [](const char* name, int v, int lo, int hi) -> Status {
    if (v < lo || v > hi) {
      return InvalidArgumentError(std::string(name) + " must be in [" + std::to_string(lo) + ", " +
                                  std::to_string(hi) + "], got " + std::to_string(v));
    }
    return Status::Ok();
  };
  RETURN_IF_ERROR(in_range("connect_timeout_ms", connect_timeout_ms, 1, 600000));
  RETURN_IF_ERROR(in_range("first_token_timeout_ms", first_token_timeout_ms, 1, 600000));
  RETURN_IF_ERROR(in_range("idle_timeout_ms", idle_timeout_ms, 1, 600000));
  RETURN_IF_ERROR(in_range("max_retries", max_retries, 0, 10));
  RETURN_IF_ERROR(in_range("retry_backoff_ms", retry_backoff_ms, 0, 60000));
  RETURN_IF_ERROR(in_range("breaker_failures", breaker_failures, 0, 1000));
  RETURN_IF_ERROR(in_range("breaker_open_ms", breaker_open_ms, 1, 600000));
  if (max_response_bytes < 1024 || max_response_bytes > (int64_t{1} << 30)) {
    return InvalidArgumentError("max_response_bytes must be in [1024, 2^30], got " +
                                std::to_string(max_response_bytes));
  }
  if (!ca_file.empty()) {
    RETURN_IF_ERROR(net::CheckTrustedAuthorities(ca_file).WithContext("ca_file"));
  }
  return Status::Ok();
}

Status LlmConfig::Validate() const {
  if (backend != "none" && backend != "engine" && backend != "openai") {
    return InvalidArgumentError("backend must be none, engine or openai, got '" + backend + "'");
  }
  if (backend == "engine" && engine.engine.model_path.empty()) {
    return InvalidArgumentError(
        "backend engine needs engine.model_path (a GGUF file; see `hotline engine "
        "convert-llama2c` or `hotline engine gen-random` for test models)");
  }
  return Status::Ok();
}

Result<std::unique_ptr<LanguageModel>> CreateLanguageModel(const LlmConfig& config,
                                                           MetricsRegistry* metrics) {
  RETURN_IF_ERROR(config.Validate());
  if (config.backend == "engine") {
    RETURN_IF_ERROR(config.engine.Validate());
    ASSIGN_OR_RETURN(std::unique_ptr<EngineLanguageModel> m,
                     EngineLanguageModel::Create(config.engine, metrics));
    return std::unique_ptr<LanguageModel>(std::move(m));
  }
  if (config.backend == "openai") {
    RETURN_IF_ERROR(config.openai.Validate());
    ASSIGN_OR_RETURN(std::unique_ptr<OpenAiLanguageModel> m,
                     OpenAiLanguageModel::Create(config.openai, metrics));
    return std::unique_ptr<LanguageModel>(std::move(m));
  }
  return std::unique_ptr<LanguageModel>();
}

}  // namespace hotline::llm
