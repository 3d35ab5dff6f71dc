// StopMatcher: cuts a stream of generated text at the first occurrence of any stop string,
// across chunk boundaries. Text that might be the beginning of a stop string is held back until
// the next chunk decides it; everything else is released at once, so a caller streaming to TTS
// is delayed by at most (longest stop string - 1) bytes, and only while a stop string may be
// starting.
//
// Usage (the generation loop, after the StreamingDetokenizer):
//   StopMatcher stop({"\nUser:", "</answer>"});
//   StopMatcher::Output o = stop.Push(chunk);   // o.text may be sent; o.stopped ends generation
//   at the end (max_tokens, EOS): text += stop.Flush();
//
// Matching is on bytes. Chunks must be whole UTF-8 characters (what the detokenizer emits) for
// the held-back text to end on a character boundary. Empty stop strings are rejected.
//
// Threads: one instance per sequence, used from one thread at a time. Holds at most
// max(stop length) - 1 bytes between calls.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace hotline::engine {

class StopMatcher {
 public:
  // At most this many stop strings, each at most kMaxStopBytes (bounds the work per chunk).
  static constexpr size_t kMaxStops = 64;
  static constexpr size_t kMaxStopBytes = 256;

  // InvalidArgument for an empty string or past the limits.
  static Result<StopMatcher> Create(std::vector<std::string> stops);

  struct Output {
    std::string text;      // safe to emit now
    bool stopped = false;  // a stop string was found; `text` ends just before it
  };
  // After `stopped`, further pushes return nothing.
  Output Push(std::string_view chunk);
  // End of stream: the held-back text (which did not become a stop string).
  std::string Flush();

  bool stopped() const { return stopped_; }
  // The stop string that matched (empty until stopped).
  const std::string& matched() const { return matched_; }

 private:
  explicit StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
  std::string matched_;
};

}  // namespace hotline::engine
