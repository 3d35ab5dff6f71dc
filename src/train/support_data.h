// Training data for the demo support agent, from the Bitext customer-support corpus
// (customer_support.csv, CDLA-Sharing-1.0).
//
// Each corpus row gives a caller question (`instruction`) and its intent. The answer is the
// voice-length knowledge-base article the answer module derives for that intent
// (answer::DeriveBitextArticles: one or two sentences, placeholders spoken as words), so the
// model learns the same answers the demo knowledge base gives. With several articles per intent,
// a question's article is chosen by a hash of its text.
//
// Split: a question goes to the held-out test set when a hash of its normalized text (lowercase,
// single spaces) falls in `test_fraction`; duplicates of one question therefore never straddle
// the split. Deterministic: the same corpus and options give the same examples.
//
// Encoding (EncodeChat): the prompt is the one the answerer's LLM tier sends for a lone question
// (CallPrompt: answer::PromptBuilder's system prompt, then the user message "Question: ..."),
// rendered by the engine's ChatML template with the generation prompt; then the answer and
// <|im_end|> follow. Only the answer's tokens and the closing <|im_end|> carry loss. A model
// trained so answers the call's own prompts; it has not seen passages or history in its prompt
// (the demo configuration sets answer.prompt.max_passages and max_history_messages to 0).
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "answer/generate/prompt.h"
#include "common/status.h"
#include "engine/chat_template.h"
#include "engine/tokenizer.h"

namespace hotline::train {

struct SupportExample {
  std::string question;
  std::string answer;
  std::string intent;
};

struct SupportDataOptions {
  double test_fraction = 0.1;
  int articles_per_intent = 1;
  int max_answer_chars = 200;
};

struct SupportData {
  std::vector<SupportExample> train;
  std::vector<SupportExample> test;
};

// Errors: malformed CSV (with the line), missing columns, no usable rows.
Result<SupportData> BuildSupportData(std::string_view csv_text, const SupportDataOptions& options);

// Reads a file of at most `max_bytes`. NotFound / ResourceExhausted with the path.
Result<std::string> ReadTextFile(const std::string& path, size_t max_bytes = 256u << 20);

struct EncodedExample {
  std::vector<int32_t> tokens;  // prompt, answer, <|im_end|>
  int prompt_tokens = 0;        // tokens before the answer (no loss on them)
};

// The messages answer::PromptBuilder builds from `prompt` for `question` alone (no passages, tool
// results or history): what the call's LLM tier sends the model. Errors: the question does not
// fit prompt.max_seq_len.
Result<std::vector<engine::ChatMessage>> CallPrompt(std::string_view question,
                                                    const answer::PromptConfig& prompt = {});

// Encodes CallPrompt(ex.question, prompt) and the answer with the tokenizer's vocabulary (which
// must have the ChatML control tokens).
Result<EncodedExample> EncodeChat(const engine::Tokenizer& tokenizer, const SupportExample& ex,
                                  const answer::PromptConfig& prompt = {});

// Texts for tokenizer training: questions, answers, the template's role words and the prompt's
// fixed text (system prompt, "Question: ").
std::vector<std::string> TokenizerCorpus(const std::vector<SupportExample>& examples,
                                         const answer::PromptConfig& prompt = {});

}  // namespace hotline::train
