// Synthesized questions kept on disk between benchmark runs: one WAV file per voice and text,
// `DIR/<voice id with '/' as '_'>/<16 hex digits of a 64-bit FNV-1a hash of voice id and
// text>.wav`. A file that cannot be read is synthesized again and replaced; files are written to a
// temporary name and renamed, so an interrupted run leaves no half-written entry.
//
// Thread-safety: one SpeechCache per thread (files are the only shared state, and renames are
// atomic). Blocking: disk and synthesis.
#pragma once

#include <string>

#include "audio/pcm.h"
#include "common/status.h"
#include "tts/synthesizer.h"

namespace hotline::eval {

class SpeechCache {
 public:
  // `dir` "" keeps nothing (every Get synthesizes).
  explicit SpeechCache(std::string dir) : dir_(std::move(dir)) {}

  // The speech of `text` in `synth`'s voice, from the cache or synthesized (and stored).
  Result<audio::AudioBuffer> Get(tts::Synthesizer& synth, const std::string& text);

  size_t hits() const { return hits_; }
  size_t misses() const { return misses_; }
  // The file an entry lives in (for tests).
  std::string PathFor(const std::string& voice_id, const std::string& text) const;

 private:
  std::string dir_;
  size_t hits_ = 0;
  size_t misses_ = 0;
};

}  // namespace hotline::eval
