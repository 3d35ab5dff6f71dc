// Helpers shared by the fuzz targets: splitting one fuzz input into the messages or reads a parser
// sees on a real connection, and a check that fails loudly in every build.
//
// Every target defines LLVMFuzzerTestOneInput(data, size). Built with clang and
// -fsanitize=fuzzer (build-fuzz/, scripts/fuzz) libFuzzer drives it; in the normal build
// replay_main.cc feeds it each file of the target's corpus (CTest fuzz_<name>_corpus).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "common/log.h"

namespace hotline::fuzz {

// A property of the parser under test that must hold for every input. Aborts (a crash libFuzzer
// keeps as a reproducer) with the condition and place when it does not.
#define HOTLINE_FUZZ_CHECK(cond)                                                            \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "%s:%d: fuzz property failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                         \
    }                                                                                       \
  } while (0)

// Logs at every level into a sink that drops them: log statements on the parsers' error paths
// still format (and redact) their untrusted arguments, without slowing the run with output.
inline void DiscardLogs() {
  static const bool done = [] {
    InitLogging("trace");
    SetLogSinkForTest([](std::string_view) {});
    return true;
  }();
  (void)done;
}

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// Message boundary in the inputs of message-based targets (Twilio, softphone): a line holding
// only "%%". Seed files stay readable, and libFuzzer learns the separator from the comparisons.
inline constexpr std::string_view kMessageSeparator = "\n%%\n";

// The messages of `input`, split at every kMessageSeparator (empty messages included).
inline std::vector<std::string_view> SplitMessages(std::string_view input) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t at = input.find(kMessageSeparator, start);
    if (at == std::string_view::npos) {
      out.push_back(input.substr(start));
      return out;
    }
    out.push_back(input.substr(start, at - start));
    start = at + kMessageSeparator.size();
  }
}

// Splits a byte stream into the pieces successive socket reads would return. The first byte of
// the input chooses the pattern (so the fuzzer explores splits too); the rest is the stream.
// Piece sizes cycle through 1..(pattern+1) bytes: every header and payload boundary gets cut.
class StreamChunker {
 public:
  StreamChunker(const uint8_t* data, size_t size) {
    if (size == 0) return;
    max_piece_ = static_cast<size_t>(data[0]) + 1;
    stream_ = AsText(data + 1, size - 1);
  }
  std::string_view stream() const { return stream_; }
  // The next piece, empty at the end.
  std::string_view Next() {
    const size_t n = std::min(stream_.size() - pos_, piece_);
    std::string_view piece = stream_.substr(pos_, n);
    pos_ += n;
    piece_ = piece_ % max_piece_ + 1;
    return piece;
  }

 private:
  std::string_view stream_;
  size_t pos_ = 0;
  size_t piece_ = 1;
  size_t max_piece_ = 1;
};

}  // namespace hotline::fuzz
