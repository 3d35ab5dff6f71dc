// Drafts for speculative decoding: guesses of a sequence's next tokens that cost no model pass.
//
// Answers copy: a grounded answer repeats phrases of the passages in its prompt, and a call
// centre's model says the same sentences to caller after caller. So the next tokens are often
// the ones that followed the sequence's last few tokens somewhere it has already seen:
//
//   - prompt lookup (DraftFromContext): the longest suffix of the sequence (ngram_max tokens
//     down to ngram_min) that occurred earlier in the same sequence (prompt or answer so far);
//     the tokens that followed its latest earlier occurrence are the draft;
//   - the answer n-gram cache (AnswerNgramCache): the same lookup in the recent answers of every
//     call on this engine, for what the prompt does not hold.
//
// The scheduler feeds the draft behind the sequence's next token in one forward pass and keeps
// the drafted tokens only as far as they equal what the model itself picks (batch_scheduler.h),
// so a draft can only save passes, never change the output.
//
// Threads: pure functions; an AnswerNgramCache belongs to one thread (the scheduler's).
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <unordered_map>
#include <vector>

namespace hotline::engine {

struct DraftConfig {
  int ngram_min = 2;
  int ngram_max = 4;
};

// Appends to `out` up to `max_tokens` tokens that followed the latest earlier occurrence of the
// longest suffix of `context` (between ngram_max and ngram_min tokens long) inside `context`.
// Returns how many were appended (0: no earlier occurrence, or max_tokens <= 0); `matched`, when
// given, receives the suffix's length (0 when nothing was appended).
int DraftFromContext(std::span<const int32_t> context, const DraftConfig& config, int max_tokens,
                     std::vector<int32_t>* out, int* matched = nullptr);

// The recent answers of an engine, indexed by their n-grams (ngram_min..ngram_max tokens), and
// bounded by `capacity_tokens` in all: the oldest answers go first.
class AnswerNgramCache {
 public:
  AnswerNgramCache(const DraftConfig& config, int capacity_tokens);

  // Remembers one answer (its generated tokens). Answers shorter than ngram_min + 1 tokens, or
  // longer than the whole capacity, are ignored.
  void Add(std::span<const int32_t> answer);
  // As DraftFromContext, with the cached answers in place of the context: the longest suffix of
  // `context` found in a cached answer (the most recent one holding it) and what followed it.
  int Draft(std::span<const int32_t> context, int max_tokens, std::vector<int32_t>* out,
            int* matched = nullptr) const;

  int answers() const { return static_cast<int>(answers_.size()); }
  int64_t tokens() const { return tokens_; }

 private:
  struct Where {
    uint64_t answer = 0;  // serial number of the answer
    int end = 0;          // index just past the n-gram in that answer
  };
  static uint64_t Hash(std::span<const int32_t> ngram);
  const std::vector<int32_t>* Find(uint64_t serial) const;
  void Evict();

  DraftConfig config_;
  int64_t capacity_ = 0;
  int64_t tokens_ = 0;
  uint64_t first_serial_ = 0;  // serial of answers_.front()
  std::deque<std::vector<int32_t>> answers_;
  // Hash of an n-gram (any length in [ngram_min, ngram_max]) -> its latest occurrence.
  std::unordered_map<uint64_t, Where> index_;
};

// Whether drafts pay on this machine and model, learned from the passes themselves. Drafts cost
// compute: on a model small enough to be compute-bound (or a batch large enough), verifying
// four guesses costs nearly four passes, and even accepted guesses lose. So the scheduler times
// its decode-only passes, per number of decoding sequences, with and without drafts, as
// milliseconds per token handed out (an exponential average), and drafts only where that is
// lower with them. It gathers a few passes of each kind first, and then every 32nd pass of a
// size tries the kind it is not choosing, so a change (longer contexts, other answers) is seen.
class SpeculationGovernor {
 public:
  // Sizes 1..max_sequences are tracked; larger passes never draft.
  explicit SpeculationGovernor(int max_sequences);
  // Whether a decode pass of `sequences` decoding sequences should draft. Counts the pass.
  bool Choose(int sequences);
  // A decode-only pass of `sequences` took `ms` and handed out `tokens`; `drafted` says whether
  // any draft was in it.
  void Record(int sequences, bool drafted, double ms, int tokens);
  // Milliseconds per token of each kind for that size (0 = not measured yet).
  double plain_ms_per_token(int sequences) const;
  double draft_ms_per_token(int sequences) const;

 private:
  struct Size {
    double plain = 0, draft = 0;  // ms per token, averaged
    int plain_n = 0, draft_n = 0;
    uint64_t passes = 0;
  };
  std::vector<Size> sizes_;
};

}  // namespace hotline::engine
