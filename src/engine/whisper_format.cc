#include "engine/whisper_format.h"

#include <string>

namespace hotline::engine {
namespace {

// Bounds well above every published Whisper size (large: 1280 state, 32 layers, 20 heads,
// 51,866 tokens) and well below what would let a file ask for absurd allocations.
constexpr int kMaxVocab = 1 << 18;
constexpr int kMaxCtx = 1 << 13;
constexpr int kMaxState = 1 << 13;
constexpr int kMaxHeads = 128;
constexpr int kMaxLayers = 128;
constexpr int kMaxHeadDim = 512;

Status CheckRange(const char* field, int v, int max) {
  if (v <= 0 || v > max) {
    return InvalidArgumentError(std::string("whisper model: ") + field + " is " +
                                std::to_string(v) + ", expected 1.." + std::to_string(max));
  }
  return Status::Ok();
}

Status CheckHeads(const char* side, int state, int heads) {
  if (state % heads != 0 || state / heads > kMaxHeadDim) {
    return InvalidArgumentError(std::string("whisper model: ") + side + " width " +
                                std::to_string(state) + " does not split into " +
                                std::to_string(heads) + " heads of at most " +
                                std::to_string(kMaxHeadDim));
  }
  return Status::Ok();
}

}  // namespace

Status WhisperHparams::Validate() const {
  struct Field {
    const char* name;
    int value;
    int max;
  };
  const Field fields[] = {
      {"vocab_size", n_vocab, kMaxVocab},
      {"audio.context_length", n_audio_ctx, kMaxCtx},
      {"audio.embedding_length", n_audio_state, kMaxState},
      {"audio.head_count", n_audio_head, kMaxHeads},
      {"audio.block_count", n_audio_layer, kMaxLayers},
      {"text.context_length", n_text_ctx, kMaxCtx},
      {"text.embedding_length", n_text_state, kMaxState},
      {"text.head_count", n_text_head, kMaxHeads},
      {"text.block_count", n_text_layer, kMaxLayers},
  };
  for (const Field& f : fields) {
    if (Status s = CheckRange(f.name, f.value, f.max); !s.ok()) return s;
  }
  if (n_mels != 80 && n_mels != 128) {
    return InvalidArgumentError("whisper model: n_mels is " + std::to_string(n_mels) +
                                ", expected 80 or 128");
  }
  if (Status s = CheckHeads("audio", n_audio_state, n_audio_head); !s.ok()) return s;
  return CheckHeads("text", n_text_state, n_text_head);
}

namespace {

struct HparamKey {
  const char* key;
  int WhisperHparams::*field;
};
constexpr HparamKey kHparamKeys[] = {
    {"whisper.vocab_size", &WhisperHparams::n_vocab},
    {"whisper.n_mels", &WhisperHparams::n_mels},
    {"whisper.audio.context_length", &WhisperHparams::n_audio_ctx},
    {"whisper.audio.embedding_length", &WhisperHparams::n_audio_state},
    {"whisper.audio.head_count", &WhisperHparams::n_audio_head},
    {"whisper.audio.block_count", &WhisperHparams::n_audio_layer},
    {"whisper.text.context_length", &WhisperHparams::n_text_ctx},
    {"whisper.text.embedding_length", &WhisperHparams::n_text_state},
    {"whisper.text.head_count", &WhisperHparams::n_text_head},
    {"whisper.text.block_count", &WhisperHparams::n_text_layer},
};

}  // namespace

Result<WhisperHparams> ReadWhisperHparams(const GgufFile& file) {
  Result<std::string_view> arch = file.GetString("general.architecture");
  if (!arch.ok()) return arch.status();
  if (*arch != kWhisperArch) {
    return InvalidArgumentError("general.architecture is \"" + std::string(*arch) +
                                "\", not \"whisper\"");
  }
  WhisperHparams hp;
  for (const HparamKey& k : kHparamKeys) {
    Result<int64_t> v = file.GetInt(k.key);
    if (!v.ok()) return v.status();
    if (*v <= 0 || *v > (int64_t{1} << 30)) {
      return InvalidArgumentError(std::string(k.key) + " is " + std::to_string(*v) +
                                  ", out of range");
    }
    hp.*(k.field) = static_cast<int>(*v);
  }
  if (Status s = hp.Validate(); !s.ok()) return s;
  return hp;
}

void WriteWhisperHparams(const WhisperHparams& hp, GgufWriter& out) {
  out.SetString("general.architecture", kWhisperArch);
  for (const HparamKey& k : kHparamKeys) out.SetU32(k.key, static_cast<uint32_t>(hp.*(k.field)));
}

std::vector<std::string> WhisperTensorNames(const WhisperHparams& hp) {
  std::vector<std::string> names = {
      "encoder.positional_embedding", "encoder.conv1.weight", "encoder.conv1.bias",
      "encoder.conv2.weight",         "encoder.conv2.bias",
  };
  auto add_weight_bias = [&](const std::string& p) {
    names.push_back(p + ".weight");
    names.push_back(p + ".bias");
  };
  auto add_attention = [&](const std::string& p) {
    names.push_back(p + ".query.weight");
    names.push_back(p + ".query.bias");
    names.push_back(p + ".key.weight");  // the key projection has no bias
    names.push_back(p + ".value.weight");
    names.push_back(p + ".value.bias");
    names.push_back(p + ".out.weight");
    names.push_back(p + ".out.bias");
  };
  auto add_mlp = [&](const std::string& p) {
    add_weight_bias(p + ".mlp_ln");
    add_weight_bias(p + ".mlp.0");
    add_weight_bias(p + ".mlp.2");
  };
  for (int i = 0; i < hp.n_audio_layer; ++i) {
    const std::string p = "encoder.blocks." + std::to_string(i);
    add_weight_bias(p + ".attn_ln");
    add_attention(p + ".attn");
    add_mlp(p);
  }
  add_weight_bias("encoder.ln_post");
  names.push_back("decoder.positional_embedding");
  names.push_back("decoder.token_embedding.weight");
  for (int i = 0; i < hp.n_text_layer; ++i) {
    const std::string p = "decoder.blocks." + std::to_string(i);
    add_weight_bias(p + ".attn_ln");
    add_attention(p + ".attn");
    add_weight_bias(p + ".cross_attn_ln");
    add_attention(p + ".cross_attn");
    add_mlp(p);
  }
  add_weight_bias("decoder.ln");
  return names;
}

}  // namespace hotline::engine
