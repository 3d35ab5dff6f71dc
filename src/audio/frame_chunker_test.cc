#include "audio/frame_chunker.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace hotline::audio {
namespace {

TEST(FrameChunker, ReassemblesAnyChunkSizesIntoExactFrames) {
  auto c = FrameChunker::Create(8000);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->frame_samples(), 160u);
  std::vector<int16_t> in(1000);
  std::iota(in.begin(), in.end(), int16_t{0});
  std::vector<int16_t> seen;
  int frames = 0;
  auto on_frame = [&](AudioView f) {
    EXPECT_EQ(f.samples.size(), 160u);
    EXPECT_EQ(f.sample_rate_hz, 8000);
    seen.insert(seen.end(), f.samples.begin(), f.samples.end());
    ++frames;
  };
  // Irregular chunk sizes, including empty and larger than a frame.
  const size_t sizes[] = {0, 1, 159, 7, 320, 33, 200, 100, 180};
  size_t pos = 0;
  for (size_t s : sizes) {
    c->Push(std::span<const int16_t>(in).subspan(pos, s), on_frame);
    pos += s;
  }
  ASSERT_EQ(pos, in.size());
  EXPECT_EQ(frames, 6);
  EXPECT_EQ(c->pending(), 1000u - 960u);
  EXPECT_TRUE(c->Flush(on_frame));
  EXPECT_EQ(frames, 7);
  ASSERT_EQ(seen.size(), 1120u);
  for (size_t i = 0; i < 1000; ++i) ASSERT_EQ(seen[i], in[i]) << i;
  for (size_t i = 1000; i < 1120; ++i) ASSERT_EQ(seen[i], 0) << i;  // padding
  EXPECT_FALSE(c->Flush(on_frame));
}

TEST(FrameChunker, WholeFramesArePassedWithoutCopy) {
  auto c = FrameChunker::Create(16000, 20);
  ASSERT_TRUE(c.ok());
  std::vector<int16_t> in(640);
  std::vector<const int16_t*> ptrs;
  c->Push(in, [&](AudioView f) { ptrs.push_back(f.samples.data()); });
  ASSERT_EQ(ptrs.size(), 2u);
  EXPECT_EQ(ptrs[0], in.data());
  EXPECT_EQ(ptrs[1], in.data() + 320);
}

TEST(FrameChunker, ResetDropsPendingAndBadArgumentsFail) {
  auto c = FrameChunker::Create(8000);
  ASSERT_TRUE(c.ok());
  c->Push(std::vector<int16_t>(100), [](AudioView) {});
  EXPECT_EQ(c->pending(), 100u);
  c->Reset();
  EXPECT_EQ(c->pending(), 0u);
  EXPECT_FALSE(FrameChunker::Create(0).ok());
  EXPECT_FALSE(FrameChunker::Create(8000, 0).ok());
  EXPECT_FALSE(FrameChunker::Create(8000, 5000).ok());
}

}  // namespace
}  // namespace hotline::audio
