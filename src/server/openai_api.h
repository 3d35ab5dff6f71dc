// The OpenAI-compatible chat API over an llm::LanguageModel, so that any OpenAI client (and
// Hotline's own llm/openai backend on another machine) can use the embedded engine:
//
//   POST /v1/chat/completions   {"messages":[...], "stream":true|false, "max_tokens", "temperature",
//                                "top_p", "stop": "s"|["s",...], "seed", ...}
//        stream false -> one chat.completion JSON object
//        stream true  -> Server-Sent Events: "data: {chat.completion.chunk}\n\n" ... "data: [DONE]\n\n"
//   POST /v1/completions        {"prompt":"...", same fields}: a raw prompt, no chat template;
//        stream false -> one text_completion object, true -> text_completion chunks + [DONE]
//   GET  /v1/models             {"object":"list","data":[{"id":<model id>,"object":"model",...}]}
//
// Context window (engine backend): over-long messages lose their oldest turns whole (system
// prompt and last user turn kept, engine/context_fit.h); when even those do not fit, or a raw
// prompt is too long (never cut), the answer is 400 with "code":"context_length_exceeded".
// Every field is validated; a bad request gets 400 with an OpenAI-style body
// {"error":{"message","type":"invalid_request_error","param","code"}}. A backend error before any
// text is an HTTP error (503 overloaded/unavailable, 504 timeout, 500 otherwise); after text has
// been streamed it is an SSE `data: {"error":...}` event before [DONE]. A client that disconnects
// cancels its generation (the request's CancelToken is the connection's).
//
// Threads: the handlers run on the server's worker pool, one generation per worker, blocking in
// LanguageModel::Generate; the model must be safe to call from several threads (the interface
// requires it).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "llm/language_model.h"
#include "server/http_server.h"
#include "server/server_config.h"

namespace hotline::server {

struct ChatCompletionRequest {
  llm::GenerateRequest generate;  // messages, sampling, stop; cancel is set by the handler
  std::string model;              // as the client named it ("" when absent)
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
};

// A validation failure: the message for the client and the offending parameter ("" if none).
struct ChatRequestError {
  std::string message;
  std::string param;
};

// Parses and validates a /v1/chat/completions body. On failure returns false and fills `error`.
bool ParseChatCompletionRequest(std::string_view body, const OpenAiApiConfig& config,
                                ChatCompletionRequest& out, ChatRequestError& error);

// Parses and validates a /v1/completions body: "prompt" (a string, or an array of one string)
// instead of messages, the same other fields; echo, logprobs, suffix and best_of > 1 are refused.
bool ParseCompletionRequest(std::string_view body, const OpenAiApiConfig& config,
                            ChatCompletionRequest& out, ChatRequestError& error);

// Registers /v1/chat/completions, /v1/completions and /v1/models on `server` (before Start()).
// `model` is shared with the caller and must stay usable until the server has stopped. Its
// hotline_openai_* series go to the server's registry (HttpServer::metrics_registry).
Status InstallOpenAiApi(HttpServer& server, std::shared_ptr<llm::LanguageModel> model,
                        const OpenAiApiConfig& config);

}  // namespace hotline::server
