// StreamingDetokenizer: turns generated tokens into text one token at a time, emitting only
// complete UTF-8 characters. A character split over several tokens (byte-level BPE pieces or
// SentencePiece <0xNN> byte tokens) is held back until its last byte arrives; bytes that can
// never form a valid character come out as U+FFFD, so the output is always valid UTF-8.
//
// Usage (the engine's generation loop):
//   StreamingDetokenizer detok(tokenizer, {.strip_leading_space = false});
//   for each sampled token: text += detok.Push(token);   // may be "" while a char is pending
//   at the end:             text += detok.Finish();
//
// Threads: one instance per sequence, used from one thread at a time. Holds at most 3 pending
// bytes; Push() allocates only for the returned string.
#pragma once

#include <string>

#include "engine/tokenizer.h"

namespace hotline::engine {

class StreamingDetokenizer {
 public:
  // `tokenizer` must outlive this object.
  explicit StreamingDetokenizer(const Tokenizer& tokenizer, const DecodeOptions& options = {});

  // Appends the text that `id` completes to *out.
  void Push(TokenId id, std::string* out);
  std::string Push(TokenId id) {
    std::string s;
    Push(id, &s);
    return s;
  }
  // Flushes a pending incomplete character (as U+FFFD) and resets for a new sequence.
  void Finish(std::string* out);
  std::string Finish() {
    std::string s;
    Finish(&s);
    return s;
  }
  // Bytes held back waiting for the rest of a character.
  size_t pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer& tokenizer_;
  DecodeOptions options_;
  bool strip_next_space_;
  std::string pending_;
};

}  // namespace hotline::engine
