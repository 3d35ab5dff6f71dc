#include "engine/paged_kv_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "common/build_paths.h"
#include "engine/llama2c.h"
#include "engine/model.h"
#include "engine/model_forward.h"

namespace hotline::engine {
namespace {

const KvLayout kLayout{2, 1, 32, KvType::kF32};
constexpr int kBt = 4;
const uint64_t kBlockBytes = uint64_t(32 * 4) * kBt * 2 * 2;

std::unique_ptr<PagedKvCache> Make(int n_blocks, int max_seq_len = 1000) {
  auto c = PagedKvCache::Create(kLayout, kBt, max_seq_len, kBlockBytes * uint64_t(n_blocks));
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? std::move(c).value() : nullptr;
}

std::vector<int32_t> Iota(int n, int32_t start = 1) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

// Computes `tokens` into `seq` as the scheduler does: grow, (write), commit.
void Fill(PagedKvCache& c, int seq, const std::vector<int32_t>& tokens) {
  ASSERT_TRUE(c.EnsureCapacity(seq, int(tokens.size())).ok());
  c.CommitTokens(seq, tokens);
}

TEST(PagedKvCache, BlockCountFromBudgetAndClearErrors) {
  auto c = Make(5);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->total_blocks(), 5);
  EXPECT_EQ(c->allocatable_blocks(), 5);
  EXPECT_EQ(c->block_bytes(), kBlockBytes);
  EXPECT_FALSE(PagedKvCache::Create(kLayout, kBt, 100, kBlockBytes - 1).ok());
  EXPECT_FALSE(PagedKvCache::Create(kLayout, 0, 100, kBlockBytes).ok());
}

TEST(PagedKvCache, SharesCachedPrefixBlocksWithoutCopying) {
  auto c = Make(16);
  ASSERT_TRUE(c);
  const std::vector<int32_t> prompt = Iota(10);  // 2 full blocks + 2 tokens
  Fill(*c, 0, prompt);
  EXPECT_EQ(c->blocks_in_use(), 3);
  EXPECT_EQ(c->cached_blocks(), 2);  // the partial third block is not cached

  std::vector<int32_t> other = prompt;
  other.push_back(99);
  EXPECT_EQ(c->CachedPrefixTokens(other, int(other.size()) - 1), 8);
  EXPECT_EQ(c->AttachCachedPrefix(1, other, int(other.size()) - 1), 8);
  EXPECT_EQ(c->Capacity(1), 8);
  // Same physical rows: shared, not copied.
  EXPECT_EQ(c->KBlock(1, 1, 0), c->KBlock(1, 0, 0));
  EXPECT_EQ(c->VBlock(0, 1, 1), c->VBlock(0, 0, 1));
  EXPECT_EQ(c->blocks_in_use(), 3);  // no new memory for the shared prefix
  ASSERT_TRUE(c->EnsureCapacity(1, int(other.size())).ok());
  EXPECT_EQ(c->blocks_in_use(), 4);  // only the suffix block
  EXPECT_NE(c->KBlock(0, 1, 2), c->KBlock(0, 0, 2));
  EXPECT_EQ(c->prefix_hit_tokens(), 8u);

  // max_tokens bounds the reuse (the last prompt token must be computed) to whole blocks.
  EXPECT_EQ(c->CachedPrefixTokens(Iota(8), 7), 4);
  // A different first block shares nothing, even with the same second block.
  std::vector<int32_t> diverged = prompt;
  diverged[0] = 77;
  EXPECT_EQ(c->CachedPrefixTokens(diverged, 9), 0);
  // A sequence that already holds blocks gets nothing attached.
  EXPECT_EQ(c->AttachCachedPrefix(0, prompt, 9), 0);
}

TEST(PagedKvCache, PrecomputedHashesMatchAndBlockBasesAddressTheBlocks) {
  auto c = Make(16);
  ASSERT_TRUE(c);
  const std::vector<int32_t> prompt = Iota(13);  // 3 full blocks + 1
  Fill(*c, 0, prompt);
  std::vector<uint64_t> hashes;
  c->BlockHashes(prompt, &hashes);
  ASSERT_EQ(hashes.size(), 3u);
  // Extending is incremental and agrees with hashing from scratch.
  std::vector<uint64_t> partial;
  c->BlockHashes(std::span<const int32_t>(prompt).first(5), &partial);
  ASSERT_EQ(partial.size(), 1u);
  c->BlockHashes(prompt, &partial);
  EXPECT_EQ(partial, hashes);
  EXPECT_EQ(c->CachedPrefixTokens(prompt, hashes, 12), c->CachedPrefixTokens(prompt, 12));
  EXPECT_EQ(c->CachedPrefixTokens(prompt, hashes, 12), 12);
  // Fewer hashes than blocks: matching stops where they end.
  EXPECT_EQ(c->CachedPrefixTokens(prompt, std::span<const uint64_t>(hashes).first(1), 12), 4);
  // A different token in block 1 under block 1's hash of the original is a miss, not a share.
  std::vector<int32_t> changed = prompt;
  changed[5] = 77;
  EXPECT_EQ(c->CachedPrefixTokens(changed, hashes, 12), 4);
  EXPECT_EQ(c->AttachCachedPrefix(1, prompt, hashes, 12), 12);
  EXPECT_EQ(c->Capacity(1), 12);

  std::vector<const uint8_t*> bases;
  c->AppendBlockBases(1, &bases);
  ASSERT_EQ(bases.size(), 3u);
  for (int b = 0; b < 3; ++b) {
    for (int layer = 0; layer < kLayout.n_layer; ++layer) {
      EXPECT_EQ(bases[size_t(b)] + c->PartOffset(layer, 0), c->KBlock(layer, 1, b));
      EXPECT_EQ(bases[size_t(b)] + c->PartOffset(layer, 1), c->VBlock(layer, 1, b));
    }
  }
  // Shared blocks: the same bases as the sequence that computed them.
  std::vector<const uint8_t*> bases0;
  c->AppendBlockBases(0, &bases0);
  ASSERT_EQ(bases0.size(), 4u);
  EXPECT_TRUE(std::equal(bases.begin(), bases.end(), bases0.begin()));
  c->AppendBlockBases(42, &bases);  // unknown sequence: nothing appended
  EXPECT_EQ(bases.size(), 3u);
}

TEST(PagedKvCache, CopiesPositionsOfAPartialBlockIntoAnOwnBlock) {
  auto c = Make(16);
  ASSERT_TRUE(c);
  Fill(*c, 0, Iota(10));  // blocks 0, 1 full and cached; block 2 holds positions 8, 9
  // Mark every row of sequence 0's partial block.
  for (int l = 0; l < kLayout.n_layer; ++l) {
    for (int kv = 0; kv < 2; ++kv) {
      uint8_t* p = const_cast<uint8_t*>(kv == 0 ? c->KBlock(l, 0, 2) : c->VBlock(l, 0, 2));
      for (int r = 0; r < kBt; ++r) {
        std::memset(p + r * kLayout.row_bytes(), 10 * (2 * l + kv) + r + 1, kLayout.row_bytes());
      }
    }
  }
  std::vector<int32_t> other = Iota(10);
  other.push_back(77);
  ASSERT_EQ(c->AttachCachedPrefix(1, other, 10), 8);
  ASSERT_TRUE(c->EnsureCapacity(1, 10).ok());
  ASSERT_TRUE(c->CopyPositions(0, 1, 8, 10).ok());
  for (int l = 0; l < kLayout.n_layer; ++l) {
    for (int kv = 0; kv < 2; ++kv) {
      const uint8_t* p = kv == 0 ? c->KBlock(l, 1, 2) : c->VBlock(l, 1, 2);
      const uint8_t* q = kv == 0 ? c->KBlock(l, 0, 2) : c->VBlock(l, 0, 2);
      EXPECT_NE(p, q);  // its own block, not shared
      for (int r = 0; r < 2; ++r) {
        EXPECT_EQ(p[r * kLayout.row_bytes()], 10 * (2 * l + kv) + r + 1) << l << " " << kv;
        EXPECT_EQ(std::memcmp(p + r * kLayout.row_bytes(), q + r * kLayout.row_bytes(),
                              size_t(kLayout.row_bytes())),
                  0);
      }
    }
  }
  // Across a block boundary, past a capacity, onto itself or into a shared block: refused.
  EXPECT_EQ(c->CopyPositions(0, 1, 7, 9).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c->CopyPositions(0, 1, 8, 13).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c->CopyPositions(0, 0, 8, 9).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(c->CopyPositions(0, 1, 4, 6).code(), StatusCode::kFailedPrecondition);
}

TEST(PagedKvCache, ReferenceCountsKeepSharedBlocksAlive) {
  auto c = Make(8);
  ASSERT_TRUE(c);
  Fill(*c, 0, Iota(8));
  ASSERT_EQ(c->AttachCachedPrefix(1, Iota(9), 8), 8);
  ASSERT_EQ(c->AttachCachedPrefix(2, Iota(9), 8), 8);
  EXPECT_EQ(c->blocks_in_use(), 2);
  c->RemoveSequence(0);
  c->RemoveSequence(1);
  EXPECT_EQ(c->blocks_in_use(), 2);  // sequence 2 still holds them
  EXPECT_EQ(c->allocatable_blocks(), 6);
  c->RemoveSequence(2);
  EXPECT_EQ(c->blocks_in_use(), 0);
  EXPECT_EQ(c->bytes_in_use(), 0u);
  // Unreferenced but still cached, and allocatable.
  EXPECT_EQ(c->cached_blocks(), 2);
  EXPECT_EQ(c->allocatable_blocks(), 8);
  EXPECT_EQ(c->AttachCachedPrefix(3, Iota(9), 8), 8);
  EXPECT_EQ(c->blocks_in_use(), 2);
}

TEST(PagedKvCache, EvictsLeastRecentlyUsedCachedBlocksLast) {
  auto c = Make(4);
  ASSERT_TRUE(c);
  const std::vector<int32_t> a = Iota(4, 100), b = Iota(4, 200);
  Fill(*c, 0, a);
  Fill(*c, 1, b);
  c->RemoveSequence(0);  // a is older in the LRU list
  c->RemoveSequence(1);
  EXPECT_EQ(c->cached_blocks(), 2);
  // Two never-cached blocks are free: taking them evicts nothing.
  ASSERT_TRUE(c->EnsureCapacity(2, 8).ok());
  EXPECT_EQ(c->cached_blocks(), 2);
  EXPECT_EQ(c->evicted_blocks(), 0u);
  // The next block evicts the least recently used cached one: a, not b.
  ASSERT_TRUE(c->EnsureCapacity(2, 9).ok());
  EXPECT_EQ(c->evicted_blocks(), 1u);
  EXPECT_EQ(c->CachedPrefixTokens(a, 4), 0);
  EXPECT_EQ(c->CachedPrefixTokens(b, 4), 4);
  // Using b refreshes it; it is evicted only when nothing else is left.
  EXPECT_EQ(c->AttachCachedPrefix(3, b, 4), 4);
  EXPECT_EQ(c->allocatable_blocks(), 0);
}

TEST(PagedKvCache, RunningOutIsResourceExhaustedAndAllocatesNothing) {
  auto c = Make(3, /*max_seq_len=*/40);
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->EnsureCapacity(0, 8).ok());
  Status s = c->EnsureCapacity(1, 8);
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s;
  EXPECT_EQ(c->Capacity(1), 0);
  EXPECT_EQ(c->allocatable_blocks(), 1);
  EXPECT_EQ(c->BlocksNeeded(1, 8), 2);
  EXPECT_EQ(c->EnsureCapacity(0, 41).code(), StatusCode::kResourceExhausted);
  c->RemoveSequence(0);
  EXPECT_TRUE(c->EnsureCapacity(1, 8).ok());
}

// Logits of a prompt whose prefix comes from another sequence's cached blocks equal a fresh
// computation: attention reads shared blocks through the block table.
TEST(PagedKvCache, ForwardWithSharedPrefixEqualsFresh) {
  const std::string dir = std::string(HOTLINE_SHARED_DATA_DIR) + "/llm/stories260k/";
  const std::string path =
      std::string(HOTLINE_BINARY_DIR) + "/paged_kv_test_" + std::to_string(::getpid()) + ".gguf";
  ASSERT_TRUE(ConvertLlama2c(dir + "stories260K.bin", dir + "tok512.bin", path).ok());
  auto file = GgufFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  std::shared_ptr<const GgufFile> shared = std::move(file).value();
  auto model = Model::Load(shared);
  std::remove(path.c_str());
  ASSERT_TRUE(model.ok()) << model.status();
  const ModelHParams& hp = (*model)->hparams();
  ComputePool pool(2);
  ForwardPass fwd(**model, pool);
  KvLayout layout{hp.n_layer, hp.n_head_kv, hp.head_dim, KvType::kF32};
  auto kv = PagedKvCache::Create(
      layout, kBt, 256, 64 * uint64_t(layout.row_bytes()) * kBt * 2 * uint64_t(hp.n_layer));
  ASSERT_TRUE(kv.ok());
  PagedKvCache& c = **kv;

  const std::vector<int32_t> system = {1, 403, 407, 261, 378, 429, 416, 261, 300, 458, 299, 300};
  std::vector<int32_t> prompt = system;
  for (int32_t t : {310, 270, 401, 320, 290}) prompt.push_back(t);

  auto run = [&](int seq, const std::vector<int32_t>& tokens, int from, std::vector<float>* out) {
    std::vector<BatchToken> batch;
    for (int i = from; i < int(tokens.size()); ++i) {
      batch.push_back({tokens[size_t(i)], seq, i, i + 1 == int(tokens.size())});
    }
    ASSERT_TRUE(fwd.Run(batch, c, out).ok());
    c.CommitTokens(seq, tokens);
  };
  std::vector<float> logits_sys, fresh, shared_logits;
  run(0, system, 0, &logits_sys);  // the system prompt, cached by sequence 0
  {
    // The full prompt computed from scratch, in a cache of its own.
    auto own = PerSequenceKvCache::Create(layout, kBt, 256);
    ASSERT_TRUE(own.ok());
    std::vector<BatchToken> batch;
    for (int i = 0; i < int(prompt.size()); ++i) {
      batch.push_back({prompt[size_t(i)], 1, i, i + 1 == int(prompt.size())});
    }
    ASSERT_TRUE(fwd.Run(batch, **own, &fresh).ok());
  }
  const int reused = c.AttachCachedPrefix(2, prompt, int(prompt.size()) - 1);
  EXPECT_EQ(reused, 12);
  EXPECT_EQ(c.KBlock(0, 2, 0), c.KBlock(0, 0, 0));
  run(2, prompt, reused, &shared_logits);  // only the suffix computed
  ASSERT_EQ(fresh.size(), shared_logits.size());
  ASSERT_EQ(fresh.size(), size_t(hp.n_vocab));
  for (size_t i = 0; i < fresh.size(); ++i) ASSERT_NEAR(fresh[i], shared_logits[i], 1e-4) << i;
}

}  // namespace
}  // namespace hotline::engine
