// Test helpers for the Whisper model: a random-weight GGUF writer and a double-precision
// reference forward pass. For tests and benchmarks only.
//
// WriteRandomWhisper writes a complete Whisper GGUF for any hyper-parameters: every tensor's
// values come from its own RNG stream (seeded from the spec's seed and the tensor's name), so a
// tensor holds the same underlying floats whatever the weight type or the other tensors. Scales
// keep activations near unit size: query/key matrices ~ 1/sqrt(cols) (attention that is neither
// uniform nor one-hot), other matrices 0.5/sqrt(cols), LayerNorm weights 1 +- 0.1, biases
// +- 0.05. Values are uniform with those standard deviations (their shape does not matter here).
//
// WhisperReference recomputes everything from the file for every call (no caches): conv layers
// from the PyTorch [out][in][k] layout, masked softmax attention, erf GELU, in double precision,
// with each weight dequantized from the stored type exactly as the engine sees it.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "engine/ggml_types.h"
#include "engine/gguf.h"
#include "engine/quant.h"
#include "engine/vocab.h"
#include "engine/whisper_format.h"
#include "engine/whisper_ggml.h"

namespace hotline::engine::testing {

// A splitmix64 stream: fast, and good enough for weights.
class WhisperRng {
 public:
  explicit WhisperRng(uint64_t seed) : s_(seed) {}
  uint64_t Next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float Symmetric() {
    return static_cast<float>(static_cast<double>(Next() >> 11) * 0x1p-52 - 1.0);
  }
  // Zero mean, standard deviation `std` (uniform).
  float Noise(float std) { return Symmetric() * std * 1.7320508f; }

 private:
  uint64_t s_;
};

inline uint64_t WhisperTensorSeed(uint64_t seed, const std::string& name) {
  uint64_t h = 1469598103934665603ull ^ (seed * 0x9E3779B97F4A7C15ull);
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Hyper-parameters of a reduced model: `state` and `heads` as given (a real size's layout),
// small contexts, vocabulary and layer counts so that tests stay fast.
inline WhisperHparams SmallWhisperHparams(int state, int heads, int n_mels = 80, int layers = 1) {
  WhisperHparams hp;
  hp.n_vocab = 96;
  hp.n_mels = n_mels;
  hp.n_audio_ctx = 12;
  hp.n_audio_state = state;
  hp.n_audio_head = heads;
  hp.n_audio_layer = layers;
  hp.n_text_ctx = 16;
  hp.n_text_state = state;
  hp.n_text_head = heads;
  hp.n_text_layer = layers;
  return hp;
}

struct RandomWhisperSpec {
  WhisperHparams hp;
  GgmlType type = GgmlType::F32;  // attention, MLP and token-embedding matrices
  uint64_t seed = 1;
  bool mel_filters = false;
  // For load-error tests: a tensor left out, tensors written with other (F32) shapes or another
  // type, extra F32 tensors of 32 values, and a last edit of the metadata.
  std::string omit;
  std::map<std::string, std::vector<int64_t>> reshape;
  std::map<std::string, GgmlType> retype;
  std::vector<std::string> extra;
  std::function<void(GgufWriter&)> edit;
};

// The ggml dims of every tensor of WhisperTensorNames(hp), and how it is stored.
struct WhisperTensorPlan {
  std::string name;
  std::vector<int64_t> dims;
  GgmlType type;
  float std;     // of the random values
  float offset;  // added to every value (LayerNorm weights: 1)
};

inline std::vector<WhisperTensorPlan> PlanRandomWhisper(const RandomWhisperSpec& s) {
  const WhisperHparams& hp = s.hp;
  const int64_t ea = hp.n_audio_state, et = hp.n_text_state;
  // Conv weights and position tables: F32, or F16 as in the ggml files.
  const GgmlType small = s.type == GgmlType::F32 ? GgmlType::F32 : GgmlType::F16;
  std::vector<WhisperTensorPlan> plan;
  for (const std::string& n : WhisperTensorNames(hp)) {
    auto ends = [&n](const char* suffix) {
      const size_t k = std::strlen(suffix);
      return n.size() >= k && n.compare(n.size() - k, k, suffix) == 0;
    };
    const bool enc = n.rfind("encoder.", 0) == 0;
    const int64_t e = enc ? ea : et;
    WhisperTensorPlan p{n, {}, GgmlType::F32, 0.05f, 0.f};
    if (n == "encoder.conv1.weight") {
      p.dims = {3, hp.n_mels, ea};
      p.type = small;
      p.std = 1.0f / std::sqrt(3.0f * static_cast<float>(hp.n_mels));
    } else if (n == "encoder.conv2.weight") {
      p.dims = {3, ea, ea};
      p.type = small;
      p.std = 2.0f / std::sqrt(3.0f * static_cast<float>(ea));
    } else if (n == "encoder.conv1.bias" || n == "encoder.conv2.bias") {
      p.dims = {1, ea};  // the ggml .bin layout; {ea} is accepted too
    } else if (n == "encoder.positional_embedding") {
      p.dims = {ea, hp.n_audio_ctx};
      p.type = small;
      p.std = 0.3f;
    } else if (n == "decoder.positional_embedding") {
      p.dims = {et, hp.n_text_ctx};
      p.type = small;
      p.std = 0.3f;
    } else if (n == "decoder.token_embedding.weight") {
      p.dims = {et, hp.n_vocab};
      p.type = s.type;
      p.std = 1.0f;
    } else if (ends(".mlp.0.weight")) {
      p.dims = {e, 4 * e};
      p.type = s.type;
      p.std = 0.5f / std::sqrt(static_cast<float>(e));
    } else if (ends(".mlp.2.weight")) {
      p.dims = {4 * e, e};
      p.type = s.type;
      p.std = 0.5f / std::sqrt(static_cast<float>(4 * e));
    } else if (ends(".mlp.0.bias")) {
      p.dims = {4 * e};
    } else if (ends(".weight") &&
               (ends("_ln.weight") || ends(".ln.weight") || ends("ln_post.weight"))) {
      p.dims = {e};
      p.std = 0.1f;
      p.offset = 1.0f;
    } else if (ends(".bias")) {
      p.dims = {e};
    } else {  // attention projections
      const bool cross_kv = n.find("cross_attn.key") != std::string::npos ||
                            n.find("cross_attn.value") != std::string::npos;
      const int64_t cols = cross_kv ? ea : e;
      const bool qk = ends("query.weight") || ends("key.weight");
      p.dims = {cols, e};
      p.type = s.type;
      p.std = (qk ? 1.0f : 0.5f) / std::sqrt(static_cast<float>(cols));
    }
    plan.push_back(std::move(p));
  }
  if (s.mel_filters) {
    plan.push_back(
        {"mel_filters", {kWhisperFftSize / 2 + 1, hp.n_mels}, GgmlType::F32, 0.01f, 0.01f});
  }
  return plan;
}

// Fills `out` with the tensor's random values in `type`, row by row.
inline Status FillRandomTensor(const WhisperTensorPlan& p, uint64_t seed, std::span<uint8_t> out) {
  WhisperRng rng(WhisperTensorSeed(seed, p.name));
  const int64_t cols = p.dims[0];
  int64_t rows = 1;
  for (size_t i = 1; i < p.dims.size(); ++i) rows *= p.dims[i];
  ASSIGN_OR_RETURN(int64_t row_bytes, RowBytes(p.type, cols));
  std::vector<float> row(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : row) v = p.offset + rng.Noise(p.std);
    RETURN_IF_ERROR(QuantizeRow(p.type, row.data(), out.data() + r * row_bytes, cols));
  }
  return Status::Ok();
}

inline Status WriteRandomWhisper(const RandomWhisperSpec& s, const std::string& path) {
  GgufWriter w;
  WriteWhisperHparams(s.hp, w);
  for (WhisperTensorPlan p : PlanRandomWhisper(s)) {
    if (p.name == s.omit) continue;
    if (auto it = s.reshape.find(p.name); it != s.reshape.end()) {
      p.dims = it->second;
      p.type = GgmlType::F32;
    }
    if (auto it = s.retype.find(p.name); it != s.retype.end()) p.type = it->second;
    const uint64_t seed = s.seed;
    RETURN_IF_ERROR(w.AddTensorFill(p.name, p.type, p.dims, [p, seed](std::span<uint8_t> out) {
      return FillRandomTensor(p, seed, out);
    }));
  }
  for (const std::string& name : s.extra) {
    WhisperTensorPlan p{name, {32}, GgmlType::F32, 0.05f, 0.f};
    const uint64_t seed = s.seed;
    RETURN_IF_ERROR(w.AddTensorFill(name, p.type, p.dims, [p, seed](std::span<uint8_t> out) {
      return FillRandomTensor(p, seed, out);
    }));
  }
  if (s.edit) s.edit(w);
  return w.WriteFile(path);
}

// Writes a random-weight model of `hp` (n_vocab 0: the file's) whose vocabulary is the text
// vocabulary of the whisper.cpp ggml file `bin` (e.g. the shared data's for-tests-ggml-tiny.bin,
// which has no weights), so a recognizer can decode it. NotFound when `bin` is absent.
inline Status WriteRandomWhisperWithVocab(const std::string& bin, WhisperHparams hp, GgmlType type,
                                          const std::string& path) {
  auto f = WhisperGgmlFile::Open(bin);
  if (!f.ok()) return f.status();
  auto vocab = WhisperGgmlTextTokens(**f);
  if (!vocab.ok()) return vocab.status();
  std::vector<std::string> pieces;
  pieces.reserve(vocab->tokens.size());
  for (const std::string& t : vocab->tokens) {
    std::string piece;
    for (char c : t) piece.append(ByteToBpeChar(static_cast<uint8_t>(c)));
    pieces.push_back(std::move(piece));
  }
  if (hp.n_vocab == 0) hp.n_vocab = (*f)->hparams().n_vocab;
  RandomWhisperSpec spec;
  spec.hp = hp;
  spec.type = type;
  spec.edit = [&pieces](GgufWriter& w) {
    w.SetString("tokenizer.ggml.model", "whisper");
    w.SetStringArray("tokenizer.ggml.tokens", pieces);
  };
  return WriteRandomWhisper(spec, path);
}

// Writes the model to a temporary file, maps it and unlinks the file (the mapping keeps it).
inline Result<std::shared_ptr<const GgufFile>> MakeRandomWhisper(const RandomWhisperSpec& s) {
  static std::atomic<int> counter{0};
  const char* dir = std::getenv("TMPDIR");
  const std::string path = std::string(dir && *dir ? dir : "/tmp") + "/whisper_random_" +
                           std::to_string(::getpid()) + "_" + std::to_string(counter++) + ".gguf";
  RETURN_IF_ERROR(WriteRandomWhisper(s, path));
  Result<std::unique_ptr<GgufFile>> f = GgufFile::Open(path);
  std::remove(path.c_str());
  if (!f.ok()) return f.status();
  return std::shared_ptr<const GgufFile>(std::move(*f));
}

// Frame-major random log-mel input in [-1, 1), as the front end's normalized output ranges.
inline std::vector<float> RandomMel(int n_frames, int n_mels, uint64_t seed) {
  WhisperRng rng(seed);
  std::vector<float> mel(static_cast<size_t>(n_frames) * static_cast<size_t>(n_mels));
  for (float& v : mel) v = rng.Symmetric();
  return mel;
}

// ---- double-precision reference ---------------------------------------------------------------

class WhisperReference {
 public:
  // REQUIRES: `f` holds a model WhisperModel::Load accepts; `f` outlives this object.
  explicit WhisperReference(const GgufFile& f) : f_(f), hp_(ReadWhisperHparams(f).value()) {}

  // mel: frame-major, n_frames x n_mels. Returns n_frames / 2 rows of n_audio_state.
  std::vector<double> Encode(std::span<const float> mel, int n_frames) const {
    const int E = hp_.n_audio_state;
    std::vector<double> x(mel.begin(), mel.end());
    x = Conv("encoder.conv1", x, n_frames, hp_.n_mels, 1);
    for (double& v : x) v = Gelu(v);
    const int n = (n_frames - 1) / 2 + 1;
    x = Conv("encoder.conv2", x, n_frames, E, 2);
    for (double& v : x) v = Gelu(v);
    const std::vector<double> pos = Values("encoder.positional_embedding");
    for (size_t i = 0; i < x.size(); ++i) x[i] += pos[i];
    for (int l = 0; l < hp_.n_audio_layer; ++l) {
      const std::string p = "encoder.blocks." + std::to_string(l);
      std::vector<double> h = LayerNorm(p + ".attn_ln", x, n, E);
      h = Attention(p + ".attn", h, n, h, n, hp_.n_audio_head, false);
      for (size_t i = 0; i < x.size(); ++i) x[i] += h[i];
      h = Mlp(p, LayerNorm(p + ".mlp_ln", x, n, E), n);
      for (size_t i = 0; i < x.size(); ++i) x[i] += h[i];
    }
    return LayerNorm("encoder.ln_post", x, n, E);
  }

  // Logits of every token (tokens.size() x n_vocab) for `tokens` at positions 0.. attending to
  // `audio` (n_audio rows of n_audio_state).
  std::vector<double> Decode(const std::vector<double>& audio, int n_audio,
                             std::span<const int32_t> tokens) const {
    const int E = hp_.n_text_state;
    const int n = static_cast<int>(tokens.size());
    const std::vector<double> pos = Values("decoder.positional_embedding");
    std::vector<double> x(static_cast<size_t>(n) * E);
    for (int i = 0; i < n; ++i) {
      const std::vector<float> row = Row("decoder.token_embedding.weight", tokens[size_t(i)]);
      for (int j = 0; j < E; ++j) x[size_t(i) * E + j] = row[size_t(j)] + pos[size_t(i) * E + j];
    }
    for (int l = 0; l < hp_.n_text_layer; ++l) {
      const std::string p = "decoder.blocks." + std::to_string(l);
      std::vector<double> h = LayerNorm(p + ".attn_ln", x, n, E);
      h = Attention(p + ".attn", h, n, h, n, hp_.n_text_head, true);
      for (size_t i = 0; i < x.size(); ++i) x[i] += h[i];
      h = LayerNorm(p + ".cross_attn_ln", x, n, E);
      h = Attention(p + ".cross_attn", h, n, audio, n_audio, hp_.n_text_head, false);
      for (size_t i = 0; i < x.size(); ++i) x[i] += h[i];
      h = Mlp(p, LayerNorm(p + ".mlp_ln", x, n, E), n);
      for (size_t i = 0; i < x.size(); ++i) x[i] += h[i];
    }
    x = LayerNorm("decoder.ln", x, n, E);
    return Linear("decoder.token_embedding.weight", "", x, n);
  }

  static double Gelu(double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }

 private:
  const GgufTensorInfo& Tensor(const std::string& name) const {
    const GgufTensorInfo* t = f_.FindTensor(name);
    if (t == nullptr) std::abort();  // the model loaded, so every tensor is there
    return *t;
  }

  // Row r of a tensor seen as rows of ne[0] elements, dequantized.
  std::vector<float> Row(const std::string& name, int64_t r) const {
    const GgufTensorInfo& t = Tensor(name);
    const int64_t rb = RowBytes(t.type, t.ne[0]).value();
    std::vector<float> row(static_cast<size_t>(t.ne[0]));
    DequantizeRow(t.type, t.data + r * rb, row.data(), t.ne[0]);
    return row;
  }

  std::vector<double> Values(const std::string& name) const {
    const GgufTensorInfo& t = Tensor(name);
    std::vector<double> out;
    out.reserve(static_cast<size_t>(t.num_elements()));
    for (int64_t r = 0; r < t.num_rows(); ++r) {
      for (float v : Row(name, r)) out.push_back(v);
    }
    return out;
  }

  // y = x W^T (+ b): x n x cols, W rows x cols (ggml), y n x rows.
  std::vector<double> Linear(const std::string& w, const std::string& b,
                             const std::vector<double>& x, int n) const {
    const GgufTensorInfo& t = Tensor(w);
    const int64_t cols = t.ne[0], rows = t.ne[1];
    std::vector<double> bias = b.empty() ? std::vector<double>(size_t(rows), 0.0) : Values(b);
    std::vector<double> y(static_cast<size_t>(n * rows));
    std::vector<double> wr(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<float> row = Row(w, r);
      std::copy(row.begin(), row.end(), wr.begin());
      for (int i = 0; i < n; ++i) {
        const double* xi = x.data() + i * cols;
        double acc = 0.0;
        for (int64_t c = 0; c < cols; ++c) acc += wr[size_t(c)] * xi[c];
        y[size_t(i * rows + r)] = acc + bias[size_t(r)];
      }
    }
    return y;
  }

  std::vector<double> LayerNorm(const std::string& p, const std::vector<double>& x, int n,
                                int e) const {
    const std::vector<double> w = Values(p + ".weight"), b = Values(p + ".bias");
    std::vector<double> y(x.size());
    for (int i = 0; i < n; ++i) {
      const double* xi = x.data() + size_t(i) * e;
      double mean = 0, var = 0;
      for (int j = 0; j < e; ++j) mean += xi[j];
      mean /= e;
      for (int j = 0; j < e; ++j) var += (xi[j] - mean) * (xi[j] - mean);
      var /= e;
      const double inv = 1.0 / std::sqrt(var + 1e-5);
      for (int j = 0; j < e; ++j) {
        y[size_t(i) * e + j] = (xi[j] - mean) * inv * w[size_t(j)] + b[size_t(j)];
      }
    }
    return y;
  }

  // PyTorch Conv1d(kernel 3, padding 1, stride) over frame-major x (n_in x in).
  std::vector<double> Conv(const std::string& p, const std::vector<double>& x, int n_in, int in,
                           int stride) const {
    const GgufTensorInfo& t = Tensor(p + ".weight");  // {3, in, out}: row o = [in][3]
    const int64_t out = t.ne[2];
    const int n_out = (n_in + 2 - 3) / stride + 1;
    const std::vector<double> bias = Values(p + ".bias");
    const int64_t rb = RowBytes(t.type, 3 * in).value();
    std::vector<float> w(size_t(3) * in);
    std::vector<double> y(static_cast<size_t>(n_out * out));
    for (int64_t o = 0; o < out; ++o) {
      DequantizeRow(t.type, t.data + o * rb, w.data(), 3 * in);
      for (int to = 0; to < n_out; ++to) {
        double acc = bias[size_t(o)];
        for (int k = 0; k < 3; ++k) {
          const int ti = to * stride + k - 1;
          if (ti < 0 || ti >= n_in) continue;
          for (int i = 0; i < in; ++i) acc += w[size_t(i) * 3 + k] * x[size_t(ti) * in + i];
        }
        y[size_t(to * out + o)] = acc;
      }
    }
    return y;
  }

  std::vector<double> Attention(const std::string& p, const std::vector<double>& xq, int nq,
                                const std::vector<double>& xkv, int nkv, int heads,
                                bool causal) const {
    const std::vector<double> q = Linear(p + ".query.weight", p + ".query.bias", xq, nq);
    const std::vector<double> k = Linear(p + ".key.weight", "", xkv, nkv);
    const std::vector<double> v = Linear(p + ".value.weight", p + ".value.bias", xkv, nkv);
    const int e = static_cast<int>(q.size() / size_t(nq));
    const int d = e / heads;
    std::vector<double> att(size_t(nq) * e, 0.0);
    std::vector<double> s(static_cast<size_t>(nkv));
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < nq; ++i) {
        const int c = causal ? i + 1 : nkv;
        double m = -1e300;
        for (int j = 0; j < c; ++j) {
          double acc = 0;
          for (int t = 0; t < d; ++t) {
            acc += q[size_t(i) * e + h * d + t] * k[size_t(j) * e + h * d + t];
          }
          s[size_t(j)] = acc / std::sqrt(static_cast<double>(d));
          m = std::max(m, s[size_t(j)]);
        }
        double sum = 0;
        for (int j = 0; j < c; ++j) sum += (s[size_t(j)] = std::exp(s[size_t(j)] - m));
        for (int j = 0; j < c; ++j) {
          for (int t = 0; t < d; ++t) {
            att[size_t(i) * e + h * d + t] += s[size_t(j)] / sum * v[size_t(j) * e + h * d + t];
          }
        }
      }
    }
    return Linear(p + ".out.weight", p + ".out.bias", att, nq);
  }

  std::vector<double> Mlp(const std::string& p, const std::vector<double>& x, int n) const {
    std::vector<double> h = Linear(p + ".mlp.0.weight", p + ".mlp.0.bias", x, n);
    for (double& v : h) v = Gelu(v);
    return Linear(p + ".mlp.2.weight", p + ".mlp.2.bias", h, n);
  }

  const GgufFile& f_;
  WhisperHparams hp_;
};

}  // namespace hotline::engine::testing
