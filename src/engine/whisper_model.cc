#include "engine/whisper_model.h"

#include <cmath>
#include <initializer_list>
#include <string>
#include <unordered_set>

#include "engine/quant.h"

namespace hotline::engine {
namespace {

std::string ShapeString(std::span<const int64_t> ne) {
  std::string s = "[";
  for (size_t i = 0; i < ne.size(); ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
  return s + "]";
}

std::string ShapeString(const GgufTensorInfo& t) {
  return ShapeString(std::span<const int64_t>(t.ne.data(), static_cast<size_t>(t.n_dims)));
}

bool HasShape(const GgufTensorInfo& t, std::initializer_list<int64_t> dims) {
  size_t i = 0;
  for (int64_t d : dims) {
    if (t.ne[i++] != d) return false;
  }
  for (; i < t.ne.size(); ++i) {
    if (t.ne[i] != 1) return false;
  }
  return true;
}

class Loader {
 public:
  explicit Loader(const GgufFile& f) : f_(f) {}

  Result<const GgufTensorInfo*> Tensor(const std::string& name, std::initializer_list<int64_t> dims,
                                       std::initializer_list<int64_t> alt_dims = {}) {
    ++fetched_;
    const GgufTensorInfo* t = f_.FindTensor(name);
    if (t == nullptr) {
      return InvalidArgumentError(f_.name() + ": tensor '" + name +
                                  "' is missing (is this a complete Whisper model?)");
    }
    if (!HasShape(*t, dims) && (alt_dims.size() == 0 || !HasShape(*t, alt_dims))) {
      return InvalidArgumentError(
          f_.name() + ": tensor '" + name + "' has shape " + ShapeString(*t) + ", expected " +
          ShapeString(std::span<const int64_t>(dims.begin(), dims.size())) +
          " (ggml order, innermost first) for the model's hyper-parameters");
    }
    return t;
  }

  Result<WeightMatrix> Matrix(const std::string& name, int64_t cols, int64_t rows) {
    ASSIGN_OR_RETURN(const GgufTensorInfo* t, Tensor(name, {cols, rows}));
    const GgmlTypeInfo* info = GetTypeInfo(t->type);
    if (info == nullptr || !info->supported) {
      return UnimplementedError(f_.name() + ": tensor '" + name + "' has type " +
                                (info ? info->name : "unknown") +
                                ", which this engine cannot multiply; re-quantize the file");
    }
    WeightMatrix w{t->type, t->data, rows, cols};
    RETURN_IF_ERROR(CheckWeightMatrix(w).WithContext(f_.name() + ": tensor '" + name + "'"));
    return w;
  }

  // A small tensor converted to float (F32, F16 or BF16 stored), all of it finite.
  Result<std::vector<float>> Floats(const std::string& name, std::initializer_list<int64_t> dims,
                                    std::initializer_list<int64_t> alt_dims = {}) {
    ASSIGN_OR_RETURN(const GgufTensorInfo* t, Tensor(name, dims, alt_dims));
    if (t->type != GgmlType::F32 && t->type != GgmlType::F16 && t->type != GgmlType::BF16) {
      return UnimplementedError(f_.name() + ": tensor '" + name + "' has type " +
                                TypeName(t->type) + "; expected f32 or f16");
    }
    std::vector<float> out(static_cast<size_t>(t->num_elements()));
    DequantizeRow(t->type, t->data, out.data(), t->num_elements());
    for (float x : out) {
      if (!std::isfinite(x)) {
        return InvalidArgumentError(f_.name() + ": tensor '" + name + "' holds NaN or infinity");
      }
    }
    return out;
  }

  Result<std::vector<float>> Vector(const std::string& name, int64_t n) {
    return Floats(name, {n});
  }

  Result<WhisperLayerNorm> Norm(const std::string& prefix, int64_t n) {
    WhisperLayerNorm ln;
    ASSIGN_OR_RETURN(ln.weight, Vector(prefix + ".weight", n));
    ASSIGN_OR_RETURN(ln.bias, Vector(prefix + ".bias", n));
    return ln;
  }

  // `kv_in`: the width the key/value projections read (the encoder's for cross-attention).
  Result<WhisperAttentionWeights> Attention(const std::string& p, int64_t n, int64_t kv_in) {
    WhisperAttentionWeights a;
    ASSIGN_OR_RETURN(a.query, Matrix(p + ".query.weight", n, n));
    ASSIGN_OR_RETURN(a.query_bias, Vector(p + ".query.bias", n));
    ASSIGN_OR_RETURN(a.key, Matrix(p + ".key.weight", kv_in, n));
    ASSIGN_OR_RETURN(a.value, Matrix(p + ".value.weight", kv_in, n));
    ASSIGN_OR_RETURN(a.value_bias, Vector(p + ".value.bias", n));
    ASSIGN_OR_RETURN(a.out, Matrix(p + ".out.weight", n, n));
    ASSIGN_OR_RETURN(a.out_bias, Vector(p + ".out.bias", n));
    return a;
  }

  Result<WhisperMlpWeights> Mlp(const std::string& p, int64_t n) {
    WhisperMlpWeights m;
    ASSIGN_OR_RETURN(m.fc1, Matrix(p + ".mlp.0.weight", n, 4 * n));
    ASSIGN_OR_RETURN(m.fc1_bias, Vector(p + ".mlp.0.bias", 4 * n));
    ASSIGN_OR_RETURN(m.fc2, Matrix(p + ".mlp.2.weight", 4 * n, n));
    ASSIGN_OR_RETURN(m.fc2_bias, Vector(p + ".mlp.2.bias", n));
    return m;
  }

  // PyTorch Conv1d weight [out][in][3] (ggml {3, in, out}) rearranged to [out][3][in].
  Result<WhisperConv> Conv(const std::string& p, int in, int out) {
    WhisperConv c;
    c.in = in;
    c.out = out;
    ASSIGN_OR_RETURN(std::vector<float> w, Floats(p + ".weight", {3, in, out}));
    ASSIGN_OR_RETURN(c.bias, Floats(p + ".bias", {out}, {1, out}));
    c.weight.resize(w.size());
    for (int64_t o = 0; o < out; ++o) {
      for (int64_t i = 0; i < in; ++i) {
        for (int64_t k = 0; k < 3; ++k) {
          c.weight[size_t((o * 3 + k) * in + i)] = w[size_t((o * in + i) * 3 + k)];
        }
      }
    }
    return c;
  }

  // Tensors looked up so far.
  size_t fetched() const { return fetched_; }

 private:
  const GgufFile& f_;
  size_t fetched_ = 0;
};

uint64_t MatrixBytes(const WeightMatrix& w) {
  return static_cast<uint64_t>(RowBytes(w.type, w.cols).value_or(0) * w.rows);
}

}  // namespace

Result<std::unique_ptr<WhisperModel>> WhisperModel::Load(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> file, GgufFile::Open(path));
  return Load(std::shared_ptr<const GgufFile>(std::move(file)));
}

Result<std::unique_ptr<WhisperModel>> WhisperModel::Load(std::shared_ptr<const GgufFile> file) {
  if (!file) return InvalidArgumentError("WhisperModel::Load: no file");
  std::unique_ptr<WhisperModel> m(new WhisperModel());
  m->file_ = std::move(file);
  const GgufFile& f = *m->file_;
  {
    Result<WhisperHparams> hp = ReadWhisperHparams(f);
    if (!hp.ok()) return hp.status().WithContext(f.name());
    m->hp_ = *hp;
  }
  const WhisperHparams& hp = m->hp_;

  // Unknown tensors first: they say "wrong kind of file" more clearly than a missing one does.
  const std::vector<std::string> names = WhisperTensorNames(hp);
  {
    std::unordered_set<std::string> known(names.begin(), names.end());
    known.insert("mel_filters");
    for (const GgufTensorInfo& t : f.tensors()) {
      if (!known.count(t.name)) {
        return UnimplementedError(
            f.name() + ": tensor '" + t.name + "' is not part of a Whisper model with " +
            std::to_string(hp.n_audio_layer) + " encoder and " + std::to_string(hp.n_text_layer) +
            " decoder layers; refusing to run with part of the file ignored");
      }
    }
  }

  Loader ld(f);
  const int64_t ea = hp.n_audio_state, et = hp.n_text_state;
  ASSIGN_OR_RETURN(m->conv1_, ld.Conv("encoder.conv1", hp.n_mels, hp.n_audio_state));
  ASSIGN_OR_RETURN(m->conv2_, ld.Conv("encoder.conv2", hp.n_audio_state, hp.n_audio_state));
  for (WhisperConv* c : {&m->conv1_, &m->conv2_}) {
    c->matrix = WeightMatrix{GgmlType::F32, c->weight.data(), c->out, int64_t{3} * c->in};
  }
  ASSIGN_OR_RETURN(m->enc_pos_, ld.Floats("encoder.positional_embedding", {ea, hp.n_audio_ctx}));
  m->enc_layers_.resize(static_cast<size_t>(hp.n_audio_layer));
  for (int i = 0; i < hp.n_audio_layer; ++i) {
    const std::string p = "encoder.blocks." + std::to_string(i);
    WhisperEncoderLayer& L = m->enc_layers_[static_cast<size_t>(i)];
    ASSIGN_OR_RETURN(L.attn_ln, ld.Norm(p + ".attn_ln", ea));
    ASSIGN_OR_RETURN(L.attn, ld.Attention(p + ".attn", ea, ea));
    ASSIGN_OR_RETURN(L.mlp_ln, ld.Norm(p + ".mlp_ln", ea));
    ASSIGN_OR_RETURN(L.mlp, ld.Mlp(p, ea));
  }
  ASSIGN_OR_RETURN(m->enc_ln_post_, ld.Norm("encoder.ln_post", ea));

  ASSIGN_OR_RETURN(m->dec_pos_, ld.Floats("decoder.positional_embedding", {et, hp.n_text_ctx}));
  ASSIGN_OR_RETURN(m->token_emb_, ld.Matrix("decoder.token_embedding.weight", et, hp.n_vocab));
  ASSIGN_OR_RETURN(m->token_row_bytes_, RowBytes(m->token_emb_.type, et));
  m->dec_layers_.resize(static_cast<size_t>(hp.n_text_layer));
  uint64_t bytes = MatrixBytes(m->token_emb_);
  for (int i = 0; i < hp.n_text_layer; ++i) {
    const std::string p = "decoder.blocks." + std::to_string(i);
    WhisperDecoderLayer& L = m->dec_layers_[static_cast<size_t>(i)];
    ASSIGN_OR_RETURN(L.attn_ln, ld.Norm(p + ".attn_ln", et));
    ASSIGN_OR_RETURN(L.attn, ld.Attention(p + ".attn", et, et));
    ASSIGN_OR_RETURN(L.cross_attn_ln, ld.Norm(p + ".cross_attn_ln", et));
    ASSIGN_OR_RETURN(L.cross_attn, ld.Attention(p + ".cross_attn", et, ea));
    ASSIGN_OR_RETURN(L.mlp_ln, ld.Norm(p + ".mlp_ln", et));
    ASSIGN_OR_RETURN(L.mlp, ld.Mlp(p, et));
    for (const WeightMatrix* w : {&L.attn.query, &L.attn.key, &L.attn.value, &L.attn.out,
                                  &L.cross_attn.query, &L.cross_attn.out, &L.mlp.fc1, &L.mlp.fc2}) {
      bytes += MatrixBytes(*w);
    }
  }
  m->decode_bytes_ = bytes;
  ASSIGN_OR_RETURN(m->dec_ln_, ld.Norm("decoder.ln", et));
  // Every name the format lists must have been read above (a tensor added to the format but not
  // to this loader would otherwise be accepted and silently ignored).
  if (ld.fetched() != names.size()) {
    return InternalError("WhisperModel::Load read " + std::to_string(ld.fetched()) +
                         " tensors but the format lists " + std::to_string(names.size()));
  }

  if (f.FindTensor("mel_filters") != nullptr) {
    ASSIGN_OR_RETURN(m->mel_filters_,
                     ld.Floats("mel_filters", {kWhisperFftSize / 2 + 1, hp.n_mels}));
  }
  if (KernelIsaUsesPackedWeights(ActiveKernelIsa())) RETURN_IF_ERROR(m->PackMatrices());
  return m;
}

Status WhisperModel::PackMatrices() {
  auto pack = [this](WeightMatrix& w) -> Status {
    ASSIGN_OR_RETURN(PackedBytes p, PackWeights(w));
    if (p == nullptr) return Status::Ok();  // no packed layout for this type or shape
    w.packed = p.get();
    packed_bytes_ += static_cast<uint64_t>(PackedWeightBytes(w));
    packed_.push_back(std::move(p));
    return Status::Ok();
  };
  auto pack_attention = [&pack](WhisperAttentionWeights& a) -> Status {
    for (WeightMatrix* w : {&a.query, &a.key, &a.value, &a.out}) RETURN_IF_ERROR(pack(*w));
    return Status::Ok();
  };
  for (WhisperEncoderLayer& L : enc_layers_) {
    RETURN_IF_ERROR(pack_attention(L.attn));
    RETURN_IF_ERROR(pack(L.mlp.fc1));
    RETURN_IF_ERROR(pack(L.mlp.fc2));
  }
  for (WhisperDecoderLayer& L : dec_layers_) {
    RETURN_IF_ERROR(pack_attention(L.attn));
    RETURN_IF_ERROR(pack_attention(L.cross_attn));
    RETURN_IF_ERROR(pack(L.mlp.fc1));
    RETURN_IF_ERROR(pack(L.mlp.fc2));
  }
  // The logits projection; EmbedToken keeps reading the plain rows.
  return pack(token_emb_);
}

void WhisperModel::EmbedToken(int32_t token, float* out) const {
  const auto* base = static_cast<const uint8_t*>(token_emb_.data);
  DequantizeRow(token_emb_.type, base + static_cast<int64_t>(token) * token_row_bytes_, out,
                hp_.n_text_state);
}

}  // namespace hotline::engine
