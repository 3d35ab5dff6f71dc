// Named presets of instruction-tuned GGUF models that suit CPU call serving, for
// `hotline model pull NAME` and the ready configurations in config/.
//
// Each preset says where the file is (URL and file name of a GGUF build on Hugging Face), which
// quantization is recommended for it and why, how its prompts are formatted (chat template) and
// where its answers end (stop tokens), and the prompt budget Hotline gives it on a call (prompt
// tokens, answer tokens, passages). Checksums are given only where they were checked; an
// unknown one is empty and `hotline model pull` reports the file's SHA-256 instead of checking
// it.
//
// Thread-safety: immutable static data.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace hotline::engine {

struct ModelPreset {
  std::string_view name;          // "qwen2.5-0.5b": what `hotline model pull` takes
  std::string_view display_name;  // "Qwen2.5 0.5B Instruct"
  std::string_view architecture;  // GGUF general.architecture: "qwen2", "llama"
  std::string_view url;        // the GGUF file (https://huggingface.co/<repo>/resolve/main/<file>)
  std::string_view file_name;  // local file name under the models folder
  std::string_view quantization;  // "Q8_0", "Q4_K_M"
  std::string_view quantization_why;
  std::string_view chat_format;  // engine ChatFormat name: "chatml", "llama3"
  std::string_view stop_tokens;  // comma-separated end-of-turn tokens
  std::string_view sha256;       // lower-case hex; "" = unknown
  double parameters_billion = 0;
  double file_gib = 0;           // approximate download size
  int context_tokens = 0;        // the model's trained context
  int prompt_tokens = 600;       // Hotline's prompt budget on a call
  int answer_tokens = 60;        // tokens generated at most per answer
  int passages = 3;              // knowledge-base passages in the prompt
  std::string_view config_file;  // the ready configuration under config/
};

// Every preset, smallest first.
std::span<const ModelPreset> ModelPresets();

// The preset named `name` (case-insensitive), or nullptr.
const ModelPreset* FindModelPreset(std::string_view name);

}  // namespace hotline::engine
