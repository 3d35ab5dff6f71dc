#include "engine/kv_cache.h"

#include <new>
#include <string>

namespace hotline::engine {

Result<KvType> ParseKvType(std::string_view name) {
  if (name == "f32") return KvType::kF32;
  if (name == "f16") return KvType::kF16;
  if (name == "q8_0") return KvType::kQ8_0;
  return InvalidArgumentError("unknown KV cache type '" + std::string(name) +
                              "' (use f16, q8_0 or f32)");
}

const char* KvTypeName(KvType t) {
  switch (t) {
    case KvType::kF32: return "f32";
    case KvType::kF16: return "f16";
    case KvType::kQ8_0: return "q8_0";
  }
  return "?";
}

GgmlType KvGgmlType(KvType t) {
  switch (t) {
    case KvType::kF32: return GgmlType::F32;
    case KvType::kF16: return GgmlType::F16;
    case KvType::kQ8_0: return GgmlType::Q8_0;
  }
  return GgmlType::F32;
}

int64_t KvLayout::head_bytes() const {
  const GgmlTypeInfo* info = GetTypeInfo(KvGgmlType(type));
  return head_dim / info->block_elems * info->block_bytes;
}

int64_t KvLayout::row_bytes() const { return head_bytes() * n_head_kv; }

Status KvLayout::Validate() const {
  if (n_layer < 1 || n_head_kv < 1 || head_dim < 1) {
    return InvalidArgumentError("KV layout needs at least one layer, head and dimension");
  }
  if (type == KvType::kQ8_0 && head_dim % 32 != 0) {
    return InvalidArgumentError("kv_type q8_0 needs a head dimension that is a multiple of 32; "
                                "this model's is " + std::to_string(head_dim) +
                                " (use kv_type f16)");
  }
  return Status::Ok();
}

Result<std::unique_ptr<PerSequenceKvCache>> PerSequenceKvCache::Create(const KvLayout& layout,
                                                                       int block_tokens,
                                                                       int max_seq_len,
                                                                       uint64_t max_total_bytes) {
  RETURN_IF_ERROR(layout.Validate());
  if (block_tokens < 1 || max_seq_len < 1) {
    return InvalidArgumentError("KV cache block_tokens and max_seq_len must be positive");
  }
  std::unique_ptr<PerSequenceKvCache> c(new PerSequenceKvCache());
  c->layout_ = layout;
  c->block_tokens_ = block_tokens;
  c->max_seq_len_ = max_seq_len;
  c->max_total_bytes_ = max_total_bytes;
  c->block_bytes_ = static_cast<uint64_t>(layout.row_bytes()) * block_tokens * 2 * layout.n_layer;
  return c;
}

Status PerSequenceKvCache::EnsureCapacity(int seq, int n_tokens) {
  if (n_tokens > max_seq_len_) {
    return ResourceExhaustedError("sequence would hold " + std::to_string(n_tokens) +
                                  " tokens, more than max_seq_len " +
                                  std::to_string(max_seq_len_));
  }
  Sequence& s = seqs_[seq];
  const size_t need = static_cast<size_t>((n_tokens + block_tokens_ - 1) / block_tokens_);
  while (s.blocks.size() < need) {
    if (max_total_bytes_ != 0 && bytes_in_use_ + block_bytes_ > max_total_bytes_) {
      return ResourceExhaustedError("KV cache budget of " + std::to_string(max_total_bytes_) +
                                    " bytes is full; free sequences or raise kv_cache_bytes");
    }
    std::unique_ptr<uint8_t[]> b(new (std::nothrow) uint8_t[block_bytes_]);
    if (!b) return ResourceExhaustedError("out of memory for a KV cache block");
    s.blocks.push_back(std::move(b));
    bytes_in_use_ += block_bytes_;
  }
  return Status::Ok();
}

void PerSequenceKvCache::RemoveSequence(int seq) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  bytes_in_use_ -= block_bytes_ * it->second.blocks.size();
  seqs_.erase(it);
}

int PerSequenceKvCache::Capacity(int seq) const {
  auto it = seqs_.find(seq);
  return it == seqs_.end() ? 0 : static_cast<int>(it->second.blocks.size()) * block_tokens_;
}

const uint8_t* PerSequenceKvCache::Block(int layer, int seq, int block, int kv) const {
  const Sequence& s = seqs_.at(seq);
  const uint64_t part = static_cast<uint64_t>(layout_.row_bytes()) * block_tokens_;
  return s.blocks[static_cast<size_t>(block)].get() + (2 * layer + kv) * part;
}

void PerSequenceKvCache::AppendBlockBases(int seq, std::vector<const uint8_t*>* out) const {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  for (const auto& b : it->second.blocks) out->push_back(b.get());
}

const uint8_t* PerSequenceKvCache::KBlock(int layer, int seq, int block) const {
  return Block(layer, seq, block, 0);
}
const uint8_t* PerSequenceKvCache::VBlock(int layer, int seq, int block) const {
  return Block(layer, seq, block, 1);
}

}  // namespace hotline::engine
