// The OpenAI-compatible API's request bodies (server/openai_api.h): ParseChatCompletionRequest and
// ParseCompletionRequest, which validate every POST /v1/chat/completions and /v1/completions
// before a model sees it, then the chat templates the engine backend renders parsed messages with.
// Input: a request body.
// Properties: what parses is within the configured bounds (max_tokens, message count, sampling
// ranges); a refusal names a reason.
#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/chat_template.h"
#include "fuzz/fuzz_input.h"
#include "server/openai_api.h"

namespace {

void CheckParsed(const hotline::server::ChatCompletionRequest& r,
                 const hotline::server::OpenAiApiConfig& config) {
  const auto& g = r.generate;
  HOTLINE_FUZZ_CHECK(g.max_tokens >= 1 && g.max_tokens <= config.max_tokens_limit);
  HOTLINE_FUZZ_CHECK(g.messages.size() <= static_cast<size_t>(config.max_messages));
  HOTLINE_FUZZ_CHECK(std::isfinite(g.temperature) && g.temperature >= 0);
  HOTLINE_FUZZ_CHECK(std::isfinite(g.top_p) && g.top_p >= 0 && g.top_p <= 1);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace hotline::server;
  static const OpenAiApiConfig config;
  const std::string_view body = hotline::fuzz::AsText(data, size);

  ChatCompletionRequest chat;
  ChatRequestError error;
  if (ParseChatCompletionRequest(body, config, chat, error)) {
    CheckParsed(chat, config);
    std::vector<hotline::engine::ChatMessage> messages;
    for (const auto& m : chat.generate.messages) messages.push_back({m.role, m.content});
    for (auto format : {hotline::engine::ChatFormat::kChatMl, hotline::engine::ChatFormat::kLlama3,
                        hotline::engine::ChatFormat::kLlama2, hotline::engine::ChatFormat::kPhi3}) {
      (void)hotline::engine::ChatTemplate(format).Render(messages, true);
    }
  } else {
    HOTLINE_FUZZ_CHECK(!error.message.empty());
  }

  ChatCompletionRequest completion;
  ChatRequestError completion_error;
  if (ParseCompletionRequest(body, config, completion, completion_error)) {
    CheckParsed(completion, config);
  } else {
    HOTLINE_FUZZ_CHECK(!completion_error.message.empty());
  }
  return 0;
}
