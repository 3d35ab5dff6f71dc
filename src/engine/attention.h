// Fused attention over the KV cache with online softmax.
//
// For each query token i (of sequence seqs[i], seeing positions [0, n_ctx[i]) of that sequence)
// and each query head h: out = sum_j softmax_j(q·k_j * scale) v_j, where k_j, v_j are the rows of
// KV head h / (n_head / n_head_kv) (grouped-query attention). Scores are never materialized for
// the whole context: positions are walked in chunks of kAttentionChunk with a running maximum and
// running denominator (the "online softmax" of FlashAttention), so memory is O(head_dim) per
// head whatever the context length. Causality within a batch comes from n_ctx: a token at
// position p sees n_ctx = p + 1 positions, so it never sees a later token of its own batch even
// though their K/V are already stored.
//
// Work is split over (query block, KV head) pairs on the ComputePool: a query block is up to 16
// consecutive batch tokens of one sequence (one decode token, or part of a prompt chunk), and
// the query heads that share a KV head are processed together, so each K/V row is converted from
// the cache type once per block instead of once per token and head. Grouping never changes a
// token's result (same chunks, same order of operations).
//
// Threads: call from the pool's owner thread; blocks until done. Allocates only thread-local
// scratch when a larger head group or head dimension than before is seen (and the block table
// when the caller passes none).
#pragma once

#include <span>

#include "engine/compute_pool.h"
#include "engine/kv_cache.h"

namespace hotline::engine {

inline constexpr int kAttentionChunk = 32;

struct AttentionArgs {
  const KvCache* kv = nullptr;
  int layer = 0;
  int n_head = 0;  // query heads; a multiple of kv->layout().n_head_kv
  float scale = 1.0f;
  std::span<const int> seqs;   // per query token
  std::span<const int> n_ctx;  // per query token: positions visible (>= 1, <= capacity)
  const float* q = nullptr;    // n_tokens x (n_head * head_dim)
  float* out = nullptr;        // n_tokens x (n_head * head_dim)
  // Optional block tables resolved once per forward pass (KvCache::AppendBlockBases): the
  // blocks of token i's sequence are block_bases[block_first[i] ...]. Left empty, Attention
  // resolves them itself (one allocation per call).
  std::span<const uint8_t* const> block_bases;
  std::span<const int> block_first;  // per query token
};

void Attention(const AttentionArgs& args, ComputePool& pool);

// The textbook form, for comparison (`engine.flash_attention: false`): for each (token, query
// head) every score of the visible context is materialized, softmax runs over the whole score
// vector, then the weighted sum of the value rows; each query head converts its K/V rows from
// the cache type itself (no sharing within a grouped-query group). Same result as Attention to
// rounding; memory O(context) per head, and K/V read once per query head instead of once per KV
// head. Same threading contract as Attention.
void PlainAttention(const AttentionArgs& args, ComputePool& pool);

}  // namespace hotline::engine
