// SentenceChunker: cuts a stream of LLM text (token by token) into pieces to synthesize, so the
// first words are spoken while the rest of the answer is still being generated.
//
// Policy:
//  - The first chunk goes out as early as is natural: at the first sentence end, or at a clause
//    boundary (, ; : — and CJK ，、；：) once first_chunk_min_words words are buffered, or at a
//    word boundary once first_chunk_max_words words are buffered with no punctuation at all.
//    Two CJK ideographs count as one word (a Chinese word is one to three syllables).
//  - Later chunks end at sentence boundaries (. ! ? … 。！？ and line breaks), so prosody spans a
//    whole sentence; a sentence longer than max_chunk_chars is split at its last clause boundary
//    (else its last space) so no chunk grows without bound.
//  - A full stop is not a sentence end after a decimal ("3.5"), an abbreviation or title ("Dr.",
//    "e.g.", "approx."), an initial ("J. R. R. Tolkien"), or before a lower-case word ("etc. and",
//    "Wait... what"). Deciding that needs the next character, so "." waits for it; "!" and "?"
//    need only the following space; CJK punctuation ends a chunk at once.
//
// Input may be split anywhere, even inside a UTF-8 sequence: chunks only end at ASCII or at whole
// CJK punctuation marks. Output chunks are trimmed and never empty.
// Thread-safety: one instance per answer stream; not thread-safe. Allocation: the pending text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace hotline::tts {

struct SentenceChunkerConfig {
  // Words needed before a clause boundary may end the first chunk. Fewer starts speech sooner but
  // risks a choppy "Sure," as the first phrase.
  int first_chunk_min_words = 4;
  // Words after which the first chunk ends at a word boundary even with no punctuation. Fewer
  // starts sooner; more keeps intonation of longer phrases.
  int first_chunk_max_words = 12;
  // Longest chunk (bytes) before a sentence is split at a clause boundary or space. Bounds the
  // synthesis latency of one chunk and the memory of a stream that never ends a sentence.
  int max_chunk_chars = 250;

  template <class V>
  void Visit(V& v) {
    v.Field("first_chunk_min_words", first_chunk_min_words,
            "Words before a clause boundary may end the first chunk");
    v.Field("first_chunk_max_words", first_chunk_max_words,
            "Words after which the first chunk ends even without punctuation");
    v.Field("max_chunk_chars", max_chunk_chars, "Longest chunk in bytes before a forced split");
  }
  Status Validate() const;
};

class SentenceChunker {
 public:
  explicit SentenceChunker(SentenceChunkerConfig config = {}) : config_(config) {}

  // Appends streamed text; returns the chunks that are now complete (often none).
  std::vector<std::string> Push(std::string_view text);
  // End of the stream: returns what is left (zero or more chunks) and resets for a new stream.
  std::vector<std::string> Flush();
  // Drops pending text (barge-in) and starts a new stream.
  void Reset();

  // True until the first chunk of this stream has been returned.
  bool awaiting_first_chunk() const { return first_; }

 private:
  // End (exclusive) of the next chunk in pending_, or npos when more text is needed.
  size_t FindBoundary(bool eof) const;
  void Drain(bool eof, std::vector<std::string>& out);

  SentenceChunkerConfig config_;
  std::string pending_;
  bool first_ = true;
};

}  // namespace hotline::tts
