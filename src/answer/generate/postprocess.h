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
// SpeechStream does the same incrementally for streamed model output: it returns each spoken
// sentence as soon as it is final (the text after it can no longer change it: a sentence end
// followed by more text on its line, or a complete line), so the first sentence can be spoken
// while the model is still generating. The first sentence's first clause can go out before it
// (SpeechConfig::first_clause_min_words): when more text follows a clause boundary, the words
// before it are final, and a plain clause (no markup, no placeholder) is returned at once; the
// rest of the sentence is returned when it is final. Pushing a whole text and finishing gives
// exactly PostprocessForSpeech's text (PostprocessForSpeech is built on it).
//
// Thread-safety: PostprocessForSpeech and SplitSentences are pure functions; a SpeechStream is
// one answer's (not thread-safe). Allocation: a SpeechStream re-scans its buffered text (at most
// 64 KiB) on each Push, which is cheap for spoken-length answers.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace hotline::answer {

struct SpeechConfig {
  // Sentences spoken at most. Fewer keeps turns snappy; more lets answers carry detail.
  int max_sentences = 3;
  // Characters spoken at most (about 15 characters per second of speech).
  int max_chars = 320;
  // The answer's first words go out at the first clause boundary (", " "; " ": ") of its first
  // sentence once they are this many words, before the model has finished the sentence; the
  // rest of the sentence follows when it is final. 0 waits for the whole first sentence. Fewer
  // starts speech sooner; too few gives a clipped start ("Yes,").
  int first_clause_min_words = 4;

  template <class V>
  void Visit(V& v) {
    v.Field("max_sentences", max_sentences, "Sentences of an LLM answer spoken at most");
    v.Field("max_chars", max_chars, "Characters of an LLM answer spoken at most");
    v.Field("first_clause_min_words", first_clause_min_words,
            "Words of a first clause spoken before its sentence ends (0 = whole sentence)");
  }
  Status Validate() const;
};

std::string PostprocessForSpeech(std::string_view llm_text,
                                 const std::map<std::string, std::string>& slots,
                                 const SpeechConfig& config = {});

class SpeechStream {
 public:
  explicit SpeechStream(SpeechConfig config = {}, std::map<std::string, std::string> slots = {});

  // Appends streamed text (split anywhere); returns the spoken sentences that became final.
  std::vector<std::string> Push(std::string_view delta);
  // End of the stream: the remaining spoken sentences.
  std::vector<std::string> Finish();
  // True once max_sentences or max_chars is reached: later text would be dropped, so the
  // producer may stop generating.
  bool full() const { return full_; }
  // The spoken sentences so far, joined by single spaces.
  const std::string& spoken() const { return spoken_; }

 private:
  void Drain(bool eof, std::vector<std::string>& out);
  void Accept(std::string sentence, std::vector<std::string>& out);
  // The first clause of the unfinished first sentence, when it may be spoken now.
  void EarlyClause(const std::string& provisional, std::vector<std::string>& out);

  SpeechConfig config_;
  std::map<std::string, std::string> slots_;
  std::string raw_;
  size_t consumed_ = 0;  // sentences of the stripped raw text already handled
  int kept_ = 0;
  bool full_ = false;
  std::string spoken_;
  std::string early_;  // the first sentence's clause already returned, "" when none
};

// Splits already speakable text (a knowledge-base article, a template answer) into sentences at
// '.', '!' or '?' followed by white space, and at Chinese 。！？; trimmed, never empty, joined by spaces they give the
// text back (up to white space).
std::vector<std::string> SplitSentences(std::string_view text);

}  // namespace hotline::answer
