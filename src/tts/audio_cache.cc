#include "tts/audio_cache.h"

namespace hotline::tts {
namespace {
constexpr int64_t kEntryOverheadBytes = 128;  // list node, map node, control block
}

Status AudioCacheConfig::Validate() const {
  if (max_bytes < 0) return InvalidArgumentError("max_bytes must be >= 0 (0 disables the cache)");
  if (max_entry_bytes < 1) return InvalidArgumentError("max_entry_bytes must be >= 1");
  return Status::Ok();
}

AudioCache::AudioCache(AudioCacheConfig config) : config_(config) {}

std::string AudioCache::Key(std::string_view voice_id, std::string_view text) {
  std::string key;
  key.reserve(voice_id.size() + 1 + text.size());
  key.append(voice_id);
  key.push_back('\0');  // cannot occur in a voice id, so keys never collide
  key.append(text);
  return key;
}

SharedAudio AudioCache::Lookup(std::string_view voice_id, std::string_view text) {
  std::string key = Key(voice_id, text);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) {
    ++stats_.misses;
    return nullptr;
  }
  ++stats_.hits;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->audio;
}

bool AudioCache::Insert(std::string_view voice_id, std::string_view text, SharedAudio audio) {
  if (audio == nullptr) return false;
  std::string key = Key(voice_id, text);
  int64_t bytes = static_cast<int64_t>(audio->samples.size() * sizeof(int16_t) + key.size()) +
                  kEntryOverheadBytes;
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes > config_.max_entry_bytes || bytes > config_.max_bytes) {
    ++stats_.rejected_too_large;
    return false;
  }
  if (auto it = index_.find(key); it != index_.end()) {
    stats_.bytes -= it->second->bytes;
    lru_.erase(it->second);
    index_.erase(it);
  }
  lru_.push_front(Entry{key, std::move(audio), bytes});
  index_.emplace(std::move(key), lru_.begin());
  stats_.bytes += bytes;
  ++stats_.insertions;
  EvictLocked();
  stats_.entries = static_cast<int64_t>(lru_.size());
  return true;
}

void AudioCache::EvictLocked() {
  while (stats_.bytes > config_.max_bytes && !lru_.empty()) {
    Entry& victim = lru_.back();
    stats_.bytes -= victim.bytes;
    index_.erase(victim.key);
    lru_.pop_back();
    ++stats_.evictions;
  }
}

void AudioCache::Erase(std::string_view voice_id, std::string_view text) {
  std::string key = Key(voice_id, text);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return;
  stats_.bytes -= it->second->bytes;
  lru_.erase(it->second);
  index_.erase(it);
  stats_.entries = static_cast<int64_t>(lru_.size());
}

void AudioCache::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  lru_.clear();
  index_.clear();
  stats_.bytes = 0;
  stats_.entries = 0;
}

AudioCacheStats AudioCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

Result<SharedAudio> SynthesizeCached(AudioCache& cache, Synthesizer& synth, std::string_view text,
                                     const CancelToken* cancel) {
  if (SharedAudio hit = cache.Lookup(synth.voice_id(), text)) return hit;
  ASSIGN_OR_RETURN(audio::AudioBuffer audio, SynthesizeToBuffer(synth, text, cancel));
  auto shared = std::make_shared<const audio::AudioBuffer>(std::move(audio));
  cache.Insert(synth.voice_id(), text, shared);
  return shared;
}

}  // namespace hotline::tts
