// PagedKvCache: the KV cache of the batching scheduler. One shared pool of fixed-size blocks,
// per-sequence block tables, and a prefix cache over full blocks.
//
// Pool: `kv_cache_bytes` / block_bytes blocks, allocated once (one allocation; pages are touched
// only as blocks are written). A sequence's block table maps its block index to a pool block, so
// attention reads through the table (KvCache::KBlock/VBlock) and sequences never need contiguous
// memory.
//
// Prefix cache: once every position of a block has been computed, CommitTokens() enters the
// block into a table keyed by a 64-bit hash chained over (hash of the previous block of the
// sequence, the block's tokens). Keys are checked against the stored parent hash and tokens, so a
// hash collision can only miss, never share the wrong rows. AttachCachedPrefix() gives a new
// sequence the longest run of cached blocks matching the start of its prompt: the blocks are
// shared (reference counted), not copied, so a second caller with the same 500-token system
// prompt costs no KV memory for it and no compute. Shared blocks are always full and a sequence
// only writes positions past what it attached, so a shared block is never written.
//
// Reuse order: a freed block that holds no cached prefix goes back to the plain free list; a
// freed cached block goes to the tail of an LRU list and stays findable. New blocks come from the
// plain free list first and from the head of the LRU list (least recently used cached block,
// whose cache entry is dropped) last.
//
// Errors: EnsureCapacity returns ResourceExhausted when the pool has too few allocatable blocks
// (nothing is allocated then) or the sequence would pass max_seq_len; the scheduler answers by
// preempting a sequence.
//
// Threads: as KvCache: mutations from one thread (the scheduler's), const reads and row writes
// from compute threads between mutations.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "engine/kv_cache.h"

namespace hotline::engine {

class PagedKvCache final : public KvCache {
 public:
  // Blocks in the pool: kv_cache_bytes / (bytes of one block); at least one block must fit.
  static Result<std::unique_ptr<PagedKvCache>> Create(const KvLayout& layout, int block_tokens,
                                                      int max_seq_len, uint64_t kv_cache_bytes);

  const KvLayout& layout() const override { return layout_; }
  int block_tokens() const override { return block_tokens_; }
  Status EnsureCapacity(int seq, int n_tokens) override;
  // Drops the sequence's references; its cached full blocks stay reusable (LRU).
  void RemoveSequence(int seq) override;
  int Capacity(int seq) const override;
  const uint8_t* KBlock(int layer, int seq, int block) const override;
  const uint8_t* VBlock(int layer, int seq, int block) const override;
  void AppendBlockBases(int seq, std::vector<const uint8_t*>* out) const override;
  // Bytes of the blocks referenced by at least one sequence.
  uint64_t bytes_in_use() const override { return uint64_t(blocks_in_use_) * block_bytes_; }

  // Gives `seq` (which must hold no blocks yet) the longest run of cached blocks matching
  // tokens[0, n) with n <= max_tokens, and returns n (a multiple of block_tokens; 0 when nothing
  // matches or `seq` already holds blocks). Callers pass max_tokens = prompt length - 1 so the
  // last prompt token is computed (its logits are needed).
  int AttachCachedPrefix(int seq, std::span<const int32_t> tokens, int max_tokens);
  // Copies the K and V rows of positions [from, to) of `src` into `dst`, for every layer: a
  // request whose prompt goes on past the cached full blocks into a running sequence's last,
  // partial block (the system prompt rarely ends on a block boundary) takes those rows instead
  // of computing them. Positions must lie within one block, be within both sequences' capacity
  // (src must have computed them), and dst's block must be its own (not shared or cached).
  // Errors: InvalidArgument / FailedPrecondition, nothing copied.
  Status CopyPositions(int src, int dst, int from, int to);
  // Tokens AttachCachedPrefix would reuse now, without changing anything.
  int CachedPrefixTokens(std::span<const int32_t> tokens, int max_tokens) const;
  // The same with the chained hashes of tokens' full blocks computed beforehand by BlockHashes
  // (hashes[i] covers blocks 0..i; fewer than the full blocks is fine: matching stops there), so
  // a request is hashed once however often admission looks at it.
  int AttachCachedPrefix(int seq, std::span<const int32_t> tokens,
                         std::span<const uint64_t> hashes, int max_tokens);
  int CachedPrefixTokens(std::span<const int32_t> tokens, std::span<const uint64_t> hashes,
                         int max_tokens) const;
  // Extends `hashes` to the chained hash of every full block of `tokens` (the entries already
  // there must be those of the same tokens). Pure: touches no cache state, any thread.
  void BlockHashes(std::span<const int32_t> tokens, std::vector<uint64_t>* hashes) const;
  // Records that positions [0, tokens.size()) of `seq` are computed and hold `tokens`; every
  // block completed since the last call enters the prefix cache. Cheap when called after each
  // step (only new blocks are hashed; `known_hashes`, from BlockHashes over a prefix of the
  // same tokens, spares even that). REQUIRES: tokens.size() <= Capacity(seq), and the tokens of
  // earlier calls are a prefix of `tokens`.
  void CommitTokens(int seq, std::span<const int32_t> tokens,
                    std::span<const uint64_t> known_hashes = {});

  // Pool blocks needed to grow `seq` to n_tokens (0 when it already has them).
  int BlocksNeeded(int seq, int n_tokens) const;
  int total_blocks() const { return static_cast<int>(blocks_.size()); }
  // Blocks a new allocation can take: never-cached free blocks plus unreferenced cached ones.
  int allocatable_blocks() const { return static_cast<int>(free_.size() + lru_.size()); }
  // Blocks referenced by at least one sequence.
  int blocks_in_use() const { return blocks_in_use_; }
  // Blocks in the prefix cache (referenced or not).
  int cached_blocks() const { return static_cast<int>(by_hash_.size()); }
  uint64_t block_bytes() const { return block_bytes_; }
  int max_seq_len() const { return max_seq_len_; }
  // Counters since creation.
  uint64_t prefix_hit_tokens() const { return prefix_hit_tokens_; }
  uint64_t evicted_blocks() const { return evicted_blocks_; }

 private:
  PagedKvCache() = default;
  struct Block {
    int ref = 0;
    bool cached = false;  // in by_hash_
    uint64_t hash = 0;
    uint64_t parent_hash = 0;
    std::vector<int32_t> tokens;      // when cached: the block's tokens (collision check)
    std::list<int>::iterator lru_it;  // valid when cached && ref == 0
  };
  struct Sequence {
    std::vector<int> table;        // block index -> pool block
    std::vector<uint64_t> hashes;  // chained hash of each full, committed block
  };
  // Finds the cached block holding `tokens` after a block with hash `parent`; -1 if none.
  int Lookup(uint64_t parent, std::span<const int32_t> tokens, uint64_t* hash) const;
  // The same for a block whose chained hash is known.
  int LookupHashed(uint64_t parent, uint64_t hash, std::span<const int32_t> tokens) const;
  // Takes a block for writing (free list first, then LRU); REQUIRES allocatable_blocks() > 0.
  int Allocate();
  void AddRef(int b);
  void Release(int b);
  void Uncache(int b);
  const uint8_t* BlockPtr(int layer, int seq, int block, int kv) const;

  KvLayout layout_;
  int block_tokens_ = 0;
  int max_seq_len_ = 0;
  uint64_t block_bytes_ = 0;
  std::unique_ptr<uint8_t[]> pool_;
  std::vector<Block> blocks_;
  std::vector<int> free_;  // never-cached free blocks (stack)
  std::list<int> lru_;     // unreferenced cached blocks, least recently used first
  std::unordered_map<uint64_t, int> by_hash_;
  std::unordered_map<int, Sequence> seqs_;
  int blocks_in_use_ = 0;
  uint64_t prefix_hit_tokens_ = 0;
  uint64_t evicted_blocks_ = 0;
};

}  // namespace hotline::engine
