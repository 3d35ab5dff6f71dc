#include "engine/paged_kv_cache.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>

namespace hotline::engine {
namespace {

uint64_t Mix(uint64_t x) {
  // splitmix64 finalizer: every input bit affects every output bit.
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t ChainHash(uint64_t parent, std::span<const int32_t> tokens) {
  uint64_t h = Mix(parent ^ 0x6a09e667f3bcc909ULL);
  for (int32_t t : tokens) h = Mix(h ^ static_cast<uint32_t>(t));
  return h;
}

// Hash of "no parent" (the first block of a sequence).
constexpr uint64_t kRootHash = 0x243f6a8885a308d3ULL;

}  // namespace

Result<std::unique_ptr<PagedKvCache>> PagedKvCache::Create(const KvLayout& layout, int block_tokens,
                                                           int max_seq_len,
                                                           uint64_t kv_cache_bytes) {
  RETURN_IF_ERROR(layout.Validate());
  if (block_tokens < 1 || block_tokens > 65536 || max_seq_len < 1) {
    return InvalidArgumentError(
        "paged KV cache: block_tokens must be in [1, 65536] and "
        "max_seq_len positive");
  }
  std::unique_ptr<PagedKvCache> c(new PagedKvCache());
  c->layout_ = layout;
  c->block_tokens_ = block_tokens;
  c->max_seq_len_ = max_seq_len;
  c->block_bytes_ = static_cast<uint64_t>(layout.row_bytes()) * uint64_t(block_tokens) * 2 *
                    uint64_t(layout.n_layer);
  const uint64_t n_blocks = kv_cache_bytes / c->block_bytes_;
  if (n_blocks < 1) {
    return InvalidArgumentError("kv_cache_bytes " + std::to_string(kv_cache_bytes) +
                                " holds no KV block of " + std::to_string(c->block_bytes_) +
                                " bytes (" + std::to_string(block_tokens) +
                                " tokens); raise kv_cache_bytes");
  }
  if (n_blocks > (1u << 30)) return InvalidArgumentError("kv_cache_bytes gives too many blocks");
  c->pool_.reset(new (std::nothrow) uint8_t[n_blocks * c->block_bytes_]);
  if (!c->pool_) {
    return ResourceExhaustedError("cannot allocate " + std::to_string(n_blocks * c->block_bytes_) +
                                  " bytes of KV cache (kv_cache_bytes)");
  }
  c->blocks_.resize(n_blocks);
  c->free_.reserve(n_blocks);
  // Stack: block 0 is handed out first.
  for (uint64_t b = n_blocks; b-- > 0;) c->free_.push_back(static_cast<int>(b));
  return c;
}

int PagedKvCache::BlocksNeeded(int seq, int n_tokens) const {
  const int need = (n_tokens + block_tokens_ - 1) / block_tokens_;
  auto it = seqs_.find(seq);
  const int have = it == seqs_.end() ? 0 : static_cast<int>(it->second.table.size());
  return std::max(0, need - have);
}

int PagedKvCache::Allocate() {
  int b;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else {
    b = lru_.front();
    lru_.pop_front();
    Uncache(b);
    ++evicted_blocks_;
  }
  Block& blk = blocks_[size_t(b)];
  blk.ref = 1;
  ++blocks_in_use_;
  return b;
}

void PagedKvCache::Uncache(int b) {
  Block& blk = blocks_[size_t(b)];
  if (!blk.cached) return;
  by_hash_.erase(blk.hash);
  blk.cached = false;
  blk.tokens.clear();
  blk.tokens.shrink_to_fit();
}

void PagedKvCache::AddRef(int b) {
  Block& blk = blocks_[size_t(b)];
  if (blk.ref == 0) {
    // An unreferenced block is only findable while cached, and then it sits in the LRU list.
    lru_.erase(blk.lru_it);
    ++blocks_in_use_;
  }
  ++blk.ref;
}

void PagedKvCache::Release(int b) {
  Block& blk = blocks_[size_t(b)];
  if (--blk.ref > 0) return;
  --blocks_in_use_;
  if (blk.cached) {
    lru_.push_back(b);
    blk.lru_it = std::prev(lru_.end());
  } else {
    free_.push_back(b);
  }
}

Status PagedKvCache::EnsureCapacity(int seq, int n_tokens) {
  if (n_tokens > max_seq_len_) {
    return ResourceExhaustedError("sequence would hold " + std::to_string(n_tokens) +
                                  " tokens, more than max_seq_len " + std::to_string(max_seq_len_));
  }
  const int need = BlocksNeeded(seq, n_tokens);
  if (need > allocatable_blocks()) {
    return ResourceExhaustedError("KV cache has " + std::to_string(allocatable_blocks()) +
                                  " free blocks, sequence needs " + std::to_string(need) +
                                  " more; raise kv_cache_bytes or run fewer sequences");
  }
  Sequence& s = seqs_[seq];
  for (int i = 0; i < need; ++i) s.table.push_back(Allocate());
  return Status::Ok();
}

void PagedKvCache::RemoveSequence(int seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  // Release from the end so the prefix's blocks are the most recently used: a later sequence is
  // likelier to share the start of a prompt than its tail, so the tail is evicted first.
  for (auto b = it->second.table.rbegin(); b != it->second.table.rend(); ++b) Release(*b);
  seqs_.erase(it);
}

int PagedKvCache::Capacity(int seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? 0 : static_cast<int>(it->second.table.size()) * block_tokens_;
}

const uint8_t* PagedKvCache::BlockPtr(int layer, int seq, int block, int kv) const {
  const Sequence& s = seqs_.at(seq);
  const uint64_t part = static_cast<uint64_t>(layout_.row_bytes()) * uint64_t(block_tokens_);
  const uint64_t phys = static_cast<uint64_t>(s.table[size_t(block)]);
  return pool_.get() + phys * block_bytes_ + uint64_t(2 * layer + kv) * part;
}

Status PagedKvCache::CopyPositions(int src, int dst, int from, int to) {
  const int bt = block_tokens_;
  if (from < 0 || to <= from || from / bt != (to - 1) / bt) {
    return InvalidArgumentError("positions [" + std::to_string(from) + ", " + std::to_string(to) +
                                ") must be a non-empty range within one block");
  }
  if (src == dst) return InvalidArgumentError("a sequence cannot copy positions onto itself");
  if (Capacity(src) < to || Capacity(dst) < to) {
    return InvalidArgumentError("positions up to " + std::to_string(to) +
                                " are past a sequence's capacity");
  }
  const int index = from / bt;
  const int from_block = seqs_.at(src).table[size_t(index)];
  const int to_block = seqs_.at(dst).table[size_t(index)];
  const Block& target = blocks_[size_t(to_block)];
  if (target.ref != 1 || target.cached) {
    return FailedPreconditionError("the destination block is shared; its rows are read-only");
  }
  const uint64_t row = static_cast<uint64_t>(layout_.row_bytes());
  const uint64_t part = row * uint64_t(bt);
  const uint64_t offset = uint64_t(from % bt) * row;
  const uint64_t bytes = uint64_t(to - from) * row;
  const uint8_t* in = pool_.get() + uint64_t(from_block) * block_bytes_;
  uint8_t* out = pool_.get() + uint64_t(to_block) * block_bytes_;
  for (uint64_t p = 0; p < uint64_t(2 * layout_.n_layer); ++p) {
    std::memcpy(out + p * part + offset, in + p * part + offset, bytes);
  }
  return Status::Ok();
}

void PagedKvCache::AppendBlockBases(int seq, std::vector<const uint8_t*>* out) const {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  for (int b : it->second.table) out->push_back(pool_.get() + uint64_t(b) * block_bytes_);
}

const uint8_t* PagedKvCache::KBlock(int layer, int seq, int block) const {
  return BlockPtr(layer, seq, block, 0);
}
const uint8_t* PagedKvCache::VBlock(int layer, int seq, int block) const {
  return BlockPtr(layer, seq, block, 1);
}

int PagedKvCache::LookupHashed(uint64_t parent, uint64_t hash,
                               std::span<const int32_t> tokens) const {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end()) return -1;
  const Block& blk = blocks_[size_t(it->second)];
  if (blk.parent_hash != parent ||
      !std::equal(tokens.begin(), tokens.end(), blk.tokens.begin(), blk.tokens.end())) {
    return -1;  // a collision: treat as a miss
  }
  return it->second;
}

int PagedKvCache::Lookup(uint64_t parent, std::span<const int32_t> tokens, uint64_t* hash) const {
  *hash = ChainHash(parent, tokens);
  return LookupHashed(parent, *hash, tokens);
}

void PagedKvCache::BlockHashes(std::span<const int32_t> tokens,
                               std::vector<uint64_t>* hashes) const {
  const size_t bt = size_t(block_tokens_);
  for (size_t i = hashes->size(); (i + 1) * bt <= tokens.size(); ++i) {
    const uint64_t parent = i == 0 ? kRootHash : (*hashes)[i - 1];
    hashes->push_back(ChainHash(parent, tokens.subspan(i * bt, bt)));
  }
}

int PagedKvCache::CachedPrefixTokens(std::span<const int32_t> tokens, int max_tokens) const {
  const size_t limit = std::min(tokens.size(), static_cast<size_t>(std::max(max_tokens, 0)));
  const size_t bt = size_t(block_tokens_);
  uint64_t parent = kRootHash;
  size_t n = 0;
  while (n + bt <= limit) {
    uint64_t h;
    if (Lookup(parent, tokens.subspan(n, bt), &h) < 0) break;
    parent = h;
    n += bt;
  }
  return static_cast<int>(n);
}

int PagedKvCache::CachedPrefixTokens(std::span<const int32_t> tokens,
                                     std::span<const uint64_t> hashes, int max_tokens) const {
  const size_t limit = std::min(tokens.size(), static_cast<size_t>(std::max(max_tokens, 0)));
  const size_t bt = size_t(block_tokens_);
  uint64_t parent = kRootHash;
  size_t n = 0;
  for (size_t i = 0; i < hashes.size() && n + bt <= limit; ++i, n += bt) {
    if (LookupHashed(parent, hashes[i], tokens.subspan(n, bt)) < 0) break;
    parent = hashes[i];
  }
  return static_cast<int>(n);
}

int PagedKvCache::AttachCachedPrefix(int seq, std::span<const int32_t> tokens, int max_tokens) {
  std::vector<uint64_t> hashes;
  const size_t limit = std::min(tokens.size(), static_cast<size_t>(std::max(max_tokens, 0)));
  BlockHashes(tokens.first(limit), &hashes);
  return AttachCachedPrefix(seq, tokens, hashes, max_tokens);
}

int PagedKvCache::AttachCachedPrefix(int seq, std::span<const int32_t> tokens,
                                     std::span<const uint64_t> hashes, int max_tokens) {
  auto existing = seqs_.find(seq);
  if (existing != seqs_.end() && !existing->second.table.empty()) return 0;
  const size_t limit = std::min({tokens.size(), static_cast<size_t>(std::max(max_tokens, 0)),
                                 static_cast<size_t>(max_seq_len_)});
  const size_t bt = size_t(block_tokens_);
  uint64_t parent = kRootHash;
  size_t n = 0;
  Sequence* s = nullptr;
  for (size_t i = 0; i < hashes.size() && n + bt <= limit; ++i) {
    const int b = LookupHashed(parent, hashes[i], tokens.subspan(n, bt));
    if (b < 0) break;
    if (s == nullptr) s = &seqs_[seq];
    AddRef(b);
    s->table.push_back(b);
    s->hashes.push_back(hashes[i]);
    parent = hashes[i];
    n += bt;
  }
  prefix_hit_tokens_ += n;
  return static_cast<int>(n);
}

void PagedKvCache::CommitTokens(int seq, std::span<const int32_t> tokens,
                                std::span<const uint64_t> known_hashes) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  Sequence& s = it->second;
  const size_t bt = size_t(block_tokens_);
  const size_t full = std::min(tokens.size() / bt, s.table.size());
  while (s.hashes.size() < full) {
    const size_t i = s.hashes.size();
    const uint64_t parent = i == 0 ? kRootHash : s.hashes[i - 1];
    std::span<const int32_t> block_tokens = tokens.subspan(i * bt, bt);
    const uint64_t h =
        i < known_hashes.size() ? known_hashes[i] : ChainHash(parent, block_tokens);
    s.hashes.push_back(h);
    const int b = s.table[i];
    Block& blk = blocks_[size_t(b)];
    // A block with the same contents already cached (another sequence computed the same prefix
    // at the same time) stays private: later requests share the cached one.
    if (blk.cached || by_hash_.count(h) != 0) continue;
    blk.cached = true;
    blk.hash = h;
    blk.parent_hash = parent;
    blk.tokens.assign(block_tokens.begin(), block_tokens.end());
    by_hash_.emplace(h, b);
  }
}

}  // namespace hotline::engine
