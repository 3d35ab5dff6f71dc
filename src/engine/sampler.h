// Sampler: picks the next token from a row of logits.
//
// Order of operations (as common engines apply them): repetition penalty over the last
// `repeat_last_n` tokens (positive logits divided by the penalty, negative ones multiplied), then
// greedy argmax when temperature == 0; otherwise top-k, temperature, softmax, top-p (nucleus),
// and a draw from the seeded RNG. Same seed + same logits = same tokens.
//
// Ownership and threads: one Sampler per sequence; not thread-safe. Sample() reuses internal
// buffers (allocation only when the vocabulary is larger than before).
#pragma once

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "common/status.h"

namespace hotline::engine {

struct SamplingConfig {
  // 0 = greedy (deterministic, best for short factual answers); 0.6-0.9 for varied phrasing.
  float temperature = 0.0f;
  // Keep only the k most likely tokens before sampling (0 = all). Smaller is safer and faster.
  int top_k = 40;
  // Keep the smallest set of tokens whose probability sums to top_p (1 = all).
  float top_p = 0.95f;
  // > 1 discourages repeating recent tokens; 1 = off. Too high garbles names and numbers.
  float repetition_penalty = 1.0f;
  // How many recent tokens the penalty looks at.
  int repeat_last_n = 64;
  // RNG seed; fixed seeds make sampled runs reproducible.
  uint64_t seed = 0;
  // Upper bound on generated tokens per request.
  int max_tokens = 256;
  // Beams searched; only 1 (no beam search) is supported: beams multiply latency.
  int beam_width = 1;

  template <class V>
  void Visit(V& v) {
    v.Field("temperature", temperature, "Sampling temperature; 0 = greedy");
    v.Field("top_k", top_k, "Sample among the k most likely tokens; 0 = all");
    v.Field("top_p", top_p, "Nucleus sampling probability mass; 1 = off");
    v.Field("repetition_penalty", repetition_penalty, "Penalty for recent tokens; 1 = off");
    v.Field("repeat_last_n", repeat_last_n, "Recent tokens the penalty considers");
    v.Field("seed", seed, "Random seed for sampling");
    v.Field("max_tokens", max_tokens, "Maximum tokens generated per request");
    v.Field("beam_width", beam_width, "Beam search width; only 1 is supported");
  }
  Status Validate() const;
};

class Sampler {
 public:
  explicit Sampler(const SamplingConfig& config);

  // `recent`: tokens generated or fed so far (only the last repeat_last_n are used).
  // REQUIRES: !logits.empty(). Non-finite logits are treated as -infinity.
  int32_t Sample(std::span<const float> logits, std::span<const int32_t> recent);

  const SamplingConfig& config() const { return config_; }

 private:
  SamplingConfig config_;
  std::mt19937_64 rng_;
  std::vector<float> work_;
  std::vector<std::pair<float, int32_t>> cand_;
};

}  // namespace hotline::engine
