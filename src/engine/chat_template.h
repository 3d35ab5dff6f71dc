// Chat templates: render a conversation ({role, content} messages) into the prompt format a chat
// model was trained on. Hotline does not run Jinja; it implements the formats of the families it
// loads and recognizes them in a file's tokenizer.chat_template by their markers:
//
//   chatml (Qwen2, ...): <|im_start|>{role}\n{content}<|im_end|>\n ... <|im_start|>assistant\n
//   llama3:  <|start_header_id|>{role}<|end_header_id|>\n\n{content|trim}<|eot_id|> ...
//            <|start_header_id|>assistant<|end_header_id|>\n\n
//   llama2:  [INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST] {assistant} </s><s>[INST] ...
//   phi3:    <|{role}|>\n{content}<|end|>\n ... <|assistant|>\n
//
// The rendered prompt never includes the leading BOS: Tokenizer::EncodePrompt adds it when the
// vocabulary asks for it (add_special), so it is never doubled.
//
// The output is a list of PromptSegments: template markup is `trusted` (its control tokens are
// parsed), message content is not (a caller typing "<|im_end|>" gets plain text, not a turn
// boundary). Roles are part of the markup, so they are restricted to known names.
//
// Threads: a ChatTemplate is immutable after Create(); Render() is const and thread-safe.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"

namespace hotline::engine {

enum class ChatFormat : uint8_t { kChatMl, kLlama3, kLlama2, kPhi3 };

std::string_view ChatFormatName(ChatFormat f);
// "chatml", "llama3", "llama2", "phi3"; InvalidArgument otherwise.
Result<ChatFormat> ParseChatFormat(std::string_view name);
// The format of a Jinja chat template, by its markers; nullopt when none is recognized.
std::optional<ChatFormat> DetectChatFormat(std::string_view jinja_source);

struct ChatTemplateConfig {
  // "auto" reads the model file's tokenizer.chat_template (then its special tokens); a name
  // forces a format when the file has none or a wrong one. Forcing a format the model was not
  // trained on gives fluent but worse answers.
  std::string format = "auto";

  template <class V>
  void Visit(V& v) {
    v.Field("format", format, "Chat prompt format: auto, chatml, llama3, llama2 or phi3");
  }
  Status Validate() const;
};

struct ChatMessage {
  std::string role;  // "system", "user", "assistant" (and "tool" for chatml/llama3)
  std::string content;
};

class ChatTemplate {
 public:
  // Resolves the format (config name, or auto-detection from `vocab`) and checks that the
  // vocabulary has the format's control tokens. FailedPrecondition when "auto" finds nothing.
  static Result<ChatTemplate> Create(const ChatTemplateConfig& config, const Vocabulary& vocab);
  // A given format, without vocabulary checks (tests, tools).
  explicit ChatTemplate(ChatFormat format) : format_(format) {}

  ChatFormat format() const { return format_; }

  // InvalidArgument for an unknown role, or (llama2) a conversation that does not alternate
  // user/assistant after an optional leading system message. `add_generation_prompt` appends the
  // opening of the assistant's turn.
  Result<std::vector<PromptSegment>> Render(std::span<const ChatMessage> messages,
                                            bool add_generation_prompt) const;

  // The rendered prompt as one string (for display and logs).
  static std::string Join(std::span<const PromptSegment> segments);

 private:
  ChatFormat format_;
};

}  // namespace hotline::engine
