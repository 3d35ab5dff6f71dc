// Whole-model tools built on the row quantizers: convert a GGUF file's weights to a quantized
// type, and write a random-weight model with the shape of a real one (for benchmarks).
//
// Both stream: each tensor is produced at write time, row by row on the ComputePool's threads,
// so memory stays at one tensor's worth whatever the model size.
// Thread-safety: the functions may run concurrently on different files and pools. Blocking.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"
#include "engine/compute_pool.h"
#include "engine/ggml_types.h"

namespace hotline::engine {

struct QuantizeStats {
  int tensors_quantized = 0;
  int tensors_kept = 0;  // 1-D tensors (norms, biases) and tensors that do not fit the blocks
  uint64_t bytes_in = 0;
  uint64_t bytes_out = 0;
};

// Reads `in_path` (GGUF), writes `out_path` with every 2-D weight matrix whose rows are a whole
// number of blocks converted to `target` (Q8_0, Q4_0, Q4_K, or any type QuantizeRow supports)
// and everything else (1-D norms and biases, metadata) copied unchanged; general.file_type is
// updated. Source weights may be F32, F16, BF16 or a quantized type (decoded first).
// Errors: unreadable input, unsupported target, write failures.
Result<QuantizeStats> QuantizeGguf(const std::string& in_path, const std::string& out_path,
                                   GgmlType target, ComputePool& pool);

struct RandomModelSpec {
  std::string arch = "qwen2";  // "llama" or "qwen2"
  std::string shape = "tiny";  // "tiny", "0.5b" (Qwen2.5-0.5B dims) or "1b" (Llama-3.2-1B dims)
  GgmlType type = GgmlType::Q4_0;  // type of the 2-D weight matrices; norms/biases are F32
  uint64_t seed = 1;
};

struct RandomModelInfo {
  int64_t n_embd = 0, n_layer = 0, n_head = 0, n_head_kv = 0, n_ff = 0, n_vocab = 0;
  uint64_t file_bytes = 0;
};

// Writes a complete, loadable model: llama/qwen2 metadata, a byte-level BPE vocabulary
// (256 byte tokens, a few hundred merges, the family's special tokens, padded with unused
// tokens to the vocabulary size), and weights drawn from a seeded generator (same seed, same
// file, whatever the thread count). Scales keep activations finite through every layer.
Result<RandomModelInfo> WriteRandomModel(const RandomModelSpec& spec, const std::string& out_path,
                                         ComputePool& pool);

}  // namespace hotline::engine
