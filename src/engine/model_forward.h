// ForwardPass: runs a batch of tokens from any number of sequences through a Model.
//
// A batch is a list of (token, sequence, position) entries; entries of one sequence must have
// consecutive increasing positions, and every earlier position of that sequence must already be in
// the KV cache (from earlier calls or earlier entries of this batch). So one call can mix the
// prompt chunk of a new sequence with the next decode token of several running ones: every weight
// matrix is streamed once per call for all of them (MatMul's many-token form), which is what
// makes batched decoding and prefill fast. K and V of each entry are written into the cache at
// (seq, pos); the cache grows as needed.
//
// Logits are produced only for entries with `logits` set, in batch order.
//
// A pass can also be run in parts: Begin, then Advance layer by layer, then End. Between layers,
// Join adds the tokens of other sequences to the pass in flight: they are first run alone through
// the layers already done, then carried on together with the rest. The scheduler uses it to let a
// request that arrives during a pass (a caller waiting for the first word) ride along instead of
// waiting a whole pass for the next one. Each token's arithmetic is the same either way.
//
// Ownership and threads: a ForwardPass borrows the Model and ComputePool (both must outlive it)
// and owns its activation buffers, which grow to the largest batch seen and are then reused
// (no allocation per token in steady state). One thread at a time calls Run().
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/status.h"
#include "engine/compute_pool.h"
#include "engine/kv_cache.h"
#include "engine/model.h"

namespace hotline::engine {

struct BatchToken {
  int32_t token = 0;
  int seq = 0;
  int pos = 0;
  bool logits = false;
};

class ForwardPass {
 public:
  // `fused_attention` false: PlainAttention (engine.flash_attention, for comparisons).
  ForwardPass(const Model& model, ComputePool& pool, bool fused_attention = true)
      : model_(model), pool_(pool), fused_attention_(fused_attention) {}

  // Errors: InvalidArgument for a token id outside the vocabulary, a negative position, or
  // positions of a sequence that are not consecutive; ResourceExhausted when the cache is full.
  // On error nothing is computed (the cache may have grown).
  Status Run(std::span<const BatchToken> batch, KvCache& kv, std::vector<float>* logits);

  // The same pass in parts. Begin validates and embeds (errors as Run; nothing is computed on
  // error). Advance runs layers up to `to_layer` (exclusive). Join adds `extra` (sequences not in
  // the pass; the same rules as a batch) at the current layer: Validate errors, or
  // InvalidArgument for a sequence already in the pass; on error the pass goes on without them.
  // End runs the remaining layers and writes the logits of every entry that asked for them, the
  // joined ones last in their order. `kv` must outlive the pass.
  Status Begin(std::span<const BatchToken> batch, KvCache& kv);
  Status Advance(int to_layer);
  Status Join(std::span<const BatchToken> extra);
  Status End(std::vector<float>* logits);
  // Layers done by the pass in flight, and the model's layer count.
  int layer() const { return layer_; }
  int n_layer() const { return model_.hparams().n_layer; }
  // Entries in the pass in flight (after joins).
  int size() const { return n_; }

  // Size of one token's logits.
  int n_vocab() const { return model_.hparams().n_vocab; }

 private:
  Status Validate(std::span<const BatchToken> batch, KvCache& kv);
  void Resize(int n);
  // Block tables, embeddings and rotary angles of batch_.
  void Prepare();
  Status Layer(int l);

  // The pass in flight.
  std::vector<BatchToken> batch_;
  KvCache* kv_ = nullptr;
  int n_ = 0;
  int layer_ = 0;
  std::unique_ptr<ForwardPass> joiner_;  // runs joined tokens up to layer_

  const Model& model_;
  ComputePool& pool_;
  const bool fused_attention_;
  // Activations, n tokens x width each.
  std::vector<float> x_, xn_, q_, k_, v_, att_, tmp_, gate_, up_, sel_;
  std::vector<float> rope_cos_, rope_sin_;
  std::vector<int> seqs_, n_ctx_;
  // Block tables of the batch's sequences, resolved once per Run: token t's sequence's blocks
  // are block_bases_[block_first_[t] ...].
  std::vector<const uint8_t*> block_bases_;
  std::vector<int> block_first_;
  std::vector<std::pair<int, int>> seq_first_;  // (sequence, its first index in block_bases_)
};

}  // namespace hotline::engine
