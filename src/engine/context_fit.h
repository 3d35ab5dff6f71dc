// Fitting a conversation into the context window (max_seq_len): the engine's truncation policy,
// shared by every place where chat messages become prompt tokens (EngineLanguageModel, and so
// the OpenAI-compatible server's /v1/chat/completions).
//
// Policy, for messages = [system...] [older turns...] [last user turn]:
//   - Leading system messages and the last user turn (the last user message and anything after
//     it) are always kept, never cut inside.
//   - Older turns are dropped whole, oldest first (a turn is a user message and the assistant
//     messages up to the next user message; a leading assistant greeting is a turn of its own),
//     until prompt tokens + max_tokens <= max_seq_len, i.e. the whole answer fits.
//   - With every older turn dropped and the answer still not fitting, the request goes ahead if
//     at least min(max_tokens, min_reply_tokens) answer tokens fit (the answer then ends at the
//     context limit, finish "length"); otherwise the result is OutOfRange with a message that
//     starts "context_length_exceeded:" and gives the token counts and what to shorten. Nothing
//     is ever truncated silently inside a message.
// A raw prompt (no messages) cannot be cut meaningfully: CheckPromptFits applies only the last
// rule.
//
// Cost: one render + tokenization when everything fits; otherwise a binary search over the
// number of dropped turns (log2(turns) + 1 more tokenizations).
// Threads: pure functions of their arguments (ChatTemplate and Tokenizer are thread-safe).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "engine/chat_template.h"
#include "engine/tokenizer.h"

namespace hotline::engine {

struct ContextLimits {
  int max_seq_len = 0;       // positions for prompt and answer together
  int max_tokens = 0;        // the answer the caller asked for
  int min_reply_tokens = 1;  // the least answer room worth starting a request for
};

struct ContextFit {
  std::vector<int32_t> tokens;  // the prompt (with BOS when the vocabulary asks for it)
  int dropped_messages = 0;     // older messages left out
  int reply_room = 0;           // max_seq_len - tokens.size()
};

// Renders `messages` with `tmpl` (the assistant's opening appended when
// `add_generation_prompt`), tokenizes, and applies the policy above. Errors: those of
// ChatTemplate::Render (bad roles, order), InvalidArgument for limits out of range or messages
// that encode to nothing, OutOfRange "context_length_exceeded: ...".
Result<ContextFit> FitChatToContext(const ChatTemplate& tmpl, const Tokenizer& tokenizer,
                                    std::span<const ChatMessage> messages,
                                    bool add_generation_prompt, const ContextLimits& limits);

// OK when a prompt of `prompt_tokens` leaves room for min(max_tokens, min_reply_tokens) answer
// tokens; else OutOfRange "context_length_exceeded: ...".
Status CheckPromptFits(int prompt_tokens, const ContextLimits& limits);

// True for the OutOfRange errors above, by their reason (StatusReason::kContextLengthExceeded,
// kept through WithContext), never their text; the server answers them with HTTP 400 and the
// OpenAI error code "context_length_exceeded".
bool IsContextLengthExceeded(const Status& s);

}  // namespace hotline::engine
