// KV cache: the keys and values of every past token of every sequence, per layer.
//
// Storage is in blocks of `block_tokens()` consecutive positions of one sequence. Within a block,
// for each layer, K and V are each `block_tokens` rows; a row is one token's keys (or values) for
// all KV heads, n_head_kv * head_dim elements in the cache's element type (F32, F16 or Q8_0,
// whose 32-element blocks never straddle two heads). Attention walks a sequence block by block,
// so an implementation may place blocks anywhere: PerSequenceKvCache (here) gives each sequence
// its own blocks on demand; the paged cache of the batching scheduler hands out blocks from a
// shared pool with block tables and prefix sharing behind the same interface.
//
// Threads: EnsureCapacity/RemoveSequence mutate and must not run concurrently with anything.
// The const accessors (and writing rows a thread owns through the non-const block pointers) may
// run from many compute threads at once between mutations.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "engine/ggml_types.h"

namespace hotline::engine {

enum class KvType : uint8_t { kF32, kF16, kQ8_0 };

// "f32", "f16", "q8_0".
Result<KvType> ParseKvType(std::string_view name);
const char* KvTypeName(KvType t);
GgmlType KvGgmlType(KvType t);

struct KvLayout {
  int n_layer = 0;
  int n_head_kv = 0;
  int head_dim = 0;
  KvType type = KvType::kF16;

  int row_elems() const { return n_head_kv * head_dim; }
  // Bytes of one token's K (or V) row in one layer.
  int64_t row_bytes() const;
  // Bytes of one head's slice within a row (head h starts at h * head_bytes()).
  int64_t head_bytes() const;
  // OK when `type` can store heads of `head_dim` (Q8_0 needs a multiple of 32).
  Status Validate() const;
};

class KvCache {
 public:
  virtual ~KvCache() = default;

  virtual const KvLayout& layout() const = 0;
  virtual int block_tokens() const = 0;

  // Makes positions [0, n_tokens) of `seq` writable, creating the sequence if needed.
  // ResourceExhausted when the sequence would pass the cache's per-sequence or total budget.
  virtual Status EnsureCapacity(int seq, int n_tokens) = 0;
  // Frees every block of `seq` (no-op for an unknown sequence).
  virtual void RemoveSequence(int seq) = 0;
  // Positions [0, capacity) of `seq` are writable; 0 for an unknown sequence.
  virtual int Capacity(int seq) const = 0;

  // Start of block `block` (positions [block * block_tokens, ...)) of `seq` in `layer`.
  // REQUIRES: block * block_tokens < Capacity(seq).
  virtual const uint8_t* KBlock(int layer, int seq, int block) const = 0;
  virtual const uint8_t* VBlock(int layer, int seq, int block) const = 0;

  // Every implementation lays a block out as [layer][K rows | V rows]: the K rows of `layer`
  // start PartOffset(layer, 0) bytes after the block's base, its V rows PartOffset(layer, 1).
  // AppendBlockBases appends the base of each of `seq`'s blocks in block order (Capacity(seq) /
  // block_tokens() pointers), so a forward pass resolves a sequence's block table once per
  // step instead of once per block per layer. Valid until the next mutation. Allocates only when
  // `out` grows.
  virtual void AppendBlockBases(int seq, std::vector<const uint8_t*>* out) const = 0;
  int64_t PartOffset(int layer, int kv) const {
    return int64_t{2 * layer + kv} * layout().row_bytes() * block_tokens();
  }

  // Writable row of one position. REQUIRES: pos < Capacity(seq).
  uint8_t* KRow(int layer, int seq, int pos) {
    return const_cast<uint8_t*>(KBlock(layer, seq, pos / block_tokens())) +
           (pos % block_tokens()) * layout().row_bytes();
  }
  uint8_t* VRow(int layer, int seq, int pos) {
    return const_cast<uint8_t*>(VBlock(layer, seq, pos / block_tokens())) +
           (pos % block_tokens()) * layout().row_bytes();
  }

  // Bytes currently allocated for keys and values.
  virtual uint64_t bytes_in_use() const = 0;
};

// Each sequence gets its own blocks, allocated as it grows (block_tokens positions at a time)
// and released by RemoveSequence. Limits: `max_seq_len` positions per sequence and
// `max_total_bytes` over all sequences (0 = unlimited).
class PerSequenceKvCache final : public KvCache {
 public:
  static Result<std::unique_ptr<PerSequenceKvCache>> Create(const KvLayout& layout,
                                                            int block_tokens, int max_seq_len,
                                                            uint64_t max_total_bytes = 0);

  const KvLayout& layout() const override { return layout_; }
  int block_tokens() const override { return block_tokens_; }
  Status EnsureCapacity(int seq, int n_tokens) override;
  void RemoveSequence(int seq) override;
  int Capacity(int seq) const override;
  const uint8_t* KBlock(int layer, int seq, int block) const override;
  const uint8_t* VBlock(int layer, int seq, int block) const override;
  void AppendBlockBases(int seq, std::vector<const uint8_t*>* out) const override;
  uint64_t bytes_in_use() const override { return bytes_in_use_; }

 private:
  PerSequenceKvCache() = default;
  // One allocation per block: [layer][K rows | V rows].
  struct Sequence {
    std::vector<std::unique_ptr<uint8_t[]>> blocks;
  };
  const uint8_t* Block(int layer, int seq, int block, int kv) const;

  KvLayout layout_;
  int block_tokens_ = 0;
  int max_seq_len_ = 0;
  uint64_t max_total_bytes_ = 0;
  uint64_t block_bytes_ = 0;
  uint64_t bytes_in_use_ = 0;
  std::unordered_map<int, Sequence> seqs_;
};

}  // namespace hotline::engine
