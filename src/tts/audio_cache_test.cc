#include "tts/audio_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace hotline::tts {
namespace {

SharedAudio Audio(size_t samples, int16_t value = 1) {
  return std::make_shared<const audio::AudioBuffer>(std::vector<int16_t>(samples, value), 16000);
}

// Counts syntheses; produces `text.size()` samples of 7.
class CountingSynthesizer : public Synthesizer {
 public:
  std::string_view backend() const override { return "counting"; }
  const std::string& voice_id() const override { return id_; }
  int sample_rate_hz() const override { return 16000; }
  Status Synthesize(std::string_view text, const AudioChunkCallback& on_chunk,
                    const CancelToken* cancel) override {
    ++calls;
    if (IsCancelled(cancel)) return CancelledError("cancelled");
    std::vector<int16_t> s(text.size(), 7);
    return on_chunk(s);
  }
  std::atomic<int> calls{0};

 private:
  std::string id_ = "test/voice";
};

TEST(AudioCache, HitMissAndKeyIncludesTheVoice) {
  AudioCache cache;
  EXPECT_EQ(cache.Lookup("flite/slt", "Hello."), nullptr);
  ASSERT_TRUE(cache.Insert("flite/slt", "Hello.", Audio(100)));
  auto hit = cache.Lookup("flite/slt", "Hello.");
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->size(), 100u);
  EXPECT_EQ(cache.Lookup("flite/kal", "Hello."), nullptr);
  EXPECT_EQ(cache.Lookup("flite/slt", "Hello"), nullptr);
  auto st = cache.stats();
  EXPECT_EQ(st.hits, 1);
  EXPECT_EQ(st.misses, 3);
  EXPECT_EQ(st.entries, 1);
}

TEST(AudioCache, EvictsLeastRecentlyUsedWithinTheByteBound) {
  AudioCacheConfig cfg;
  cfg.max_bytes = 3 * (2000 + 200);  // room for three 1000-sample entries
  AudioCache cache(cfg);
  ASSERT_TRUE(cache.Insert("v", "a", Audio(1000)));
  ASSERT_TRUE(cache.Insert("v", "b", Audio(1000)));
  ASSERT_TRUE(cache.Insert("v", "c", Audio(1000)));
  ASSERT_NE(cache.Lookup("v", "a"), nullptr);  // a is now the most recent
  ASSERT_TRUE(cache.Insert("v", "d", Audio(1000)));
  EXPECT_EQ(cache.Lookup("v", "b"), nullptr);  // b was least recently used
  EXPECT_NE(cache.Lookup("v", "a"), nullptr);
  EXPECT_NE(cache.Lookup("v", "c"), nullptr);
  EXPECT_NE(cache.Lookup("v", "d"), nullptr);
  auto st = cache.stats();
  EXPECT_LE(st.bytes, cfg.max_bytes);
  EXPECT_EQ(st.evictions, 1);
}

TEST(AudioCache, TooLargeReplaceEraseClear) {
  AudioCacheConfig cfg;
  cfg.max_entry_bytes = 1000;
  AudioCache cache(cfg);
  EXPECT_FALSE(cache.Insert("v", "long", Audio(1000)));
  EXPECT_EQ(cache.stats().rejected_too_large, 1);
  EXPECT_FALSE(cache.Insert("v", "null", nullptr));
  ASSERT_TRUE(cache.Insert("v", "x", Audio(10, 1)));
  ASSERT_TRUE(cache.Insert("v", "x", Audio(20, 2)));
  EXPECT_EQ(cache.Lookup("v", "x")->size(), 20u);
  EXPECT_EQ(cache.stats().entries, 1);
  cache.Erase("v", "x");
  EXPECT_EQ(cache.Lookup("v", "x"), nullptr);
  ASSERT_TRUE(cache.Insert("v", "y", Audio(10)));
  cache.Clear();
  EXPECT_EQ(cache.stats().bytes, 0);
  EXPECT_EQ(cache.Lookup("v", "y"), nullptr);
}

TEST(AudioCache, EvictedAudioStaysAliveWhilePlaying) {
  AudioCacheConfig cfg;
  cfg.max_bytes = 2500;
  AudioCache cache(cfg);
  ASSERT_TRUE(cache.Insert("v", "a", Audio(1000, 5)));
  SharedAudio playing = cache.Lookup("v", "a");
  ASSERT_TRUE(cache.Insert("v", "b", Audio(1000)));  // evicts a
  EXPECT_EQ(cache.Lookup("v", "a"), nullptr);
  EXPECT_EQ(playing->samples[999], 5);
}

TEST(AudioCache, SynthesizeCachedSynthesizesOnce) {
  AudioCache cache;
  CountingSynthesizer synth;
  auto a = SynthesizeCached(cache, synth, "Please hold.");
  auto b = SynthesizeCached(cache, synth, "Please hold.");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  EXPECT_EQ(synth.calls.load(), 1);
  CancelToken cancel;
  cancel.Cancel();
  EXPECT_EQ(SynthesizeCached(cache, synth, "Other.", &cancel).status().code(), StatusCode::kCancelled);
  EXPECT_EQ(cache.Lookup(synth.voice_id(), "Other."), nullptr);  // failures are not cached
}

TEST(AudioCache, ConcurrentUseKeepsTheBound) {
  AudioCacheConfig cfg;
  cfg.max_bytes = 50000;
  AudioCache cache(cfg);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        std::string key = std::to_string((i * 7 + t) % 64);
        if (!cache.Lookup("v", key)) cache.Insert("v", key, Audio(100 + static_cast<size_t>(i % 50)));
      }
    });
  }
  for (auto& th : threads) th.join();
  auto st = cache.stats();
  EXPECT_LE(st.bytes, cfg.max_bytes);
  EXPECT_EQ(st.hits + st.misses, 8000);
}

}  // namespace
}  // namespace hotline::tts
