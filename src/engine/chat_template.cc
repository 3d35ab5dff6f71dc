#include "engine/chat_template.h"

#include <initializer_list>

namespace hotline::engine {
namespace {

std::string_view Trim(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Control tokens each format writes; a vocabulary without them was not trained on the format.
std::span<const std::string_view> RequiredTokens(ChatFormat f) {
  static constexpr std::string_view kChatMl[] = {"<|im_start|>", "<|im_end|>"};
  static constexpr std::string_view kLlama3[] = {"<|start_header_id|>", "<|end_header_id|>",
                                                 "<|eot_id|>"};
  static constexpr std::string_view kPhi3[] = {"<|user|>", "<|assistant|>", "<|end|>"};
  switch (f) {
    case ChatFormat::kChatMl:
      return kChatMl;
    case ChatFormat::kLlama3:
      return kLlama3;
    case ChatFormat::kPhi3:
      return kPhi3;
    case ChatFormat::kLlama2:
      return {};
  }
  return {};
}

class Builder {
 public:
  void Markup(std::string_view s) { Add(s, true); }
  void Content(std::string_view s) { Add(s, false); }
  std::vector<PromptSegment> Take() { return std::move(segments_); }

 private:
  void Add(std::string_view s, bool trusted) {
    if (s.empty()) return;
    if (!segments_.empty() && segments_.back().trusted == trusted) {
      segments_.back().text.append(s);
    } else {
      segments_.push_back({std::string(s), trusted});
    }
  }
  std::vector<PromptSegment> segments_;
};

Status CheckRoles(std::span<const ChatMessage> messages,
                  std::initializer_list<std::string_view> allowed, ChatFormat f) {
  for (size_t i = 0; i < messages.size(); ++i) {
    bool ok = false;
    for (std::string_view a : allowed) ok |= messages[i].role == a;
    if (!ok) {
      std::string names;
      for (std::string_view a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
      return InvalidArgumentError("chat message " + std::to_string(i) + " has role '" +
                                  messages[i].role.substr(0, 32) + "'; the " +
                                  std::string(ChatFormatName(f)) + " format accepts " + names);
    }
  }
  return Status::Ok();
}

Status RenderLlama2(std::span<const ChatMessage> messages, Builder& b) {
  size_t i = 0;
  std::string_view system;
  bool has_system = false;
  if (!messages.empty() && messages[0].role == "system") {
    system = Trim(messages[0].content);
    has_system = true;
    i = 1;
  }
  bool first_turn = true;
  for (size_t k = i; k < messages.size(); ++k) {
    const bool expect_user = (k - i) % 2 == 0;
    const ChatMessage& m = messages[k];
    if (m.role != (expect_user ? "user" : "assistant")) {
      return InvalidArgumentError(
          "the llama2 chat format needs messages alternating user/assistant (after an optional "
          "first system message); message " +
          std::to_string(k) + " is '" + m.role + "'");
    }
    if (expect_user) {
      // Each turn after the first opens with BOS; the first BOS comes from the tokenizer.
      if (!first_turn) b.Markup("<s>");
      b.Markup("[INST] ");
      if (first_turn && has_system) {
        b.Markup("<<SYS>>\n");
        b.Content(system);
        b.Markup("\n<</SYS>>\n\n");
      }
      b.Content(Trim(m.content));
      b.Markup(" [/INST]");
      first_turn = false;
    } else {
      b.Markup(" ");
      b.Content(Trim(m.content));
      b.Markup(" </s>");
    }
  }
  if (has_system && first_turn) {
    // A system message alone: keep it, as the start of an instruction.
    b.Markup("[INST] <<SYS>>\n");
    b.Content(system);
    b.Markup("\n<</SYS>>\n\n");
  }
  return Status::Ok();
}

}  // namespace

std::string_view ChatFormatName(ChatFormat f) {
  switch (f) {
    case ChatFormat::kChatMl:
      return "chatml";
    case ChatFormat::kLlama3:
      return "llama3";
    case ChatFormat::kLlama2:
      return "llama2";
    case ChatFormat::kPhi3:
      return "phi3";
  }
  return "?";
}

Result<ChatFormat> ParseChatFormat(std::string_view name) {
  for (ChatFormat f : {ChatFormat::kChatMl, ChatFormat::kLlama3, ChatFormat::kLlama2,
                       ChatFormat::kPhi3}) {
    if (name == ChatFormatName(f)) return f;
  }
  return InvalidArgumentError("unknown chat format '" + std::string(name) +
                              "'; use auto, chatml, llama3, llama2 or phi3");
}

std::optional<ChatFormat> DetectChatFormat(std::string_view src) {
  auto has = [&](std::string_view marker) { return src.find(marker) != std::string_view::npos; };
  if (has("<|im_start|>")) return ChatFormat::kChatMl;
  if (has("<|start_header_id|>")) return ChatFormat::kLlama3;
  if (has("<|user|>") && has("<|end|>")) return ChatFormat::kPhi3;
  if (has("[INST]")) return ChatFormat::kLlama2;
  return std::nullopt;
}

Status ChatTemplateConfig::Validate() const {
  if (format == "auto") return Status::Ok();
  return ParseChatFormat(format).status();
}

Result<ChatTemplate> ChatTemplate::Create(const ChatTemplateConfig& config,
                                          const Vocabulary& vocab) {
  RETURN_IF_ERROR(config.Validate());
  std::optional<ChatFormat> format;
  if (config.format != "auto") {
    ASSIGN_OR_RETURN(format, ParseChatFormat(config.format));
  } else if (!vocab.chat_template().empty()) {
    format = DetectChatFormat(vocab.chat_template());
    if (!format) {
      return FailedPreconditionError(
          "the model's tokenizer.chat_template is not one Hotline recognizes; set the chat "
          "format by name (chatml, llama3, llama2 or phi3)");
    }
  } else {
    // No template in the file: go by the control tokens the vocabulary has.
    for (ChatFormat f : {ChatFormat::kChatMl, ChatFormat::kLlama3, ChatFormat::kPhi3}) {
      bool all = true;
      for (std::string_view t : RequiredTokens(f)) all &= vocab.Find(t) != kNoToken;
      if (all) {
        format = f;
        break;
      }
    }
    if (!format) {
      return FailedPreconditionError(
          "the model has no tokenizer.chat_template and no chat control tokens; set the chat "
          "format by name (chatml, llama3, llama2 or phi3) if it is a chat model");
    }
  }
  for (std::string_view t : RequiredTokens(*format)) {
    const TokenId id = vocab.Find(t);
    if (id == kNoToken || vocab.Type(id) == TokenType::kNormal) {
      return InvalidArgumentError("the " + std::string(ChatFormatName(*format)) +
                                  " chat format needs the special token " + std::string(t) +
                                  ", which this model's vocabulary lacks; choose the model's own "
                                  "format");
    }
  }
  if (*format == ChatFormat::kLlama2 && (vocab.bos_id() == kNoToken || vocab.eos_id() == kNoToken)) {
    return InvalidArgumentError("the llama2 chat format needs BOS and EOS tokens");
  }
  return ChatTemplate(*format);
}

Result<std::vector<PromptSegment>> ChatTemplate::Render(std::span<const ChatMessage> messages,
                                                        bool add_generation_prompt) const {
  Builder b;
  switch (format_) {
    case ChatFormat::kChatMl:
      RETURN_IF_ERROR(CheckRoles(messages, {"system", "user", "assistant", "tool"}, format_));
      for (const ChatMessage& m : messages) {
        b.Markup("<|im_start|>" + m.role + "\n");
        b.Content(m.content);
        b.Markup("<|im_end|>\n");
      }
      if (add_generation_prompt) b.Markup("<|im_start|>assistant\n");
      break;
    case ChatFormat::kLlama3:
      RETURN_IF_ERROR(CheckRoles(messages, {"system", "user", "assistant", "tool"}, format_));
      for (const ChatMessage& m : messages) {
        b.Markup("<|start_header_id|>" + m.role + "<|end_header_id|>\n\n");
        b.Content(Trim(m.content));
        b.Markup("<|eot_id|>");
      }
      if (add_generation_prompt) b.Markup("<|start_header_id|>assistant<|end_header_id|>\n\n");
      break;
    case ChatFormat::kPhi3:
      RETURN_IF_ERROR(CheckRoles(messages, {"system", "user", "assistant"}, format_));
      for (const ChatMessage& m : messages) {
        b.Markup("<|" + m.role + "|>\n");
        b.Content(m.content);
        b.Markup("<|end|>\n");
      }
      if (add_generation_prompt) b.Markup("<|assistant|>\n");
      break;
    case ChatFormat::kLlama2:
      RETURN_IF_ERROR(CheckRoles(messages, {"system", "user", "assistant"}, format_));
      RETURN_IF_ERROR(RenderLlama2(messages, b));
      break;
  }
  return b.Take();
}

std::string ChatTemplate::Join(std::span<const PromptSegment> segments) {
  std::string s;
  for (const PromptSegment& p : segments) s += p.text;
  return s;
}

}  // namespace hotline::engine
