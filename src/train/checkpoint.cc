#include "train/checkpoint.h"

#include <cstdio>
#include <cstring>

#include "engine/gguf.h"
#include "engine/model.h"
#include "train/export.h"

namespace hotline::train {
namespace {

void PutHistory(engine::GgufWriter& w, const std::string& key, const std::vector<LossPoint>& h) {
  std::vector<int32_t> steps;
  std::vector<float> loss;
  for (const LossPoint& p : h) {
    steps.push_back(p.step);
    loss.push_back(static_cast<float>(p.loss));
  }
  w.SetI32Array(key + "_steps", steps);
  w.SetF32Array(key, loss);
}

Result<std::vector<LossPoint>> GetHistory(const engine::GgufFile& f, const std::string& key) {
  ASSIGN_OR_RETURN(auto steps, f.GetArray<int32_t>(key + "_steps"));
  ASSIGN_OR_RETURN(auto loss, f.GetArray<float>(key));
  if (steps.size() != loss.size()) return DataLossError(f.name() + ": " + key + " arrays differ");
  std::vector<LossPoint> h;
  for (size_t i = 0; i < steps.size(); ++i) h.push_back({steps[i], loss[i]});
  return h;
}

Result<std::vector<float>> GetF32(const engine::GgufFile& f, const std::string& name,
                                  size_t expect) {
  const engine::GgufTensorInfo* t = f.FindTensor(name);
  if (t == nullptr) return DataLossError(f.name() + ": tensor " + name + " is missing");
  if (t->type != engine::GgmlType::F32 || size_t(t->num_elements()) != expect) {
    return DataLossError(f.name() + ": tensor " + name + " must be F32 with " +
                         std::to_string(expect) + " values");
  }
  std::vector<float> v(expect);
  std::memcpy(v.data(), t->data, expect * sizeof(float));
  return v;
}

}  // namespace

Status SaveCheckpoint(const Checkpoint& c, const std::string& path) {
  const ParamLayout layout(c.shape);
  if (c.adam_m.size() != layout.total() || c.adam_v.size() != layout.total()) {
    return InvalidArgumentError("optimizer state does not match the model");
  }
  engine::GgufWriter w;
  RETURN_IF_ERROR(BuildGguf(c.shape, c.params, c.vocab, "hotline-train-checkpoint", &w));
  w.SetI32("hotline.train.step", c.step);
  w.SetU64("hotline.train.seed", c.seed);
  PutHistory(w, "hotline.train.loss", c.train_loss);
  PutHistory(w, "hotline.train.eval_loss", c.eval_loss);
  const int64_t dims[] = {int64_t(layout.total())};
  auto bytes = [](const std::vector<float>& v) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()),
                                    v.size() * sizeof(float));
  };
  RETURN_IF_ERROR(w.AddTensorView("train.adam_m", engine::GgmlType::F32, dims, bytes(c.adam_m)));
  RETURN_IF_ERROR(w.AddTensorView("train.adam_v", engine::GgmlType::F32, dims, bytes(c.adam_v)));
  const std::string tmp = path + ".tmp";
  RETURN_IF_ERROR(w.WriteFile(tmp));
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return InternalError("cannot rename " + tmp + " to " + path);
  }
  return Status::Ok();
}

Result<Checkpoint> LoadCheckpoint(const std::string& path) {
  ASSIGN_OR_RETURN(std::unique_ptr<engine::GgufFile> f, engine::GgufFile::Open(path));
  ASSIGN_OR_RETURN(auto hp, engine::ModelHParams::FromGguf(*f));
  if (hp.arch != engine::ModelArch::kLlama) {
    return InvalidArgumentError(path + ": a training checkpoint is a llama-family file");
  }
  Checkpoint c;
  ModelShape& s = c.shape;
  s.n_vocab = hp.n_vocab;
  s.dim = hp.n_embd;
  s.n_layer = hp.n_layer;
  s.n_head = hp.n_head;
  s.n_head_kv = hp.n_head_kv;
  s.n_ff = hp.n_ff;
  s.seq_len = hp.n_ctx_train;
  s.rope_base = hp.rope_freq_base;
  s.rms_eps = hp.rms_eps;
  s.tied = f->FindTensor("output.weight") == nullptr;
  RETURN_IF_ERROR(s.Validate().WithContext(path));
  if (hp.head_dim != s.head_dim() || hp.n_rot != s.head_dim()) {
    return InvalidArgumentError(path + ": head dimension or rotary width is not the trainer's");
  }
  ASSIGN_OR_RETURN(c.vocab, engine::Vocabulary::ReadGgufMetadata(*f));
  if (c.vocab.tokens.size() != static_cast<size_t>(s.n_vocab)) {
    return DataLossError(path + ": the tokenizer has " + std::to_string(c.vocab.tokens.size()) +
                         " tokens but the embedding has " + std::to_string(s.n_vocab) + " rows");
  }
  const ParamLayout layout(s);
  // Every tensor must be present with its size before anything is allocated for the shape: the
  // file's own (validated) tensor bytes then bound the allocation, not its metadata.
  for (const TensorSlice& t : layout.tensors()) {
    const engine::GgufTensorInfo* info = f->FindTensor(t.name);
    if (info == nullptr || info->type != engine::GgmlType::F32 ||
        size_t(info->num_elements()) != t.size) {
      return DataLossError(path + ": tensor " + t.name + " is missing or not F32 of the shape");
    }
  }
  c.params.resize(layout.total());
  for (const TensorSlice& t : layout.tensors()) {
    ASSIGN_OR_RETURN(auto v, GetF32(*f, t.name, t.size));
    std::memcpy(c.params.data() + t.offset, v.data(), t.size * sizeof(float));
  }
  ASSIGN_OR_RETURN(c.adam_m, GetF32(*f, "train.adam_m", layout.total()));
  ASSIGN_OR_RETURN(c.adam_v, GetF32(*f, "train.adam_v", layout.total()));
  ASSIGN_OR_RETURN(int64_t step, f->GetInt("hotline.train.step"));
  if (step < 0 || step > (1 << 30)) return DataLossError(path + ": bad training step");
  c.step = static_cast<int>(step);
  ASSIGN_OR_RETURN(int64_t seed, f->GetInt("hotline.train.seed"));
  c.seed = static_cast<uint64_t>(seed);
  ASSIGN_OR_RETURN(c.train_loss, GetHistory(*f, "hotline.train.loss"));
  ASSIGN_OR_RETURN(c.eval_loss, GetHistory(*f, "hotline.train.eval_loss"));
  return c;
}

}  // namespace hotline::train
