// Export of a trained model as a GGUF file the engine loads (`general.architecture` = llama):
// the hyper-parameters, the byte-level BPE vocabulary and chat template, and every parameter
// tensor as F32 — or, through engine::QuantizeGguf, with the 2-D matrices as Q8_0.
//
// Thread-safety: pure functions over their arguments; blocking file I/O.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "engine/compute_pool.h"
#include "engine/gguf.h"
#include "engine/vocab.h"
#include "train/transformer.h"

namespace hotline::train {

// The ChatML template text written as tokenizer.chat_template (the engine recognizes the format
// by its <|im_start|> marker).
inline constexpr char kChatMlTemplate[] =
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}";

// Fills `w` with the model's metadata, vocabulary and F32 tensors. The tensors are borrowed from
// `params`, which must outlive the writer's Write*() call. InvalidArgument when the vocabulary
// size differs from the shape's or the parameter count does not match.
Status BuildGguf(const ModelShape& shape, std::span<const float> params,
                 const engine::VocabData& vocab, const std::string& name, engine::GgufWriter* w);

// Writes the F32 file to `path`.
Status ExportGgufF32(const ModelShape& shape, std::span<const float> params,
                     const engine::VocabData& vocab, const std::string& name,
                     const std::string& path);

// Writes a Q8_0 copy of the F32 file `f32_path` (matrices quantized; norms stay F32). The
// matrices' input widths (dim and n_ff) must be multiples of 32.
Status ExportGgufQ8(const std::string& f32_path, const std::string& q8_path,
                    engine::ComputePool& pool);

}  // namespace hotline::train
