#include "answer/generate/prompt.h"

#include <algorithm>

namespace hotline::answer {

namespace {
constexpr int kMessageOverheadTokens = 4;  // role markers of a chat template
}

int EstimateTokens(std::string_view text) { return static_cast<int>((text.size() + 3) / 4); }

Status PromptConfig::Validate() const {
  if (max_seq_len < 64) {
    return InvalidArgumentError("max_seq_len must be at least 64, got " + std::to_string(max_seq_len));
  }
  if (reserved_output_tokens < 1 || reserved_output_tokens >= max_seq_len) {
    return InvalidArgumentError("reserved_output_tokens must be in [1, max_seq_len)");
  }
  if (max_passages < 0 || max_history_messages < 0) {
    return InvalidArgumentError("max_passages and max_history_messages must not be negative");
  }
  return Status::Ok();
}

PromptBuilder::PromptBuilder(PromptConfig config, TokenCounter count)
    : config_(std::move(config)), count_(std::move(count)) {}

int PromptBuilder::Count(std::string_view text) const {
  return (count_ ? count_(text) : EstimateTokens(text)) + kMessageOverheadTokens;
}

Result<Prompt> PromptBuilder::Build(const PromptInput& in) const {
  const int budget = config_.max_seq_len - config_.reserved_output_tokens;
  Prompt p;
  const std::string question_part = "Question: " + in.question;
  int used = Count(config_.system_prompt) + Count(question_part);
  if (used > budget) {
    return ResourceExhaustedError("the system prompt and the question need " + std::to_string(used) +
                                  " tokens; the budget is " + std::to_string(budget) +
                                  " (max_seq_len - reserved_output_tokens)");
  }
  // Context pieces in priority order; each costs its text (the message overhead is counted once).
  std::string context;
  auto try_add = [&](const std::string& piece) {
    int cost = count_ ? count_(piece) : EstimateTokens(piece);
    if (context.empty()) cost += count_ ? count_("Context:\n\n") : EstimateTokens("Context:\n\n");
    if (used + cost > budget) return false;
    used += cost;
    context += piece;
    return true;
  };
  for (const auto& t : in.tool_results) {
    if (!try_add("Account information: " + t.text + "\n")) ++p.dropped_tool_results;
  }
  int kept = 0;
  for (const auto& passage : in.passages) {
    if (kept >= config_.max_passages ||
        !try_add("[" + passage.article.id + "] " + passage.article.title + ": " +
                 passage.article.body + "\n")) {
      ++p.dropped_passages;
      continue;
    }
    p.passage_ids.push_back(passage.article.id);
    ++kept;
  }
  // History: newest first into the budget, then restored to chronological order.
  std::vector<const ChatMessage*> history;
  const size_t n = in.history.size();
  for (size_t i = 0; i < n; ++i) {
    const ChatMessage& m = in.history[n - 1 - i];
    if (static_cast<int>(history.size()) >= config_.max_history_messages) break;
    const int cost = Count(m.content);
    if (used + cost > budget) break;
    used += cost;
    history.push_back(&m);
  }
  p.dropped_history = static_cast<int>(n - history.size());
  std::reverse(history.begin(), history.end());

  p.messages.push_back({"system", config_.system_prompt});
  for (const ChatMessage* m : history) p.messages.push_back(*m);
  p.messages.push_back(
      {"user", context.empty() ? question_part : "Context:\n" + context + "\n" + question_part});
  p.tokens = used;
  return p;
}

}  // namespace hotline::answer
