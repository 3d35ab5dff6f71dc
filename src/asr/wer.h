// Word error rate: the edit distance between a reference and a hypothesis transcript, in words.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hotline::asr {

struct WerCounts {
  int substitutions = 0;
  int deletions = 0;
  int insertions = 0;
  int reference_words = 0;
  int errors() const { return substitutions + deletions + insertions; }
  // errors / reference words (0 when both are empty; 1 per inserted word when the reference is).
  double rate() const;
  WerCounts& operator+=(const WerCounts& o);
};

// Splits on ASCII whitespace. No other normalization: compare texts normalized alike.
std::vector<std::string> SplitWords(std::string_view text);

// Scoring normalization applied to both sides before ComputeWer, as common ASR evaluations do:
// lower-cased words, English contractions expanded ("i'm" -> "i am", "don't" -> "do not",
// "can't" -> "can not"), so that a recognizer is not charged for writing the same spoken words
// another way. Words are expected already normalized to the recognizer's alphabet
// (NormalizeTranscriptText).
std::string NormalizeForScoring(std::string_view text);

// Minimum-edit alignment of the two word sequences. O(|ref| * |hyp|) time and O(|hyp|) memory.
WerCounts ComputeWer(const std::vector<std::string>& reference,
                     const std::vector<std::string>& hypothesis);
WerCounts ComputeWer(std::string_view reference, std::string_view hypothesis);

}  // namespace hotline::asr
