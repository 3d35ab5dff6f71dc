// TurnEndModel: how likely a caller's question is over after the words heard so far, learned from
// question corpora (the lexical half of the end-of-turn decision, asr/turn_detector.h).
//
// Training counts, for every word position of every training question, the n-gram context that
// ends there (the last 1..order words, normalized as the domain language model normalizes text:
// asr::LmWords) and whether the question ends at that position. The end probability of a context
// is its end count smoothed towards the shorter context's probability (Bayesian smoothing with
// weight `alpha`: p_k = (ends_k + alpha p_{k-1}) / (total_k + alpha)), down to the share of
// question ends among all word positions. So "a copy of" (never an end) scores near 0, "my
// invoice" high, and an unseen last word falls back to the prior (unsure). Contexts seen fewer
// than `min_count` times are dropped to keep the model small.
//
// File (text, written by Save, read by Load): "hotline-turn-end-model 1", then "#" comment lines
// (provenance), "order N", "alpha A", then one context per line: "<ends>\t<total>\t<words>" (the
// empty context, all positions, comes first). Load bounds and validates every line.
//
// Thread-safety: immutable after Train/Load; EndProbability() is const and safe from any thread.
// EndProbability() allocates a little (the words of the partial); call it per partial, not per
// audio frame.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"

namespace hotline::asr {

struct TurnEndModelOptions {
  // Longest context (words). 3 sees "copy of my"; longer needs more data per context.
  int order = 3;
  // Contexts seen fewer times are dropped (size against detail).
  int min_count = 2;
  // Smoothing weight towards the shorter context. Larger trusts rare contexts less.
  double alpha = 2.0;
};

class TurnEndModel {
 public:
  // Learns from questions (raw text; normalized here). InvalidArgument when nothing usable.
  static Result<TurnEndModel> Train(const std::vector<std::string>& questions,
                                    const TurnEndModelOptions& options = {});
  // Reads a model file (at most 64 MiB). NotFound / DataLoss with the line at fault.
  static Result<TurnEndModel> Load(const std::string& path);
  static Result<TurnEndModel> Parse(std::string_view text, const std::string& source);

  // Writes the model with `provenance` as comment lines (one per '\n'-separated line).
  Status Save(const std::string& path, const std::string& provenance) const;
  std::string Serialize(const std::string& provenance) const;

  // Probability in (0, 1) that a question is over after `text` (a partial transcript or any
  // text; normalized like the training questions). Empty text gives the prior.
  double EndProbability(std::string_view text) const;
  double EndProbabilityOfWords(std::span<const std::string> words) const;

  double prior() const;
  int order() const { return order_; }
  size_t contexts() const { return table_.size(); }
  int64_t questions() const { return questions_; }

 private:
  struct Counts {
    uint32_t ends = 0;
    uint32_t total = 0;
  };
  int order_ = 3;
  double alpha_ = 2.0;
  int64_t questions_ = 0;  // training questions (informational; from the all-positions ends)
  std::unordered_map<std::string, Counts> table_;  // key: words joined by ' '; "" = all positions
};

}  // namespace hotline::asr
