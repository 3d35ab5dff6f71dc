// Speech post-processing of language-model output: text that reads well aloud.
//
//   - Markdown is removed: code blocks, headings, emphasis, inline code, links (their text is
//     kept), bullets and numbered list markers (items become sentences); URLs are dropped.
//   - Placeholders ({slot}, {{Slot Name}}, [Slot Name]) are filled from `slots` (keys are slot
//     names as PlaceholderSlot makes them: "order_number"); a sentence with a placeholder that
//     cannot be filled is dropped rather than spoken with a hole.
//   - Stock openers ("Certainly!", "Great question.", "Sure,") are removed so that the first
//     sentence is the direct answer.
//   - At most max_sentences sentences and max_chars characters are kept, cut at a sentence end.
// If nothing speakable remains, the result is empty (the caller falls back to another answer).
//
// Thread-safety: pure function.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace hotline::answer {

struct SpeechConfig {
  // Sentences spoken at most. Fewer keeps turns snappy; more lets answers carry detail.
  int max_sentences = 3;
  // Characters spoken at most (about 15 characters per second of speech).
  int max_chars = 320;

  template <class V>
  void Visit(V& v) {
    v.Field("max_sentences", max_sentences, "Sentences of an LLM answer spoken at most");
    v.Field("max_chars", max_chars, "Characters of an LLM answer spoken at most");
  }
  Status Validate() const;
};

std::string PostprocessForSpeech(std::string_view llm_text,
                                 const std::map<std::string, std::string>& slots,
                                 const SpeechConfig& config = {});

}  // namespace hotline::answer
