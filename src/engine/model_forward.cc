#include "engine/model_forward.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "engine/attention.h"
#include "engine/matmul.h"
#include "engine/quant.h"

namespace hotline::engine {
namespace {

void RmsNorm(const float* x, const float* w, float* y, int n, float eps) {
  float ss = 0.f;
  for (int i = 0; i < n; ++i) ss += x[i] * x[i];
  const float scale = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  for (int i = 0; i < n; ++i) y[i] = x[i] * scale * w[i];
}

void AddBias(float* y, const std::vector<float>& b, int n_tokens) {
  if (b.empty()) return;
  const size_t w = b.size();
  for (int t = 0; t < n_tokens; ++t) {
    float* row = y + t * w;
    for (size_t i = 0; i < w; ++i) row[i] += b[i];
  }
}

// Rotates each head of `x` (n_heads x head_dim) by the angles of one position.
void Rope(float* x, int n_heads, int head_dim, int n_rot, RopeStyle style, const float* cos_t,
          const float* sin_t) {
  const int half = n_rot / 2;
  for (int h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    if (style == RopeStyle::kAdjacentPairs) {
      for (int i = 0; i < half; ++i) {
        const float a = v[2 * i], b = v[2 * i + 1];
        v[2 * i] = a * cos_t[i] - b * sin_t[i];
        v[2 * i + 1] = a * sin_t[i] + b * cos_t[i];
      }
    } else {
      for (int i = 0; i < half; ++i) {
        const float a = v[i], b = v[i + half];
        v[i] = a * cos_t[i] - b * sin_t[i];
        v[i + half] = a * sin_t[i] + b * cos_t[i];
      }
    }
  }
}

}  // namespace

Status ForwardPass::Validate(std::span<const BatchToken> batch, KvCache& kv) {
  const ModelHParams& hp = model_.hparams();
  const KvLayout& L = kv.layout();
  if (L.n_layer != hp.n_layer || L.n_head_kv != hp.n_head_kv || L.head_dim != hp.head_dim) {
    return InvalidArgumentError("KV cache layout does not match the model");
  }
  // Next expected position per sequence within this batch.
  std::unordered_map<int, int> next;
  for (const BatchToken& b : batch) {
    if (b.token < 0 || b.token >= hp.n_vocab) {
      return InvalidArgumentError("token id " + std::to_string(b.token) +
                                  " is outside the vocabulary [0, " + std::to_string(hp.n_vocab) +
                                  ")");
    }
    if (b.pos < 0) return InvalidArgumentError("negative position in batch");
    auto [it, inserted] = next.emplace(b.seq, b.pos + 1);
    if (!inserted) {
      if (b.pos != it->second) {
        return InvalidArgumentError("sequence " + std::to_string(b.seq) + " has position " +
                                    std::to_string(b.pos) + " after " +
                                    std::to_string(it->second - 1) +
                                    " in one batch; positions must be consecutive");
      }
      it->second = b.pos + 1;
    }
  }
  for (const auto& [seq, end] : next) RETURN_IF_ERROR(kv.EnsureCapacity(seq, end));
  return Status::Ok();
}

void ForwardPass::Resize(int n) {
  const ModelHParams& hp = model_.hparams();
  const size_t nt = static_cast<size_t>(n);
  const size_t q_dim = static_cast<size_t>(hp.n_head) * hp.head_dim;
  const size_t kv_dim = static_cast<size_t>(hp.n_head_kv) * hp.head_dim;
  auto grow = [](std::vector<float>& v, size_t size) {
    if (v.size() < size) v.resize(size);
  };
  grow(x_, nt * hp.n_embd);
  grow(xn_, nt * hp.n_embd);
  grow(tmp_, nt * hp.n_embd);
  grow(q_, nt * q_dim);
  grow(att_, nt * q_dim);
  grow(k_, nt * kv_dim);
  grow(v_, nt * kv_dim);
  grow(gate_, nt * hp.n_ff);
  grow(up_, nt * hp.n_ff);
  grow(rope_cos_, nt * hp.n_rot / 2);
  grow(rope_sin_, nt * hp.n_rot / 2);
  seqs_.resize(nt);
  n_ctx_.resize(nt);
  block_first_.resize(nt);
}

Status ForwardPass::Run(std::span<const BatchToken> batch, KvCache& kv,
                        std::vector<float>* logits) {
  logits->clear();
  if (batch.empty()) return Status::Ok();
  RETURN_IF_ERROR(Begin(batch, kv));
  return End(logits);
}

Status ForwardPass::Begin(std::span<const BatchToken> batch, KvCache& kv) {
  n_ = 0;
  layer_ = 0;
  kv_ = &kv;
  batch_.assign(batch.begin(), batch.end());
  if (batch.empty()) return Status::Ok();
  Status st = Validate(batch, kv);
  if (!st.ok()) {
    batch_.clear();
    return st;
  }
  n_ = static_cast<int>(batch.size());
  Resize(n_);
  block_bases_.clear();
  seq_first_.clear();
  Prepare();
  return Status::Ok();
}

void ForwardPass::Prepare() {
  const ModelHParams& hp = model_.hparams();
  const int E = hp.n_embd;
  const int half = hp.n_rot / 2;
  // Each sequence's block table once per pass (Validate grew the cache already): attention and
  // the K/V writes then index plain arrays instead of asking the cache per block and layer.
  for (int t = 0; t < n_; ++t) {
    const int seq = batch_[size_t(t)].seq;
    if (t > 0 && batch_[size_t(t) - 1].seq == seq) {
      block_first_[size_t(t)] = block_first_[size_t(t) - 1];
      continue;
    }
    int first = -1;
    for (const auto& [s, f] : seq_first_) {
      if (s == seq) first = f;
    }
    if (first < 0) {
      first = static_cast<int>(block_bases_.size());
      seq_first_.emplace_back(seq, first);
      kv_->AppendBlockBases(seq, &block_bases_);
    }
    block_first_[size_t(t)] = first;
  }
  for (int t = 0; t < n_; ++t) {
    const BatchToken& b = batch_[static_cast<size_t>(t)];
    model_.EmbedToken(b.token, &x_[size_t(t) * E]);
    seqs_[size_t(t)] = b.seq;
    n_ctx_[size_t(t)] = b.pos + 1;
    // Same float formulation as the reference implementations: theta_i = pos / base^(2i/n_rot),
    // divided by the file's per-pair factor when it has one (Llama 3.1/3.2 rope_freqs.weight).
    const std::vector<float>& factors = model_.rope_freq_factors();
    for (int i = 0; i < half; ++i) {
      float freq = 1.0f / std::pow(hp.rope_freq_base,
                                   static_cast<float>(2 * i) / static_cast<float>(hp.n_rot));
      if (!factors.empty()) freq /= factors[static_cast<size_t>(i)];
      const float val = static_cast<float>(b.pos) * freq;
      rope_cos_[size_t(t) * half + i] = std::cos(val);
      rope_sin_[size_t(t) * half + i] = std::sin(val);
    }
  }
}

Status ForwardPass::Advance(int to_layer) {
  to_layer = std::min(to_layer, model_.hparams().n_layer);
  for (; layer_ < to_layer; ++layer_) {
    if (n_ > 0) RETURN_IF_ERROR(Layer(layer_));
  }
  return Status::Ok();
}

Status ForwardPass::Join(std::span<const BatchToken> extra) {
  if (extra.empty()) return Status::Ok();
  if (kv_ == nullptr) return FailedPreconditionError("no pass in flight to join");
  for (const BatchToken& e : extra) {
    for (const auto& [s, f] : seq_first_) {
      if (s == e.seq) {
        return InvalidArgumentError("sequence " + std::to_string(e.seq) +
                                    " is already in the pass it would join");
      }
    }
  }
  if (joiner_ == nullptr) joiner_ = std::make_unique<ForwardPass>(model_, pool_, fused_attention_);
  ForwardPass& j = *joiner_;
  RETURN_IF_ERROR(j.Begin(extra, *kv_));
  RETURN_IF_ERROR(j.Advance(layer_));
  // Carry the joined entries' state over: residual stream, angles, block tables.
  const ModelHParams& hp = model_.hparams();
  const size_t E = size_t(hp.n_embd);
  const size_t half = size_t(hp.n_rot / 2);
  const int m = j.n_;
  const size_t at = size_t(n_);
  const int base = static_cast<int>(block_bases_.size());
  batch_.insert(batch_.end(), j.batch_.begin(), j.batch_.end());
  n_ += m;
  Resize(n_);
  std::copy_n(j.x_.begin(), size_t(m) * E, x_.begin() + std::ptrdiff_t(at * E));
  std::copy_n(j.rope_cos_.begin(), size_t(m) * half, rope_cos_.begin() + std::ptrdiff_t(at * half));
  std::copy_n(j.rope_sin_.begin(), size_t(m) * half, rope_sin_.begin() + std::ptrdiff_t(at * half));
  for (int t = 0; t < m; ++t) {
    seqs_[at + size_t(t)] = j.seqs_[size_t(t)];
    n_ctx_[at + size_t(t)] = j.n_ctx_[size_t(t)];
    block_first_[at + size_t(t)] = j.block_first_[size_t(t)] + base;
  }
  block_bases_.insert(block_bases_.end(), j.block_bases_.begin(), j.block_bases_.end());
  for (const auto& [s, f] : j.seq_first_) seq_first_.emplace_back(s, f + base);
  return Status::Ok();
}

Status ForwardPass::End(std::vector<float>* logits) {
  logits->clear();
  const ModelHParams& hp = model_.hparams();
  Status st = Advance(hp.n_layer);
  kv_ = nullptr;
  if (!st.ok()) return st;
  // Final norm and output projection, only for the entries that asked for logits.
  const int E = hp.n_embd;
  int n_out = 0;
  for (int t = 0; t < n_; ++t) {
    if (!batch_[size_t(t)].logits) continue;
    RmsNorm(&x_[size_t(t) * E], model_.output_norm().data(), &xn_[size_t(n_out) * E], E,
            hp.rms_eps);
    ++n_out;
  }
  if (n_out == 0) return Status::Ok();
  logits->resize(size_t(n_out) * hp.n_vocab);
  MatMul(model_.output(), xn_.data(), n_out, logits->data(), pool_);
  return Status::Ok();
}

Status ForwardPass::Layer(int l) {
  const ModelHParams& hp = model_.hparams();
  KvCache& kv = *kv_;
  const int n = n_;
  const int E = hp.n_embd;
  const int hd = hp.head_dim;
  const int q_dim = hp.n_head * hd;
  const int kv_dim = hp.n_head_kv * hd;
  const int half = hp.n_rot / 2;
  const GgmlType kv_type = KvGgmlType(kv.layout().type);
  const int bt = kv.block_tokens();
  const int64_t row_bytes = kv.layout().row_bytes();
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const LayerWeights& L = model_.layers()[size_t(l)];
  for (int t = 0; t < n; ++t) {
    RmsNorm(&x_[size_t(t) * E], L.attn_norm.data(), &xn_[size_t(t) * E], E, hp.rms_eps);
  }
  {  // one parallel region for Q, K and V
    const WeightMatrix* w[] = {&L.wq, &L.wk, &L.wv};
    float* y[] = {q_.data(), k_.data(), v_.data()};
    MatMulMany(w, xn_.data(), n, y, pool_);
  }
  AddBias(q_.data(), L.bq, n);
  AddBias(k_.data(), L.bk, n);
  AddBias(v_.data(), L.bv, n);
  for (int t = 0; t < n; ++t) {
    const BatchToken& b = batch_[size_t(t)];
    const float* c = &rope_cos_[size_t(t) * half];
    const float* s = &rope_sin_[size_t(t) * half];
    Rope(&q_[size_t(t) * q_dim], hp.n_head, hd, hp.n_rot, hp.rope_style, c, s);
    Rope(&k_[size_t(t) * kv_dim], hp.n_head_kv, hd, hp.n_rot, hp.rope_style, c, s);
    // Writable: the cache hands out its blocks read-only, and this pass owns (seq, pos).
    uint8_t* block = const_cast<uint8_t*>(
        block_bases_[size_t(block_first_[size_t(t)] + b.pos / bt)]);
    const int64_t row = (b.pos % bt) * row_bytes;
    RETURN_IF_ERROR(QuantizeRow(kv_type, &k_[size_t(t) * kv_dim],
                                block + kv.PartOffset(l, 0) + row, kv_dim));
    RETURN_IF_ERROR(QuantizeRow(kv_type, &v_[size_t(t) * kv_dim],
                                block + kv.PartOffset(l, 1) + row, kv_dim));
  }
  AttentionArgs args;
  args.kv = &kv;
  args.layer = l;
  args.n_head = hp.n_head;
  args.scale = scale;
  args.seqs = std::span<const int>(seqs_.data(), size_t(n));
  args.n_ctx = std::span<const int>(n_ctx_.data(), size_t(n));
  args.q = q_.data();
  args.out = att_.data();
  args.block_bases = block_bases_;
  args.block_first = std::span<const int>(block_first_.data(), size_t(n));
  if (fused_attention_) {
    Attention(args, pool_);
  } else {
    PlainAttention(args, pool_);
  }
  MatMul(L.wo, att_.data(), n, tmp_.data(), pool_);
  for (size_t i = 0; i < size_t(n) * E; ++i) x_[i] += tmp_[i];

  for (int t = 0; t < n; ++t) {
    RmsNorm(&x_[size_t(t) * E], L.ffn_norm.data(), &xn_[size_t(t) * E], E, hp.rms_eps);
  }
  {
    const WeightMatrix* w[] = {&L.w_gate, &L.w_up};
    float* y[] = {gate_.data(), up_.data()};
    MatMulMany(w, xn_.data(), n, y, pool_);
  }
  // SwiGLU (vectorized exp on the SIMD paths), spread over the threads for batches.
  pool_.ParallelFor(int64_t{n} * hp.n_ff, 16384, [&](int64_t begin, int64_t end, int) {
    SwiGlu(gate_.data() + begin, up_.data() + begin, end - begin);
  });
  MatMul(L.w_down, gate_.data(), n, tmp_.data(), pool_);
  for (size_t i = 0; i < size_t(n) * E; ++i) x_[i] += tmp_[i];
  return Status::Ok();
}

}  // namespace hotline::engine
