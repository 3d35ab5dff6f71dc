#include "engine/kv_cache.h"

#include <gtest/gtest.h>

namespace hotline::engine {
namespace {

TEST(KvCache, GrowsByBlocksAndFreesPerSequence) {
  KvLayout layout{3, 2, 64, KvType::kF16};
  EXPECT_EQ(layout.row_bytes(), 2 * 64 * 2);
  auto kv = PerSequenceKvCache::Create(layout, 16, 100);
  ASSERT_TRUE(kv.ok()) << kv.status();
  KvCache& c = **kv;
  EXPECT_EQ(c.Capacity(7), 0);
  ASSERT_TRUE(c.EnsureCapacity(7, 17).ok());
  EXPECT_EQ(c.Capacity(7), 32);
  const uint64_t block_bytes = uint64_t(layout.row_bytes()) * 16 * 2 * 3;
  EXPECT_EQ(c.bytes_in_use(), 2 * block_bytes);
  // Rows of different layers, K and V, and positions never alias.
  uint8_t* a = c.KRow(0, 7, 0);
  uint8_t* b = c.VRow(0, 7, 0);
  uint8_t* d = c.KRow(2, 7, 15);
  uint8_t* e = c.KRow(0, 7, 16);
  EXPECT_NE(a, b);
  EXPECT_NE(a, d);
  EXPECT_NE(a, e);
  EXPECT_EQ(c.KRow(1, 7, 3), c.KBlock(1, 7, 0) + 3 * layout.row_bytes());
  ASSERT_TRUE(c.EnsureCapacity(8, 1).ok());
  c.RemoveSequence(7);
  EXPECT_EQ(c.Capacity(7), 0);
  EXPECT_EQ(c.bytes_in_use(), block_bytes);
  c.RemoveSequence(12345);  // unknown: no-op
}

TEST(KvCache, BlockBasesAddressEveryBlockAndLayer) {
  const KvLayout layout{3, 2, 8, KvType::kF16};
  auto c = PerSequenceKvCache::Create(layout, 4, 64);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c)->EnsureCapacity(7, 10).ok());  // 3 blocks
  std::vector<const uint8_t*> bases;
  (*c)->AppendBlockBases(7, &bases);
  ASSERT_EQ(bases.size(), 3u);
  for (int b = 0; b < 3; ++b) {
    for (int l = 0; l < 3; ++l) {
      EXPECT_EQ(bases[size_t(b)] + (*c)->PartOffset(l, 0), (*c)->KBlock(l, 7, b));
      EXPECT_EQ(bases[size_t(b)] + (*c)->PartOffset(l, 1), (*c)->VBlock(l, 7, b));
    }
  }
  (*c)->AppendBlockBases(8, &bases);
  EXPECT_EQ(bases.size(), 3u);
}

TEST(KvCache, EnforcesLengthAndByteBudget) {
  KvLayout layout{1, 1, 32, KvType::kQ8_0};
  EXPECT_EQ(layout.row_bytes(), 34);
  const uint64_t block_bytes = 34 * 8 * 2;
  auto kv = PerSequenceKvCache::Create(layout, 8, 64, 3 * block_bytes);
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ((*kv)->EnsureCapacity(0, 65).code(), StatusCode::kResourceExhausted);
  ASSERT_TRUE((*kv)->EnsureCapacity(0, 24).ok());
  EXPECT_EQ((*kv)->EnsureCapacity(1, 1).code(), StatusCode::kResourceExhausted);
  (*kv)->RemoveSequence(0);
  EXPECT_TRUE((*kv)->EnsureCapacity(1, 1).ok());
}

TEST(KvCache, Q8_0NeedsWholeBlocksPerHead) {
  KvLayout layout{1, 4, 48, KvType::kQ8_0};
  EXPECT_FALSE(layout.Validate().ok());
  EXPECT_FALSE(PerSequenceKvCache::Create(layout, 16, 64).ok());
  EXPECT_FALSE(ParseKvType("q4_0").ok());
  EXPECT_EQ(*ParseKvType("q8_0"), KvType::kQ8_0);
}

}  // namespace
}  // namespace hotline::engine
