#include "engine/model.h"

#include <cmath>
#include <set>
#include <string>

#include "engine/quant.h"

namespace hotline::engine {
namespace {

// Upper bounds that no real model reaches; they keep a hostile file from asking for absurd
// workspace sizes (the tensors themselves are bounded by the file size).
constexpr int64_t kMaxEmbd = 1 << 16;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHeads = 1024;
constexpr int64_t kMaxFf = 1 << 18;
constexpr int64_t kMaxVocab = 1 << 22;

Result<int> ReadDim(const GgufFile& f, const std::string& key, int64_t lo, int64_t hi,
                    std::optional<int64_t> fallback = std::nullopt) {
  int64_t v = 0;
  if (!f.Has(key) && fallback) {
    v = *fallback;
  } else {
    ASSIGN_OR_RETURN(v, f.GetInt(key));
  }
  if (v < lo || v > hi) {
    return InvalidArgumentError(f.name() + ": " + key + " = " + std::to_string(v) +
                                " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                "]");
  }
  return static_cast<int>(v);
}

std::string Shape(const GgufTensorInfo& t) {
  std::string s = "[";
  for (int i = 0; i < t.n_dims; ++i) s += (i ? ", " : "") + std::to_string(t.ne[i]);
  return s + "]";
}

class Loader {
 public:
  Loader(const GgufFile& f, const ModelHParams& hp) : f_(f), hp_(hp) {}

  Result<const GgufTensorInfo*> Tensor(const std::string& name, int64_t ne0, int64_t ne1,
                                       bool required = true) {
    const GgufTensorInfo* t = f_.FindTensor(name);
    if (t == nullptr) {
      if (!required) return static_cast<const GgufTensorInfo*>(nullptr);
      return InvalidArgumentError(f_.name() + ": tensor '" + name + "' is missing (is this a " +
                                  hp_.arch_name + " model?)");
    }
    const bool is_vector = ne1 == 0;
    if (t->ne[0] != ne0 || (is_vector ? t->num_rows() != 1 : (t->ne[1] != ne1 || t->ne[2] != 1 ||
                                                               t->ne[3] != 1))) {
      return InvalidArgumentError(f_.name() + ": tensor '" + name + "' has shape " + Shape(*t) +
                                  ", expected [" + std::to_string(ne0) +
                                  (is_vector ? "" : ", " + std::to_string(ne1)) + "]");
    }
    const GgmlTypeInfo* info = GetTypeInfo(t->type);
    if (info == nullptr || !info->supported) {
      return UnimplementedError(f_.name() + ": tensor '" + name + "' has type " +
                                (info ? info->name : "unknown") +
                                ", which this engine cannot compute with (supported: f32, f16, "
                                "bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q4_k, q5_k, q6_k); "
                                "re-quantize the file");
    }
    return t;
  }

  Result<WeightMatrix> Matrix(const std::string& name, int64_t cols, int64_t rows) {
    ASSIGN_OR_RETURN(const GgufTensorInfo* t, Tensor(name, cols, rows));
    WeightMatrix w{t->type, t->data, rows, cols};
    RETURN_IF_ERROR(CheckWeightMatrix(w).WithContext(f_.name() + ": tensor '" + name + "'"));
    bytes_ += t->size_bytes;
    return w;
  }

  // Small vectors (norms, biases) are converted to float once.
  Result<std::vector<float>> Vector(const std::string& name, int64_t n, bool required = true) {
    ASSIGN_OR_RETURN(const GgufTensorInfo* t, Tensor(name, n, 0, required));
    std::vector<float> out;
    if (t == nullptr) return out;
    out.resize(static_cast<size_t>(n));
    DequantizeRow(t->type, t->data, out.data(), n);
    for (float x : out) {
      if (!std::isfinite(x)) {
        return InvalidArgumentError(f_.name() + ": tensor '" + name + "' holds NaN or infinity");
      }
    }
    return out;
  }

  uint64_t bytes() const { return bytes_; }

 private:
  const GgufFile& f_;
  const ModelHParams& hp_;
  uint64_t bytes_ = 0;
};

}  // namespace

Result<ModelHParams> ModelHParams::FromGguf(const GgufFile& f) {
  ModelHParams hp;
  ASSIGN_OR_RETURN(std::string_view arch, f.GetString("general.architecture"));
  hp.arch_name = std::string(arch);
  if (arch == "llama") {
    hp.arch = ModelArch::kLlama;
    hp.rope_style = RopeStyle::kAdjacentPairs;
  } else if (arch == "qwen2") {
    hp.arch = ModelArch::kQwen2;
    hp.rope_style = RopeStyle::kHalfSplit;
  } else {
    return UnimplementedError(f.name() + ": model architecture '" + hp.arch_name +
                              "' is not supported (supported: llama, qwen2)");
  }
  const std::string p = hp.arch_name + ".";
  ASSIGN_OR_RETURN(hp.n_embd, ReadDim(f, p + "embedding_length", 1, kMaxEmbd));
  ASSIGN_OR_RETURN(hp.n_layer, ReadDim(f, p + "block_count", 1, kMaxLayers));
  ASSIGN_OR_RETURN(hp.n_head, ReadDim(f, p + "attention.head_count", 1, kMaxHeads));
  ASSIGN_OR_RETURN(hp.n_head_kv, ReadDim(f, p + "attention.head_count_kv", 1, hp.n_head, hp.n_head));
  ASSIGN_OR_RETURN(hp.n_ff, ReadDim(f, p + "feed_forward_length", 1, kMaxFf));
  ASSIGN_OR_RETURN(hp.n_ctx_train, ReadDim(f, p + "context_length", 1, 1 << 24, 2048));
  if (hp.n_head % hp.n_head_kv != 0) {
    return InvalidArgumentError(f.name() + ": head_count " + std::to_string(hp.n_head) +
                                " is not a multiple of head_count_kv " +
                                std::to_string(hp.n_head_kv));
  }
  if (hp.n_embd % hp.n_head != 0 && !f.Has(p + "attention.key_length")) {
    return InvalidArgumentError(f.name() + ": embedding_length " + std::to_string(hp.n_embd) +
                                " is not a multiple of head_count " + std::to_string(hp.n_head));
  }
  ASSIGN_OR_RETURN(hp.head_dim, ReadDim(f, p + "attention.key_length", 1, kMaxHeadDim,
                                        hp.n_embd / hp.n_head));
  ASSIGN_OR_RETURN(int vdim, ReadDim(f, p + "attention.value_length", 1, kMaxHeadDim, hp.head_dim));
  if (vdim != hp.head_dim) {
    return UnimplementedError(f.name() + ": key_length != value_length is not supported");
  }
  if (hp.head_dim % 2 != 0) {
    return InvalidArgumentError(f.name() + ": head dimension " + std::to_string(hp.head_dim) +
                                " must be even for rotary embeddings");
  }
  ASSIGN_OR_RETURN(hp.n_rot, ReadDim(f, p + "rope.dimension_count", 2, hp.head_dim, hp.head_dim));
  if (hp.n_rot % 2 != 0) {
    return InvalidArgumentError(f.name() + ": rope.dimension_count must be even");
  }
  ASSIGN_OR_RETURN(double base, f.GetFloatOr(p + "rope.freq_base", 10000.0));
  ASSIGN_OR_RETURN(double eps, f.GetFloatOr(p + "attention.layer_norm_rms_epsilon", 1e-5));
  if (!(base > 1.0 && base < 1e12) || !(eps > 0.0 && eps < 1.0)) {
    return InvalidArgumentError(f.name() + ": rope.freq_base or layer_norm_rms_epsilon out of range");
  }
  hp.rope_freq_base = static_cast<float>(base);
  hp.rms_eps = static_cast<float>(eps);
  if (f.Has(p + "rope.scaling.type")) {
    ASSIGN_OR_RETURN(std::string_view scaling, f.GetString(p + "rope.scaling.type"));
    if (scaling != "none") {
      return UnimplementedError(f.name() + ": rope scaling '" + std::string(scaling) +
                                "' is not supported");
    }
  }
  const GgufTensorInfo* emb = f.FindTensor("token_embd.weight");
  if (emb == nullptr) {
    return InvalidArgumentError(f.name() + ": tensor 'token_embd.weight' is missing");
  }
  if (emb->ne[1] < 1 || emb->ne[1] > kMaxVocab) {
    return InvalidArgumentError(f.name() + ": vocabulary size " + std::to_string(emb->ne[1]) +
                                " is out of range");
  }
  hp.n_vocab = static_cast<int>(emb->ne[1]);
  return hp;
}

Result<std::unique_ptr<Model>> Model::Load(std::shared_ptr<const GgufFile> file) {
  if (!file) return InvalidArgumentError("Model::Load: no file");
  std::unique_ptr<Model> m(new Model());
  m->file_ = std::move(file);
  const GgufFile& f = *m->file_;
  ASSIGN_OR_RETURN(m->hp_, ModelHParams::FromGguf(f));
  const ModelHParams& hp = m->hp_;
  Loader ld(f, hp);
  const int64_t q_dim = int64_t{hp.n_head} * hp.head_dim;
  const int64_t kv_dim = int64_t{hp.n_head_kv} * hp.head_dim;

  ASSIGN_OR_RETURN(m->token_embd_, ld.Matrix("token_embd.weight", hp.n_embd, hp.n_vocab));
  const uint64_t embd_bytes = ld.bytes();  // not streamed per step (one row is read)
  ASSIGN_OR_RETURN(m->embd_row_bytes_, RowBytes(m->token_embd_.type, hp.n_embd));
  ASSIGN_OR_RETURN(m->output_norm_, ld.Vector("output_norm.weight", hp.n_embd));
  if (f.FindTensor("output.weight") != nullptr) {
    ASSIGN_OR_RETURN(m->output_, ld.Matrix("output.weight", hp.n_embd, hp.n_vocab));
  } else {
    m->output_ = m->token_embd_;
    m->tied_ = true;
  }
  m->layers_.resize(static_cast<size_t>(hp.n_layer));
  for (int i = 0; i < hp.n_layer; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    LayerWeights& L = m->layers_[static_cast<size_t>(i)];
    ASSIGN_OR_RETURN(L.attn_norm, ld.Vector(b + "attn_norm.weight", hp.n_embd));
    ASSIGN_OR_RETURN(L.wq, ld.Matrix(b + "attn_q.weight", hp.n_embd, q_dim));
    ASSIGN_OR_RETURN(L.wk, ld.Matrix(b + "attn_k.weight", hp.n_embd, kv_dim));
    ASSIGN_OR_RETURN(L.wv, ld.Matrix(b + "attn_v.weight", hp.n_embd, kv_dim));
    ASSIGN_OR_RETURN(L.wo, ld.Matrix(b + "attn_output.weight", q_dim, hp.n_embd));
    ASSIGN_OR_RETURN(L.bq, ld.Vector(b + "attn_q.bias", q_dim, false));
    ASSIGN_OR_RETURN(L.bk, ld.Vector(b + "attn_k.bias", kv_dim, false));
    ASSIGN_OR_RETURN(L.bv, ld.Vector(b + "attn_v.bias", kv_dim, false));
    ASSIGN_OR_RETURN(L.ffn_norm, ld.Vector(b + "ffn_norm.weight", hp.n_embd));
    ASSIGN_OR_RETURN(L.w_gate, ld.Matrix(b + "ffn_gate.weight", hp.n_embd, hp.n_ff));
    ASSIGN_OR_RETURN(L.w_up, ld.Matrix(b + "ffn_up.weight", hp.n_embd, hp.n_ff));
    ASSIGN_OR_RETURN(L.w_down, ld.Matrix(b + "ffn_down.weight", hp.n_ff, hp.n_embd));
  }
  if (f.FindTensor("rope_freqs.weight") != nullptr) {
    ASSIGN_OR_RETURN(m->rope_freq_factors_, ld.Vector("rope_freqs.weight", hp.n_rot / 2));
    for (float v : m->rope_freq_factors_) {
      if (!(v > 0.0f && v < 1e6f)) {
        return InvalidArgumentError(f.name() + ": rope_freqs.weight holds " + std::to_string(v) +
                                    "; every RoPE frequency factor must be positive");
      }
    }
  }
  // Every tensor must be one the forward pass uses: anything else belongs to a computation this
  // engine does not implement.
  {
    std::set<std::string> known = {"token_embd.weight", "output_norm.weight", "output.weight",
                                   "rope_freqs.weight"};
    for (int i = 0; i < hp.n_layer; ++i) {
      const std::string b = "blk." + std::to_string(i) + ".";
      for (const char* n :
           {"attn_norm.weight", "attn_q.weight", "attn_k.weight", "attn_v.weight",
            "attn_output.weight", "attn_q.bias", "attn_k.bias", "attn_v.bias", "ffn_norm.weight",
            "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"}) {
        known.insert(b + n);
      }
    }
    for (const GgufTensorInfo& t : f.tensors()) {
      if (!known.count(t.name)) {
        return UnimplementedError(f.name() + ": tensor '" + t.name +
                                  "' is not understood by this "
                                  "engine for architecture '" +
                                  hp.arch_name +
                                  "'; refusing to run the model with part of it ignored");
      }
    }
  }
  m->weights_bytes_ = ld.bytes() - embd_bytes;
  if (m->tied_) m->weights_bytes_ += embd_bytes;  // the output projection streams it
  if (KernelIsaUsesPackedWeights(ActiveKernelIsa())) {
    auto pack = [&m](WeightMatrix& w) -> Status {
      ASSIGN_OR_RETURN(PackedBytes p, PackWeights(w));
      if (p == nullptr) return Status::Ok();  // no packed layout for this type or shape
      w.packed = p.get();
      m->packed_bytes_ += static_cast<uint64_t>(PackedWeightBytes(w));
      m->packed_.push_back(std::move(p));
      return Status::Ok();
    };
    for (LayerWeights& L : m->layers_) {
      for (WeightMatrix* w : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) {
        RETURN_IF_ERROR(pack(*w));
      }
    }
    RETURN_IF_ERROR(pack(m->output_));  // a copy of token_embd_ when tied; that one stays plain
  }
  return m;
}

void Model::EmbedToken(int32_t token, float* out) const {
  const auto* base = static_cast<const uint8_t*>(token_embd_.data);
  DequantizeRow(token_embd_.type, base + static_cast<int64_t>(token) * embd_row_bytes_, out,
                hp_.n_embd);
}

}  // namespace hotline::engine
