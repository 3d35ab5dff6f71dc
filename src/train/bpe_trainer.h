// Byte-level BPE tokenizer training, producing a vocabulary the engine's Tokenizer loads
// (tokenizer.ggml.model "gpt2").
//
// The texts are split with the engine's own GPT-2 pre-tokenizer (engine/pretokenize.h), so merges
// never cross the pieces the engine will later split at. Every piece starts as its bytes (the 256
// byte tokens, in GPT-2's printable byte encoding); then, until the vocabulary is full, the most
// frequent adjacent pair over all pieces (weighted by piece count; ties broken by the lower pair
// of ids, so training is deterministic) is merged into a new token. Special tokens (control type)
// are appended at the end; they are never produced by merges, only matched as whole strings in
// trusted template text.
//
// Any text round-trips exactly: every byte has its own token.
//
// Thread-safety: pure function. Memory is O(distinct pieces).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "engine/vocab.h"

namespace hotline::train {

struct BpeTrainOptions {
  // Total tokens: 256 bytes + merges + special tokens. Training stops early when no pair occurs
  // at least `min_pair_count` times.
  int vocab_size = 2048;
  int min_pair_count = 2;
  // Control tokens, in id order after the merges. The first is end-of-text (EOS); the one named
  // `end_of_turn` is the EOT token the chat template closes turns with.
  std::vector<std::string> special_tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  std::string end_of_turn = "<|im_end|>";
  std::string chat_template;  // written to the vocabulary as tokenizer.chat_template
};

// InvalidArgument when vocab_size cannot hold the byte tokens and specials, or a special token
// is empty or repeated.
Result<engine::VocabData> TrainBpe(std::span<const std::string> texts,
                                   const BpeTrainOptions& options);

}  // namespace hotline::train
