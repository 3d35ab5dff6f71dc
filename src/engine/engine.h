// Engine: the embedded LLM as the rest of Hotline sees it.
//
//   auto engine = Engine::Load(config);                 // once: maps the GGUF, checks every tensor
//   int seq = *engine->CreateSequence();
//   auto result = engine->Generate(seq, prompt_ids, sampling,
//                                  [&](int32_t tok) { ...stream it...; return true; });
//   engine->RemoveSequence(seq);
//
// Sequences keep their KV cache between calls, so a conversation feeds only each new turn's
// tokens (Feed / Generate append to what the sequence already holds). Generation stops at
// `max_tokens`, an end-of-generation token of the model (EOS, end-of-turn), a callback returning
// false, cancellation, or max_seq_len.
//
// Threads: an Engine is driven by one thread at a time (the caller's, or a BatchScheduler's, which
// then owns it: batch_scheduler.h); its compute threads are internal. The only call safe from other
// threads is setting the `cancel` flag passed to Generate (checked before every token). Blocking:
// Load, Feed and Generate block while they compute.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "engine/compute_pool.h"
#include "engine/gguf.h"
#include "engine/kv_cache.h"
#include "engine/model.h"
#include "engine/model_forward.h"
#include "engine/sampler.h"

namespace hotline::engine {

struct EngineConfig {
  // GGUF model file (llama or qwen2 family).
  std::string model_path;
  // Compute threads (caller included). More than the physical cores only adds contention;
  // decode is memory-bound, so 2-4 threads often reach the bus limit.
  int threads = 2;
  // Longest sequence (prompt + generated) in tokens; capped at the model's training context.
  // Larger allows longer calls but costs KV memory per sequence; 2048 keeps tail latency low.
  int max_seq_len = 4096;
  // KV cache element type: f16 (default, exact enough), q8_0 (half the memory, small loss; needs
  // head_dim % 32 == 0), f32 (reference, double the memory).
  std::string kv_type = "f16";
  // Tokens per KV block. Larger blocks mean fewer allocations; smaller ones waste less memory on
  // short sequences and let the batching scheduler's prefix cache share more (it shares whole
  // blocks: a 500-token system prompt reuses 496 tokens with 16-token blocks).
  int kv_block_tokens = 16;
  // KV memory over all sequences in bytes. The batching scheduler allocates exactly this much as
  // its block pool (0 = enough for max_batch_size sequences of max_seq_len); when it runs out,
  // the lowest-priority sequence is preempted, and a request that cannot fit even alone fails
  // with ResourceExhausted instead of exhausting the machine. (The Engine's own per-sequence
  // cache, used without the scheduler, e.g. by `engine run`, takes 0 as no limit.)
  uint64_t kv_cache_bytes = 0;
  // Prompt tokens per forward pass during prefill. Larger batches use the weights better; smaller
  // ones bound the activation memory and the time one pass holds the engine.
  int max_batch_tokens = 512;
  // Kernel instruction set: auto, avx512, avxvnni, avx2, scalar (for comparisons and debugging).
  std::string kernel = "auto";
  // Batching scheduler: sequences per forward pass. Decode streams every weight once per pass
  // whatever the batch, so more sequences raise aggregate tokens/s until compute, not memory,
  // is the limit; each also slows every pass a little (inter-token latency).
  int max_batch_size = 16;
  // Batching scheduler: tokens per forward pass (one per decoding sequence plus prompt chunks).
  // Larger prefills faster; smaller bounds how long a long prompt stalls the running streams.
  int max_num_batched_tokens = 512;
  // Batching scheduler: a request that arrives while a pass is in flight, and whose prompt has at
  // most this many tokens left to compute after the prefix cache (a caller's new turn on a cached
  // system prompt), joins that pass between layers instead of waiting for the next one. Its
  // first token comes about one pass sooner; the running streams' token is delayed by the
  // layers it catches up alone. Only in the first half of a pass. 0 = off.
  int join_max_tokens = 64;
  // Fused attention (online softmax over chunks, K/V converted once per KV head). false: the
  // textbook form that materializes every score (PlainAttention), kept for the ablation
  // benchmark; slower on long contexts, same output to rounding.
  bool flash_attention = true;
  // Speculative decoding (batching scheduler): up to this many tokens guessed per decoding
  // sequence and pass, by prompt lookup and from recent answers (engine/speculative.h), checked
  // in the same pass; the output stays exactly what decoding without them gives. 0 = off.
  int speculative_tokens = 4;
  // Speculate only in passes with at most this many decoding sequences: a larger batch already
  // uses the weights it streams, and drafts would only add compute.
  int speculative_max_batch = 4;
  // A sequence whose drafts are accepted less often than this (over its last 16 drafted tokens)
  // stops drafting for its next 32 tokens.
  double speculative_min_acceptance = 0.25;
  // Draft only where it pays: the scheduler times its decode passes with and without drafts
  // (per number of decoding sequences) and drafts only where tokens come faster with them
  // (SpeculationGovernor). false: draft in every pass that allows it (tests, comparisons).
  bool speculative_adaptive = true;
  // Tokens of recent answers kept to draft from (the answer n-gram cache); 0 = prompt lookup only.
  int speculative_cache_tokens = 65536;

  template <class V>
  void Visit(V& v) {
    v.Field("model_path", model_path, "GGUF model file");
    v.Field("threads", threads, "Compute threads");
    v.Field("max_seq_len", max_seq_len,
            "Longest sequence in tokens (prompt + generated); longer chats lose their oldest "
            "turns whole, keeping the system prompt and the last user turn (min_reply_tokens)");
    v.Field("kv_type", kv_type, "KV cache type: f16, q8_0, f32");
    v.Field("kv_block_tokens", kv_block_tokens, "Tokens per KV cache block");
    v.Field("kv_cache_bytes", kv_cache_bytes,
            "KV cache memory in bytes (0 = max_batch_size sequences of max_seq_len)");
    v.Field("max_batch_tokens", max_batch_tokens, "Prompt tokens per forward pass");
    v.Field("kernel", kernel, "Kernel path: auto, avx512, avxvnni, avx2, scalar");
    v.Field("max_batch_size", max_batch_size, "Sequences per batched forward pass");
    v.Field("max_num_batched_tokens", max_num_batched_tokens,
            "Tokens per batched forward pass (decode tokens + prompt chunks)");
    v.Field("join_max_tokens", join_max_tokens,
            "A request arriving mid-pass with at most this many uncached prompt tokens joins the "
            "pass in flight between layers (first token about one pass sooner); 0 = off");
    v.Field("flash_attention", flash_attention,
            "Fused online-softmax attention (false: plain attention, for comparisons)");
    v.Field("speculative_tokens", speculative_tokens,
            "Speculative decoding: tokens drafted per decoding sequence and pass (prompt lookup "
            "and recent answers), verified in the same pass; output unchanged; 0 = off");
    v.Field("speculative_max_batch", speculative_max_batch,
            "Speculate only in passes with at most this many decoding sequences");
    v.Field("speculative_min_acceptance", speculative_min_acceptance,
            "A sequence whose drafts are accepted less often than this pauses drafting");
    v.Field("speculative_adaptive", speculative_adaptive,
            "Draft only where timed passes show tokens come faster with drafts");
    v.Field("speculative_cache_tokens", speculative_cache_tokens,
            "Tokens of recent answers kept to draft from; 0 = prompt lookup only");
  }
  Status Validate() const;
};

// Why generation ended.
enum class FinishReason : uint8_t { kLength, kStop, kCallback, kCancelled, kContextFull };
const char* FinishReasonName(FinishReason r);

struct GenerationTimings {
  int prompt_tokens = 0;
  int generated_tokens = 0;
  double prefill_ms = 0;      // prompt forward passes
  double first_token_ms = 0;  // call start -> first token handed to the callback
  double decode_ms = 0;       // first token -> last token
  double total_ms = 0;

  double prefill_tokens_per_s() const {
    return prefill_ms > 0 ? prompt_tokens * 1000.0 / prefill_ms : 0;
  }
  // Tokens after the first one, over the time after the first one.
  double decode_tokens_per_s() const {
    return decode_ms > 0 && generated_tokens > 1 ? (generated_tokens - 1) * 1000.0 / decode_ms : 0;
  }
};

struct GenerationResult {
  std::vector<int32_t> tokens;  // generated, excluding a final end-of-generation token
  FinishReason finish = FinishReason::kLength;
  GenerationTimings timings;
};

// Return false to stop generating (e.g. a stop string matched or the caller hung up).
using TokenCallback = std::function<bool(int32_t token)>;

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> Load(const EngineConfig& config);

  const Model& model() const { return *model_; }
  const GgufFile& file() const { return *file_; }
  std::shared_ptr<const GgufFile> shared_file() const { return file_; }
  const EngineConfig& config() const { return config_; }
  int max_seq_len() const { return max_seq_len_; }
  const KvCache& kv_cache() const { return *kv_; }
  // The compute threads (for a BatchScheduler, which then drives them instead of this Engine).
  ComputePool& compute_pool() { return *pool_; }
  // Tokens that end generation (EOS, end-of-turn) as the file names them.
  const std::vector<int32_t>& stop_tokens() const { return stop_tokens_; }

  Result<int> CreateSequence();
  // Frees the sequence's KV cache. Unknown ids are ignored.
  void RemoveSequence(int seq);
  // Tokens the sequence holds (fed + generated); 0 for unknown sequences.
  int SequenceLength(int seq) const;
  // The tokens the sequence holds, in order (empty for unknown sequences). Valid until the next
  // call that changes the sequence.
  std::span<const int32_t> SequenceTokens(int seq) const;
  // Forgets positions >= n_tokens of the sequence, so the next Feed continues from position
  // n_tokens (prefix reuse: keep a shared prompt prefix, drop what followed it). The KV rows past
  // n_tokens stay allocated and are overwritten by later feeds; attention never reads them, since
  // it looks only at positions up to the one being computed. n_tokens >= SequenceLength is a
  // no-op. Errors: unknown sequence, negative n_tokens.
  Status TruncateSequence(int seq, int n_tokens);

  // Appends `tokens` to the sequence and returns the logits after the last one (n_vocab floats,
  // valid until the next call). Errors: unknown sequence, bad token id, max_seq_len exceeded.
  Result<std::span<const float>> Feed(int seq, std::span<const int32_t> tokens);

  // Feeds `prompt` (at least one token; appended to what the sequence holds), then samples up to
  // sampling.max_tokens tokens, calling `on_token` for each (not for the end-of-generation token).
  // `cancel` may be set from any thread. Cancellation and callbacks are not errors: see
  // GenerationResult::finish.
  Result<GenerationResult> Generate(int seq, std::span<const int32_t> prompt,
                                    const SamplingConfig& sampling, const TokenCallback& on_token,
                                    const std::atomic<bool>* cancel = nullptr);

 private:
  Engine() = default;
  struct Sequence {
    std::vector<int32_t> tokens;
  };

  EngineConfig config_;
  std::shared_ptr<const GgufFile> file_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<ComputePool> pool_;
  std::unique_ptr<KvCache> kv_;
  std::unique_ptr<ForwardPass> forward_;
  int max_seq_len_ = 0;
  std::vector<int32_t> stop_tokens_;
  std::unordered_map<int, Sequence> seqs_;
  int next_seq_ = 0;
  std::vector<BatchToken> batch_;
  std::vector<float> logits_;
};

}  // namespace hotline::engine
