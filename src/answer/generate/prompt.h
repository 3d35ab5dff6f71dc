// PromptBuilder: chat messages for the language model, within the max_seq_len token budget.
//
// Layout, most stable first so that the engine's prefix cache shares as much as possible:
//   1. system: the configured system prompt, identical for every call and turn (shared by all);
//   2. the conversation history of this call, oldest first (identical from one turn to the next,
//      so the call's own prefix is reused turn after turn);
//   3. one user message with this turn's retrieved passages, tool results and the question.
// When the budget (max_seq_len - reserved_output_tokens) is short, the builder keeps the system
// prompt and the question (an error if even they do not fit), then tool results, then passages
// in rank order, then as much recent history as fits, dropping the oldest turns first.
//
// Tokens are counted by a callback so the engine's tokenizer can be plugged in; the default
// estimates one token per 4 bytes (rounded up) plus 4 per message for chat-template markup.
//
// Thread-safety: Build is const and may be called from any thread. Text passed in must already
// be redacted when the model is remote (the builder does not redact).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "answer/account/tools.h"
#include "answer/kb/knowledge_base.h"
#include "common/status.h"
#include "llm/language_model.h"

namespace hotline::answer {

// One chat message ("system", "user", "assistant"): the language model's own type, so prompts go
// to any llm::LanguageModel backend without conversion.
using ChatMessage = llm::Message;

using TokenCounter = std::function<int(std::string_view text)>;
int EstimateTokens(std::string_view text);

struct PromptConfig {
  std::string system_prompt =
      "You are a friendly call-centre voice assistant. Answer in one or two short spoken "
      "sentences, the direct answer first. Use only the facts in the context; if they do not "
      "answer the question, say you will transfer the caller to an agent. No lists, no markdown.";
  // The model's context length; the prompt plus the answer must fit in it.
  int max_seq_len = 2048;
  // Tokens kept free for the answer. More allows longer answers but leaves less for context.
  int reserved_output_tokens = 256;
  // Passages included at most (fewer when the budget is short).
  int max_passages = 3;
  // Conversation turns (user or assistant messages) included at most.
  int max_history_messages = 8;

  template <class V>
  void Visit(V& v) {
    v.Field("system_prompt", system_prompt, "Stable system prompt (first, shared prefix)");
    v.Field("max_seq_len", max_seq_len, "Model context length in tokens");
    v.Field("reserved_output_tokens", reserved_output_tokens, "Tokens kept for the answer");
    v.Field("max_passages", max_passages, "Knowledge-base passages in the prompt at most");
    v.Field("max_history_messages", max_history_messages, "History messages in the prompt at most");
  }
  Status Validate() const;
};

struct PromptInput {
  std::string question;
  std::vector<Passage> passages;       // best first
  std::vector<ToolResult> tool_results;
  std::vector<ChatMessage> history;    // oldest first, without the current question
};

struct Prompt {
  std::vector<ChatMessage> messages;
  int tokens = 0;
  std::vector<std::string> passage_ids;  // passages that made it into the prompt
  int dropped_passages = 0;
  int dropped_history = 0;
  int dropped_tool_results = 0;
};

class PromptBuilder {
 public:
  // `count` may be null: EstimateTokens.
  explicit PromptBuilder(PromptConfig config, TokenCounter count = nullptr);
  // ResourceExhausted when the system prompt and the question alone exceed the budget.
  Result<Prompt> Build(const PromptInput& input) const;

 private:
  int Count(std::string_view text) const;
  PromptConfig config_;
  TokenCounter count_;
};

}  // namespace hotline::answer
