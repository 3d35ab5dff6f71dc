// Import of llama2.c checkpoints (Karpathy's llama2.c, "version 0" export) into GGUF.
//
// Checkpoint: 7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len; a
// negative vocab_size means the classifier is not shared with the embedding), then float32
// tensors: token_embedding [vocab][dim], rms_att [L][dim], wq [L][n_heads*hs][dim],
// wk/wv [L][n_kv_heads*hs][dim], wo [L][dim][n_heads*hs], rms_ffn [L][dim], w1/w3 [L][hidden][dim],
// w2 [L][dim][hidden], rms_final [dim], freq_cis_real/imag [seq_len][hs/2] (skipped), [wcls].
// Tokenizer: int32 max_token_length, then per token: float score, int32 length, bytes.
//
// Output: an F32 `llama` GGUF with an SPM-style vocabulary (tokenizer.ggml.model = "llama"; spaces
// as U+2581; <unk>/<s>/</s> typed unknown/control; <0xNN> typed byte). llama2.c rotates adjacent
// pairs (q[2i], q[2i+1]) with theta = pos / 10000^(2i/hs), which is exactly the llama-family rope
// of the GGUF loader (ggml "normal" mode), so wq/wk are written as stored. (Hugging Face llama
// weights need the row permutation that HF->GGUF converters apply because HF rotates half-split
// pairs; llama2.c's training code never did.) The test on stories260K proves the equivalence: 200
// greedy tokens equal the original program's output byte for byte.
//
// Every size in both files is validated against the file length before anything is allocated.
#pragma once

#include <string>

#include "common/status.h"
#include "engine/gguf.h"

namespace hotline::engine {

struct Llama2cHeader {
  int dim = 0;
  int hidden_dim = 0;
  int n_layers = 0;
  int n_heads = 0;
  int n_kv_heads = 0;
  int vocab_size = 0;  // absolute value
  bool shared_classifier = true;
  int seq_len = 0;
};

// Fills `out` with the model's metadata and tensors (owned by the writer).
Status Llama2cToGguf(const std::string& checkpoint_path, const std::string& tokenizer_path,
                     GgufWriter* out, Llama2cHeader* header = nullptr);

// Llama2cToGguf + write to `out_path`.
Status ConvertLlama2c(const std::string& checkpoint_path, const std::string& tokenizer_path,
                      const std::string& out_path, Llama2cHeader* header = nullptr);

}  // namespace hotline::engine
