// Configuration of the language model (section `llm` of hotline.yaml) and the factory that turns
// it into a LanguageModel.
//
//   llm:
//     backend: engine            # none | engine | openai
//     engine: {model_path: models/qwen2-0.5b-q8_0.gguf, threads: 4, chat_template: auto}
//     openai: {base_url: http://10.0.0.5:8000, model: qwen2.5-7b-instruct, api_key_env: VLLM_KEY}
//
// Threads: plain values; Validate() and CreateLanguageModel() may run on any thread.
// Blocking: CreateLanguageModel loads the model file for "engine" (seconds for large models).
#pragma once

#include <memory>
#include <string>

#include "common/metrics.h"
#include "common/status.h"
#include "engine/engine.h"
#include "llm/language_model.h"

namespace hotline::llm {

// The embedded backend: the engine's own settings (model file, threads, KV cache...) plus how
// requests are turned into prompts and scheduled.
struct LlmEngineConfig {
  engine::EngineConfig engine;
  // Chat prompt format: "auto" reads the model file's template; chatml, llama3, llama2, phi3
  // force one (for files without a template). A wrong format gives fluent but worse answers.
  std::string chat_template = "auto";
  // Requests waiting for the engine at most; more fail at once with ResourceExhausted. A full
  // queue means callers would wait seconds anyway: failing fast lets the answerer fall back.
  int max_queue = 64;
  // Truncation policy when a conversation does not fit max_seq_len: the oldest turns are
  // dropped whole (the system prompt and the last user turn are kept) until the prompt leaves
  // room for the whole answer (max_tokens); if even system prompt + last turn leave fewer than
  // min(max_tokens, min_reply_tokens) answer tokens, the request fails with
  // context_length_exceeded. Lower lets a longer question through with a shorter answer.
  int min_reply_tokens = 32;
  // Generation just in time: a request whose deadline is further away than this (a call with
  // that much of its answer's audio still to play; GenerationSchedule) sits out the scheduler's
  // passes in which a request without that slack has work, so the passes of callers waiting for
  // their first words carry fewer sequences and run sooner. Larger leaves more time to generate
  // the next sentence before the audio runs out; smaller frees more passes for waiting callers.
  // 0 = never sit out.
  int defer_horizon_ms = 1000;

  template <class V>
  void Visit(V& v) {
    engine.Visit(v);  // the engine's keys sit directly in llm.engine
    v.Field("chat_template", chat_template, "Chat prompt format: auto, chatml, llama3, llama2, phi3");
    v.Field("max_queue", max_queue, "Requests waiting for the engine at most");
    v.Field("min_reply_tokens", min_reply_tokens,
            "Answer tokens that must fit after the system prompt and the last user turn; "
            "over max_seq_len the oldest turns are dropped whole first, then "
            "context_length_exceeded");
    v.Field("defer_horizon_ms", defer_horizon_ms,
            "A request whose deadline is further away than this sits out passes in which "
            "requests without that slack have work (just-in-time generation; 0 = never)");
  }
  Status Validate() const;
};

// A remote OpenAI-compatible server (vLLM, llama.cpp server, `hotline engine serve`).
struct OpenAiLlmConfig {
  // Server root; requests go to <base_url>/v1/chat/completions (a trailing "/v1" is accepted).
  std::string base_url = "http://127.0.0.1:8000";
  // Model name sent with each request.
  std::string model = "default";
  // Name of the environment variable holding the API key ("" = no Authorization header). The key
  // itself never sits in the config file and is never logged.
  std::string api_key_env = "";
  // Time to connect. Short fails over fast when the server is down; long tolerates a busy accept
  // queue.
  int connect_timeout_ms = 2000;
  // Request sent -> first text delta. Bounds the silence a caller hears; must exceed the server's
  // queueing + prompt processing under load, or busy periods turn into errors.
  int first_token_timeout_ms = 5000;
  // Longest silence between two chunks once streaming. Short notices a stalled server sooner.
  int idle_timeout_ms = 10000;
  // Extra attempts before the first delta on connect errors, HTTP 429 and 5xx (with backoff).
  // Never after text has been streamed: the caller must not hear a sentence twice.
  int max_retries = 2;
  // First backoff (doubles per retry, with jitter). Short retries fast; long spares an
  // overloaded server.
  int retry_backoff_ms = 100;
  // Circuit breaker: after this many requests in a row fail for the server's sake (time-outs,
  // connection failures, 5xx and 429 after their retries) the circuit opens: for breaker_open_ms
  // every request fails at once (Unavailable), so callers hear the fallback without waiting out
  // first_token_timeout_ms each, and a sick server gets no more load. Then one trial request is
  // let through; its success closes the circuit, its failure opens it again. 0 = no breaker.
  int breaker_failures = 3;
  // How long an open circuit fails requests before the trial. Short finds a recovered server
  // sooner; long spares a sick one.
  int breaker_open_ms = 5000;
  // Largest response body accepted (bytes); bounds a runaway or hostile server.
  int64_t max_response_bytes = 4 << 20;
  // For an https:// base_url: PEM file of the trusted authorities ("" = the system's store).
  std::string ca_file;

  template <class V>
  void Visit(V& v) {
    v.Field("base_url", base_url, "Server root URL (http[s]://host:port)");
    v.Field("model", model, "Model name sent with each request");
    v.Field("api_key_env", api_key_env, "Environment variable with the API key");
    v.Field("connect_timeout_ms", connect_timeout_ms, "Connect timeout (ms)");
    v.Field("first_token_timeout_ms", first_token_timeout_ms,
            "Request -> first text delta limit (ms)");
    v.Field("idle_timeout_ms", idle_timeout_ms, "Longest silence between chunks (ms)");
    v.Field("max_retries", max_retries, "Retries before the first delta (connect, 429, 5xx)");
    v.Field("retry_backoff_ms", retry_backoff_ms, "First retry backoff, doubling (ms)");
    v.Field("breaker_failures", breaker_failures,
            "Requests failing in a row (time-out, connection, 5xx/429) that open the circuit: "
            "requests then fail at once for breaker_open_ms (0 = no breaker)");
    v.Field("breaker_open_ms", breaker_open_ms,
            "How long an open circuit fails requests before one trial request (ms)");
    v.Field("max_response_bytes", max_response_bytes, "Largest response accepted (bytes)");
    v.Field("ca_file", ca_file,
            "PEM file of the authorities trusted for https:// (empty: the system's store)");
  }
  Status Validate() const;
};

struct LlmConfig {
  // "none" (no model: the answerer uses its other tiers), "engine" (embedded, in process, no
  // network) or "openai" (a remote server: larger models, more concurrency, a network hop).
  std::string backend = "none";
  LlmEngineConfig engine;
  OpenAiLlmConfig openai;

  template <class V>
  void Visit(V& v) {
    v.Field("backend", backend, "Language model backend: none | engine | openai");
    v.Section("engine", engine);
    v.Section("openai", openai);
  }
  Status Validate() const;
};

// The backend `config.backend` names; a null pointer for "none". Validates first.
// `metrics`: where the model's hotline_llm_* series go (null: the process's global registry); it
// must outlive the model.
Result<std::unique_ptr<LanguageModel>> CreateLanguageModel(const LlmConfig& config,
                                                           MetricsRegistry* metrics = nullptr);

}  // namespace hotline::llm
