#include "engine/context_fit.h"

#include <algorithm>
#include <string>

namespace hotline::engine {
namespace {

// The OpenAI error code, also at the head of the message for whoever reads it in a log.
constexpr char kPrefix[] = "context_length_exceeded: ";

Status ValidateLimits(const ContextLimits& l) {
  if (l.max_seq_len < 2 || l.max_tokens < 1 || l.min_reply_tokens < 1) {
    return InvalidArgumentError("context limits need max_seq_len >= 2, max_tokens >= 1 and "
                                "min_reply_tokens >= 1");
  }
  return Status::Ok();
}

int NeededRoom(const ContextLimits& l) { return std::min(l.max_tokens, l.min_reply_tokens); }

}  // namespace

Status CheckPromptFits(int prompt_tokens, const ContextLimits& limits) {
  RETURN_IF_ERROR(ValidateLimits(limits));
  const int room = NeededRoom(limits);
  if (int64_t{prompt_tokens} + room <= limits.max_seq_len) return Status::Ok();
  return OutOfRangeError(std::string(kPrefix) + "the prompt has " + std::to_string(prompt_tokens) +
                         " tokens; with room for at least " + std::to_string(room) +
                         " answer tokens that needs " + std::to_string(prompt_tokens + room) +
                         " positions, max_seq_len is " + std::to_string(limits.max_seq_len) +
                         ": shorten the prompt (or raise llm.engine.max_seq_len)")
      .WithReason(StatusReason::kContextLengthExceeded);
}

bool IsContextLengthExceeded(const Status& s) {
  return s.code() == StatusCode::kOutOfRange &&
         s.reason() == StatusReason::kContextLengthExceeded;
}

Result<ContextFit> FitChatToContext(const ChatTemplate& tmpl, const Tokenizer& tokenizer,
                                    std::span<const ChatMessage> messages,
                                    bool add_generation_prompt, const ContextLimits& limits) {
  RETURN_IF_ERROR(ValidateLimits(limits));
  const size_t n = messages.size();
  // [0, head): leading system messages; [tail, n): the last user turn.
  size_t head = 0;
  while (head < n && messages[head].role == "system") ++head;
  size_t tail = n;
  for (size_t i = n; i-- > head;) {
    if (messages[i].role == "user") {
      tail = i;
      break;
    }
  }
  if (tail == n && n > head) tail = n - 1;  // no user message: keep the last one
  // Starts of the droppable turns in [head, tail): dropping k turns keeps [starts[k], tail).
  std::vector<size_t> starts;
  for (size_t i = head; i < tail; ++i) {
    if (i == head || messages[i].role == "user") starts.push_back(i);
  }
  starts.push_back(tail);
  const size_t n_turns = starts.size() - 1;

  std::vector<ChatMessage> kept;
  auto encode = [&](size_t drop) -> Result<std::vector<int32_t>> {
    kept.assign(messages.begin(), messages.begin() + static_cast<std::ptrdiff_t>(head));
    kept.insert(kept.end(), messages.begin() + static_cast<std::ptrdiff_t>(starts[drop]),
                messages.end());
    ASSIGN_OR_RETURN(std::vector<PromptSegment> segments,
                     tmpl.Render(kept, add_generation_prompt));
    std::vector<int32_t> tokens = tokenizer.EncodePrompt(segments, /*add_special=*/true);
    if (tokens.empty()) return InvalidArgumentError("the messages encode to no tokens");
    return tokens;
  };
  auto fits_whole_answer = [&](const std::vector<int32_t>& t) {
    return int64_t(t.size()) + limits.max_tokens <= limits.max_seq_len;
  };
  auto done = [&](std::vector<int32_t> tokens, size_t drop) {
    ContextFit fit;
    fit.dropped_messages = static_cast<int>(starts[drop] - head);
    fit.reply_room = limits.max_seq_len - static_cast<int>(tokens.size());
    fit.tokens = std::move(tokens);
    return fit;
  };

  ASSIGN_OR_RETURN(std::vector<int32_t> all, encode(0));
  if (fits_whole_answer(all)) return done(std::move(all), 0);
  // Fewest dropped turns (in [1, n_turns]) whose prompt leaves room for the whole answer: the
  // token count only falls as turns go, so binary search; hi == n_turns + 1 means none.
  size_t lo = 1, hi = n_turns + 1;
  std::vector<int32_t> best;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    ASSIGN_OR_RETURN(std::vector<int32_t> t, encode(mid));
    if (fits_whole_answer(t)) {
      hi = mid;
      best = std::move(t);
    } else {
      lo = mid + 1;
    }
  }
  if (hi <= n_turns) return done(std::move(best), hi);
  // Every older turn dropped and the whole answer still does not fit: go ahead if the least
  // useful answer does.
  ASSIGN_OR_RETURN(std::vector<int32_t> minimal, n_turns == 0 ? std::move(all) : encode(n_turns));
  const int room = NeededRoom(limits);
  if (int64_t(minimal.size()) + room <= limits.max_seq_len) {
    return done(std::move(minimal), n_turns);
  }
  return OutOfRangeError(
      std::string(kPrefix) + "the system prompt and the last user turn take " +
      std::to_string(minimal.size()) + " tokens (" + std::to_string(starts[n_turns] - head) +
      " older messages already left out); with room for at least " + std::to_string(room) +
      " answer tokens that needs " + std::to_string(minimal.size() + size_t(room)) +
      " positions, max_seq_len is " + std::to_string(limits.max_seq_len) +
      ": shorten the system prompt or the question (or raise llm.engine.max_seq_len)")
      .WithReason(StatusReason::kContextLengthExceeded);
}

}  // namespace hotline::engine
