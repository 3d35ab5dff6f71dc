// Speaker on its own: text to whole encoded frames, the audio cache only after Commit, the lead
// trim, resampling to the line, cancellation and the padded last frame.
#include "pipeline/speaker.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "audio/g711.h"
#include "pipeline/testing/fakes.h"

namespace hotline::pipeline {
namespace {

using testing::FakeSynthesizer;

class SpeakerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Speaker> Make(SpeakerOptions options = {}, bool with_cache = true) {
    auto s = Speaker::Create(options, std::make_unique<FakeSynthesizer>(voice_),
                             tts::TextNormalizer(), with_cache ? &cache_ : nullptr);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? std::move(*s) : nullptr;
  }
  // An output that keeps every frame and counts the stamps.
  Speaker::Output Collect() {
    Speaker::Output out;
    out.frames = [this](std::deque<Playout::Frame> frames) {
      for (auto& f : frames) frames_.push_back(std::move(f));
      return Status::Ok();
    };
    out.speaking = [this] { ++speaking_; };
    out.first_audio = [this] { ++first_audio_; };
    return out;
  }
  size_t Syntheses() {
    std::lock_guard lock(voice_->mu);
    return voice_->texts.size();
  }

  std::shared_ptr<FakeSynthesizer::Shared> voice_ = std::make_shared<FakeSynthesizer::Shared>();
  tts::AudioCache cache_;
  std::vector<Playout::Frame> frames_;
  int speaking_ = 0;
  int first_audio_ = 0;
  CancelToken token_;
};

TEST_F(SpeakerTest, SpeaksWholeMulawFramesOutputChunkByOutputChunk) {
  SpeakerOptions options;
  options.output_chunk_ms = 40;
  auto speaker = Make(options);
  ASSERT_NE(speaker, nullptr);
  const Speaker::Output out = Collect();
  // 5 characters at 10 ms each, in 20 ms pieces: 60 ms of tone, one 40 ms chunk handed on.
  ASSERT_TRUE(speaker->Say("Hello", token_, out).ok());
  EXPECT_EQ(frames_.size(), 2u);
  ASSERT_TRUE(speaker->Finish(token_, out).ok());  // the rest at the end of the turn
  ASSERT_EQ(frames_.size(), 3u);
  for (const auto& f : frames_) {
    EXPECT_EQ(f.bytes.size(), 160u);  // 20 ms of μ-law at 8 kHz
    EXPECT_GT(f.level_dbfs, -60.0f);
  }
  std::vector<int16_t> pcm(160);
  audio::DecodeMulaw(frames_[0].bytes, pcm);
  EXPECT_NEAR(std::abs(pcm[0]), 300, 20);
  EXPECT_EQ(speaking_, 1);
  EXPECT_EQ(first_audio_, 1);
  EXPECT_TRUE(speaker->Say("   ", token_, out).ok());  // nothing to say: no stamp
  EXPECT_EQ(speaking_, 1);
}

TEST_F(SpeakerTest, TheAudioCacheGetsATurnOnlyWhenItIsCommittedAsShareable) {
  auto speaker = Make();
  ASSERT_NE(speaker, nullptr);
  const Speaker::Output out = Collect();
  ASSERT_TRUE(speaker->Say("Your balance is ten dollars.", token_, out).ok());
  ASSERT_TRUE(speaker->Finish(token_, out).ok());
  speaker->Commit(/*shareable=*/false);  // the caller's own data
  EXPECT_EQ(cache_.stats().entries, 0);
  frames_.clear();
  ASSERT_TRUE(speaker->Say("Orders ship in two days.", token_, out).ok());
  ASSERT_TRUE(speaker->Finish(token_, out).ok());
  speaker->Commit(/*shareable=*/true);
  EXPECT_EQ(cache_.stats().entries, 1);
  const size_t synthesized = frames_.size();
  const size_t before = Syntheses();
  frames_.clear();
  ASSERT_TRUE(speaker->Say("Orders ship in two days.", token_, out).ok());  // from the cache
  ASSERT_TRUE(speaker->Finish(token_, out).ok());
  EXPECT_EQ(Syntheses(), before);
  EXPECT_EQ(frames_.size(), synthesized);  // the same audio again
  EXPECT_EQ(cache_.stats().hits, 1);
}

TEST_F(SpeakerTest, ATurnsLeadingQuietIsDroppedUpToItsLimit) {
  voice_->lead_silence_ms = 200;
  SpeakerOptions trim;
  trim.lead_trim_max_ms = 400;
  auto trimmed = Make(trim, /*with_cache=*/false);
  SpeakerOptions keep;
  keep.lead_trim_max_ms = 0;
  auto kept = Make(keep, /*with_cache=*/false);
  ASSERT_TRUE(trimmed && kept);
  const Speaker::Output out = Collect();
  ASSERT_TRUE(trimmed->Say("Hi there", token_, out).ok());
  ASSERT_TRUE(trimmed->Finish(token_, out).ok());
  const size_t with_trim = frames_.size();
  frames_.clear();
  ASSERT_TRUE(kept->Say("Hi there", token_, out).ok());
  ASSERT_TRUE(kept->Finish(token_, out).ok());
  // 200 ms of digital silence is 10 frames; the trim keeps 5 ms of onset.
  EXPECT_EQ(frames_.size(), with_trim + 10);
  EXPECT_LT(frames_.front().level_dbfs, -100.0f);
}

TEST_F(SpeakerTest, ResamplesToTheLineAndEncodesItsCodec) {
  SpeakerOptions wide;
  wide.codec = audio::Codec::kPcm16;
  wide.line_rate_hz = 16000;
  wide.output_chunk_ms = 40;
  auto speaker = Make(wide, /*with_cache=*/false);
  ASSERT_NE(speaker, nullptr);
  size_t batches = 0;
  Speaker::Output out = Collect();
  out.frames = [&](std::deque<Playout::Frame> frames) {
    ++batches;
    EXPECT_EQ(frames.size(), 2u);  // output_chunk_ms: two 20 ms frames at a time
    for (auto& f : frames) frames_.push_back(std::move(f));
    return Status::Ok();
  };
  ASSERT_TRUE(speaker->Say("Good morning", token_, out).ok());  // 120 ms at 8 kHz
  EXPECT_GE(batches, 2u);
  out.frames = [&](std::deque<Playout::Frame> frames) {
    for (auto& f : frames) frames_.push_back(std::move(f));
    return Status::Ok();
  };
  ASSERT_TRUE(speaker->Finish(token_, out).ok());                 // the resampler's tail, padded
  for (const auto& f : frames_) EXPECT_EQ(f.bytes.size(), 640u);  // 20 ms of PCM16 at 16 kHz
  EXPECT_GE(frames_.size(), 6u);                                  // all 120 ms of it
  EXPECT_LE(frames_.size(), 8u);
}

TEST_F(SpeakerTest, ACancelledTurnOrARefusingOutputStopsThePiece) {
  auto speaker = Make();
  ASSERT_NE(speaker, nullptr);
  Speaker::Output out = Collect();
  out.frames = [&](std::deque<Playout::Frame>) -> Status {
    token_.Cancel();  // a barge-in while the first frames go out
    return CancelledError("speech cancelled");
  };
  const Status s = speaker->Say("A long answer that would take a while to say.", token_, out);
  EXPECT_EQ(s.code(), StatusCode::kCancelled);
  EXPECT_LE(Syntheses(), 1u);
  speaker->Reset();
  speaker->Commit(/*shareable=*/true);
  EXPECT_EQ(cache_.stats().entries, 0);  // an interrupted sentence is never cached
}

TEST_F(SpeakerTest, PrepareFillsTheCacheAheadAndSkipsWhatItHas) {
  auto speaker = Make();
  ASSERT_NE(speaker, nullptr);
  ASSERT_TRUE(speaker->Prepare({"Orders ship in two days.", "Returns are free."}).ok());
  const size_t made = Syntheses();
  EXPECT_GE(made, 2u);
  EXPECT_EQ(cache_.stats().entries, static_cast<int64_t>(made));
  ASSERT_TRUE(speaker->Prepare({"Orders ship in two days.", "Returns are free."}).ok());
  EXPECT_EQ(Syntheses(), made);
  voice_->fail_when_contains = "broken";
  EXPECT_FALSE(speaker->Prepare({"A broken sentence."}).ok());
  EXPECT_FALSE(Speaker::Create({}, nullptr, tts::TextNormalizer(), nullptr).ok());
}

}  // namespace
}  // namespace hotline::pipeline
