// ResultCache: the L3 tier, exact normalized question -> answer text (+ synthesized audio).
//
// Entries live in a Store (in-process or Redis, so every process shares them) under
// key_prefix + a 64-bit hash of the question; the question itself is stored in the entry and
// compared on lookup, so a hash collision is a miss, never a wrong answer.
//
// Invalidation: an entry lists the version stamps it depends on (for example "kb:article:42" for
// each knowledge-base article its answer was built from) and records their values at insert
// time; a lookup that finds any stamp moved treats the entry as a miss and deletes it. Bumping a
// stamp (Invalidate) therefore drops every dependent answer at once, in every process.
//
// Personal data: an entry flagged personal is refused (Insert returns FailedPrecondition). The
// cache is shared between callers; answers that carry one caller's data are composed per call.
//
// Thread-safety: thread-safe (the Store is). Blocking: as the Store (RedisStore may block on the
// network up to its timeouts). Entries are parsed defensively: a malformed value (another version
// of Hotline, corruption) is a miss, never a crash.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "answer/cache/store.h"
#include "common/status.h"

namespace hotline::answer {

struct ResultCacheConfig {
  // How long an answer is served without being regenerated. Longer saves more LLM calls; shorter
  // picks up changes that are not tracked by version stamps sooner.
  int ttl_ms = 5 * 60 * 1000;
  // Longest question cached (bytes of normalized text); longer questions are rarely repeated.
  int max_question_bytes = 512;
  // Largest answer text and audio accepted; larger ones are not cached (spoken answers are short).
  int max_text_bytes = 4096;
  int max_audio_bytes = 2 << 20;
  // Store key prefix, so L3 shares a store with other caches without collisions.
  std::string key_prefix = "l3:";

  template <class V>
  void Visit(V& v) {
    v.Field("ttl_ms", ttl_ms, "L3 result cache time to live");
    v.Field("max_question_bytes", max_question_bytes, "Longest normalized question cached in L3");
    v.Field("max_text_bytes", max_text_bytes, "Largest answer text cached in L3");
    v.Field("max_audio_bytes", max_audio_bytes, "Largest synthesized audio cached in L3");
    v.Field("key_prefix", key_prefix, "Store key prefix of L3 entries");
  }
  Status Validate() const;
};

struct CachedAnswer {
  std::string text;          // what is spoken
  std::string audio;         // synthesized audio of `text` (may be empty)
  std::string audio_format;  // e.g. "s16le/16000" (empty when no audio)
  std::string source;        // tier that produced the answer originally ("kb", "llm")
  std::vector<std::string> depends_on;  // version stamps this answer depends on
  bool personal = false;     // carries a caller's data: never cached (Insert refuses)
};

class ResultCache {
 public:
  // `store` must outlive the cache. Config must be valid (see Validate()).
  ResultCache(Store& store, ResultCacheConfig config);

  // The cached answer of `normalized_question`, or nullopt (absent, expired, stale stamps,
  // malformed entry, question too long). Errors only from the store (invalid key).
  Result<std::optional<CachedAnswer>> Lookup(std::string_view normalized_question);

  // Values of `answer.depends_on` now. Read them BEFORE building an answer and pass them to
  // Insert: an update that lands while the answer is being generated then makes it a miss.
  Result<std::vector<uint64_t>> Snapshot(const std::vector<std::string>& stamps);

  // Caches `answer` for the question with the stamp values in `snapshot` (from Snapshot(); when
  // null, the current values are read). Refuses personal answers (FailedPrecondition) and
  // oversized ones (ResourceExhausted); the caller can ignore those errors: nothing is stored.
  Status Insert(std::string_view normalized_question, const CachedAnswer& answer,
                const std::vector<uint64_t>* snapshot = nullptr);

  // Bumps `stamp`: every entry depending on it becomes a miss, in every process sharing the store.
  Status Invalidate(std::string_view stamp);

  Status Erase(std::string_view normalized_question);

  // Entry encoding (exposed for tests of malformed input).
  static std::string Encode(std::string_view question, const CachedAnswer& answer,
                            const std::vector<uint64_t>& versions);
  struct Decoded {
    std::string question;
    CachedAnswer answer;
    std::vector<uint64_t> versions;
  };
  static std::optional<Decoded> Decode(std::string_view bytes);

 private:
  std::string KeyFor(std::string_view question) const;

  Store& store_;
  ResultCacheConfig config_;
};

}  // namespace hotline::answer
