#include "engine/model_presets.h"

#include <array>
#include <cctype>

namespace hotline::engine {

namespace {

// Facts from each model's card (context, chat format, end-of-turn tokens) and the GGUF
// repositories' file lists (file names, sizes). Quantization: Q8_0 for the smallest models,
// whose quality drops most at 4 bits and whose Q8_0 files are still small; Q4_K_M from 1 B up,
// where decoding on a CPU is bound by memory bandwidth and 4-bit weights are about twice as fast
// as 8-bit ones at a small quality cost.
constexpr std::array<ModelPreset, 7> kPresets = {{
    {"smollm2-360m", "SmolLM2 360M Instruct", "llama",
     "https://huggingface.co/HuggingFaceTB/SmolLM2-360M-Instruct-GGUF/resolve/main/"
     "smollm2-360m-instruct-q8_0.gguf",
     "smollm2-360m-instruct-q8_0.gguf", "Q8_0",
     "small enough that 8-bit weights cost little; 4-bit hurts a model this size most", "chatml",
     "<|im_end|>,<|endoftext|>", "", 0.36, 0.36, 8192, 600, 60, 3,
     "config/models/smollm2-360m.yaml"},
    {"qwen2.5-0.5b", "Qwen2.5 0.5B Instruct", "qwen2",
     "https://huggingface.co/bartowski/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/"
     "Qwen2.5-0.5B-Instruct-Q8_0.gguf",
     "Qwen2.5-0.5B-Instruct-Q8_0.gguf", "Q8_0",
     "small enough that 8-bit weights cost little; 4-bit hurts a model this size most", "chatml",
     "<|im_end|>,<|endoftext|>", "", 0.49, 0.49, 32768, 600, 60, 3,
     "config/models/qwen2.5-0.5b.yaml"},
    {"llama3.2-1b", "Llama 3.2 1B Instruct", "llama",
     "https://huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF/resolve/main/"
     "Llama-3.2-1B-Instruct-Q4_K_M.gguf",
     "Llama-3.2-1B-Instruct-Q4_K_M.gguf", "Q4_K_M",
     "4-bit K-quants halve the bytes read per token (decode speed on a CPU) at a small cost",
     "llama3", "<|eot_id|>,<|end_of_text|>,<|eom_id|>", "", 1.24, 0.81, 131072, 600, 60, 3,
     "config/models/llama3.2-1b.yaml"},
    {"qwen2.5-1.5b", "Qwen2.5 1.5B Instruct", "qwen2",
     "https://huggingface.co/bartowski/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/"
     "Qwen2.5-1.5B-Instruct-Q4_K_M.gguf",
     "Qwen2.5-1.5B-Instruct-Q4_K_M.gguf", "Q4_K_M",
     "4-bit K-quants halve the bytes read per token (decode speed on a CPU) at a small cost",
     "chatml", "<|im_end|>,<|endoftext|>", "", 1.54, 0.99, 32768, 600, 60, 3,
     "config/models/qwen2.5-1.5b.yaml"},
    {"smollm2-1.7b", "SmolLM2 1.7B Instruct", "llama",
     "https://huggingface.co/HuggingFaceTB/SmolLM2-1.7B-Instruct-GGUF/resolve/main/"
     "smollm2-1.7b-instruct-q4_k_m.gguf",
     "smollm2-1.7b-instruct-q4_k_m.gguf", "Q4_K_M",
     "4-bit K-quants halve the bytes read per token (decode speed on a CPU) at a small cost",
     "chatml", "<|im_end|>,<|endoftext|>", "", 1.71, 1.06, 8192, 600, 60, 3,
     "config/models/smollm2-1.7b.yaml"},
    {"llama3.2-3b", "Llama 3.2 3B Instruct", "llama",
     "https://huggingface.co/bartowski/Llama-3.2-3B-Instruct-GGUF/resolve/main/"
     "Llama-3.2-3B-Instruct-Q4_K_M.gguf",
     "Llama-3.2-3B-Instruct-Q4_K_M.gguf", "Q4_K_M",
     "4-bit K-quants halve the bytes read per token (decode speed on a CPU) at a small cost",
     "llama3", "<|eot_id|>,<|end_of_text|>,<|eom_id|>", "", 3.21, 2.02, 131072, 600, 60, 3,
     "config/models/llama3.2-3b.yaml"},
    {"qwen2.5-3b", "Qwen2.5 3B Instruct", "qwen2",
     "https://huggingface.co/bartowski/Qwen2.5-3B-Instruct-GGUF/resolve/main/"
     "Qwen2.5-3B-Instruct-Q4_K_M.gguf",
     "Qwen2.5-3B-Instruct-Q4_K_M.gguf", "Q4_K_M",
     "4-bit K-quants halve the bytes read per token (decode speed on a CPU) at a small cost",
     "chatml", "<|im_end|>,<|endoftext|>", "", 3.09, 1.93, 32768, 600, 60, 3,
     "config/models/qwen2.5-3b.yaml"},
}};

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::span<const ModelPreset> ModelPresets() { return kPresets; }

const ModelPreset* FindModelPreset(std::string_view name) {
  for (const ModelPreset& p : kPresets) {
    if (EqualsIgnoreCase(p.name, name)) return &p;
  }
  return nullptr;
}

}  // namespace hotline::engine
