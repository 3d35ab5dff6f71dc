#include "train/export.h"

#include <cstring>

#include "engine/ggml_types.h"
#include "engine/quant_model.h"

namespace hotline::train {

Status BuildGguf(const ModelShape& shape, std::span<const float> params,
                 const engine::VocabData& vocab, const std::string& name, engine::GgufWriter* w) {
  RETURN_IF_ERROR(shape.Validate());
  const ParamLayout layout(shape);
  if (params.size() != layout.total()) {
    return InvalidArgumentError("parameter count does not match the model shape");
  }
  if (vocab.tokens.size() != size_t(shape.n_vocab)) {
    return InvalidArgumentError("vocabulary has " + std::to_string(vocab.tokens.size()) +
                                " tokens, the model " + std::to_string(shape.n_vocab));
  }
  const std::string a = "llama";
  w->SetString("general.architecture", a);
  w->SetString("general.name", name);
  w->SetU32("general.file_type", 0);  // all F32
  w->SetU32(a + ".context_length", static_cast<uint32_t>(shape.seq_len));
  w->SetU32(a + ".embedding_length", static_cast<uint32_t>(shape.dim));
  w->SetU32(a + ".block_count", static_cast<uint32_t>(shape.n_layer));
  w->SetU32(a + ".feed_forward_length", static_cast<uint32_t>(shape.n_ff));
  w->SetU32(a + ".attention.head_count", static_cast<uint32_t>(shape.n_head));
  w->SetU32(a + ".attention.head_count_kv", static_cast<uint32_t>(shape.n_head_kv));
  w->SetU32(a + ".rope.dimension_count", static_cast<uint32_t>(shape.head_dim()));
  w->SetF32(a + ".rope.freq_base", shape.rope_base);
  w->SetF32(a + ".attention.layer_norm_rms_epsilon", shape.rms_eps);
  w->SetU32(a + ".vocab_size", static_cast<uint32_t>(shape.n_vocab));

  w->SetString("tokenizer.ggml.model", vocab.model);
  if (!vocab.pre.empty()) w->SetString("tokenizer.ggml.pre", vocab.pre);
  w->SetStringArray("tokenizer.ggml.tokens", std::span<const std::string>(vocab.tokens));
  if (!vocab.token_types.empty()) {
    w->SetI32Array("tokenizer.ggml.token_type", std::span<const int32_t>(vocab.token_types));
  }
  w->SetStringArray("tokenizer.ggml.merges", std::span<const std::string>(vocab.merges));
  auto id = [&](const char* key, engine::TokenId v) {
    if (v != engine::kNoToken) w->SetU32(key, static_cast<uint32_t>(v));
  };
  id("tokenizer.ggml.bos_token_id", vocab.bos_id);
  id("tokenizer.ggml.eos_token_id", vocab.eos_id);
  id("tokenizer.ggml.eot_token_id", vocab.eot_id);
  id("tokenizer.ggml.padding_token_id", vocab.pad_id);
  w->SetBool("tokenizer.ggml.add_bos_token", vocab.add_bos.value_or(false));
  if (!vocab.chat_template.empty()) w->SetString("tokenizer.chat_template", vocab.chat_template);

  for (const TensorSlice& t : layout.tensors()) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(params.data() + t.offset);
    RETURN_IF_ERROR(w->AddTensorView(t.name, engine::GgmlType::F32, t.dims,
                                     std::span<const uint8_t>(bytes, t.size * sizeof(float))));
  }
  return Status::Ok();
}

Status ExportGgufF32(const ModelShape& shape, std::span<const float> params,
                     const engine::VocabData& vocab, const std::string& name,
                     const std::string& path) {
  engine::GgufWriter w;
  RETURN_IF_ERROR(BuildGguf(shape, params, vocab, name, &w));
  return w.WriteFile(path);
}

Status ExportGgufQ8(const std::string& f32_path, const std::string& q8_path,
                    engine::ComputePool& pool) {
  auto stats = engine::QuantizeGguf(f32_path, q8_path, engine::GgmlType::Q8_0, pool);
  if (!stats.ok()) return stats.status();
  return Status::Ok();
}

}  // namespace hotline::train
