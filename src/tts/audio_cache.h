// AudioCache: synthesized phrases kept ready to play, keyed by (voice, normalized text).
//
// Answer-cache hits, greetings and fixed prompts ("Please hold while I check that.") repeat
// across calls; playing cached audio skips synthesis entirely. Entries are immutable buffers
// shared by pointer, so a hit costs one map lookup and no copy, and an entry evicted while a call
// still plays it stays alive until that call drops it.
//
// Bounds: total bytes (samples + key + bookkeeping) never exceed max_bytes; least recently used
// entries are evicted first; entries above max_entry_bytes are not stored.
// Thread-safety: all methods may be called from any thread (one mutex, held only for map and
// list updates, never during synthesis).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "audio/pcm.h"
#include "common/status.h"
#include "tts/synthesizer.h"

namespace hotline::tts {

struct AudioCacheConfig {
  // Memory for cached audio. 64 MiB holds ~35 minutes of 16 kHz speech: thousands of phrases.
  int64_t max_bytes = 64ll << 20;
  // Largest single entry; longer answers are synthesized each time rather than crowding out
  // many short phrases. 2 MiB is ~65 s at 16 kHz.
  int64_t max_entry_bytes = 2ll << 20;

  template <class V>
  void Visit(V& v) {
    v.Field("max_bytes", max_bytes, "Memory for cached synthesized audio (bytes)");
    v.Field("max_entry_bytes", max_entry_bytes, "Largest single cached phrase (bytes)");
  }
  Status Validate() const;
};

struct AudioCacheStats {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t insertions = 0;
  int64_t evictions = 0;
  int64_t rejected_too_large = 0;
  int64_t entries = 0;
  int64_t bytes = 0;
};

using SharedAudio = std::shared_ptr<const audio::AudioBuffer>;

class AudioCache {
 public:
  explicit AudioCache(AudioCacheConfig config = {});
  AudioCache(const AudioCache&) = delete;
  AudioCache& operator=(const AudioCache&) = delete;

  // The cached audio, or nullptr. A hit makes the entry most recently used.
  SharedAudio Lookup(std::string_view voice_id, std::string_view text);
  // Stores `audio` (replacing an entry with the same key) and evicts as needed. Returns false when
  // the entry alone exceeds max_entry_bytes or max_bytes (not stored).
  bool Insert(std::string_view voice_id, std::string_view text, SharedAudio audio);
  void Erase(std::string_view voice_id, std::string_view text);
  void Clear();

  AudioCacheStats stats() const;
  const AudioCacheConfig& config() const { return config_; }

 private:
  struct Entry {
    std::string key;
    SharedAudio audio;
    int64_t bytes = 0;
  };
  static std::string Key(std::string_view voice_id, std::string_view text);
  void EvictLocked();

  AudioCacheConfig config_;
  mutable std::mutex mu_;
  std::list<Entry> lru_;  // front: most recently used
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  AudioCacheStats stats_;
};

// Cache-through synthesis: returns the cached audio for (synth.voice_id(), text) or synthesizes
// it whole, stores it and returns it. `text` should already be normalized. Concurrent misses for
// the same key may both synthesize (the last insert wins); that is cheaper than holding a lock
// across synthesis.
Result<SharedAudio> SynthesizeCached(AudioCache& cache, Synthesizer& synth, std::string_view text,
                                     const CancelToken* cancel = nullptr);

}  // namespace hotline::tts
