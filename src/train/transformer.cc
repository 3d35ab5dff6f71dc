#include "train/transformer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "train/kernels.h"

namespace hotline::train {

Status ModelShape::Validate() const {
  auto bad = [](const std::string& what) { return InvalidArgumentError("model shape: " + what); };
  if (n_vocab < 4 || n_vocab > (1 << 20)) return bad("vocabulary size must be in [4, 1048576]");
  if (dim < 2 || dim > 8192) return bad("dim must be in [2, 8192]");
  if (n_layer < 1 || n_layer > 64) return bad("layers must be in [1, 64]");
  if (n_head < 1 || dim % n_head != 0) return bad("dim must be a multiple of heads");
  if (n_head_kv < 1 || n_head % n_head_kv != 0) return bad("heads must be a multiple of kv heads");
  if (head_dim() % 2 != 0) return bad("dim / heads must be even (rotary pairs)");
  if (n_ff < 1 || n_ff > 65536) return bad("feed-forward width must be in [1, 65536]");
  if (seq_len < 2 || seq_len > 8192) return bad("sequence length must be in [2, 8192]");
  if (!(rope_base > 1.0f) || !(rms_eps > 0.0f))
    return bad("rope base and rms eps must be positive");
  return Status::Ok();
}

ParamLayout::ParamLayout(const ModelShape& s) {
  const int64_t E = s.dim, F = s.n_ff, V = s.n_vocab, KV = s.kv_dim();
  token_embd_ = Add("token_embd.weight", {E, V});
  output_norm_ = Add("output_norm.weight", {E});
  output_ = s.tied ? token_embd_ : Add("output.weight", {E, V});
  for (int l = 0; l < s.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    LayerOffsets o{};
    o.attn_norm = Add(b + "attn_norm.weight", {E});
    o.wq = Add(b + "attn_q.weight", {E, E});
    o.wk = Add(b + "attn_k.weight", {E, KV});
    o.wv = Add(b + "attn_v.weight", {E, KV});
    o.wo = Add(b + "attn_output.weight", {E, E});
    o.ffn_norm = Add(b + "ffn_norm.weight", {E});
    o.w_gate = Add(b + "ffn_gate.weight", {E, F});
    o.w_up = Add(b + "ffn_up.weight", {E, F});
    o.w_down = Add(b + "ffn_down.weight", {F, E});
    layers_.push_back(o);
  }
}

size_t ParamLayout::Add(const std::string& name, std::vector<int64_t> dims) {
  TensorSlice t;
  t.name = name;
  t.size = 1;
  for (int64_t d : dims) t.size *= size_t(d);
  t.dims = std::move(dims);
  t.offset = total_;
  total_ += t.size;
  tensors_.push_back(std::move(t));
  return tensors_.back().offset;
}

std::vector<float> InitParams(const ModelShape& s, uint64_t seed) {
  ParamLayout layout(s);
  std::vector<float> p(layout.total());
  const float resid_scale = 1.0f / std::sqrt(2.0f * static_cast<float>(s.n_layer));
  uint64_t index = 0;
  for (const TensorSlice& t : layout.tensors()) {
    // One generator per tensor, seeded by (seed, tensor index): adding a tensor does not shift
    // the others' values.
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ULL + (++index));
    std::normal_distribution<float> nd(0.0f, 0.02f);
    float* w = p.data() + t.offset;
    if (t.dims.size() == 1) {
      std::fill(w, w + t.size, 1.0f);
      continue;
    }
    const bool resid =
        t.name.ends_with("attn_output.weight") || t.name.ends_with("ffn_down.weight");
    for (size_t i = 0; i < t.size; ++i) w[i] = nd(rng) * (resid ? resid_scale : 1.0f);
  }
  return p;
}

namespace {

void RmsNormRow(const float* x, const float* g, float* y, float* rs, int n, float eps) {
  float ss = 0.f;
  for (int i = 0; i < n; ++i) ss += x[i] * x[i];
  const float r = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  *rs = r;
  for (int i = 0; i < n; ++i) y[i] = x[i] * r * g[i];
}

// dx += d(rmsnorm)/dx applied to dy. y = x * r * g, r = (mean(x^2) + eps)^-1/2.
void RmsNormBackwardRow(const float* x, const float* g, float r, const float* dy, float* dx,
                        int n) {
  float dot = 0.f;
  for (int i = 0; i < n; ++i) dot += dy[i] * g[i] * x[i];
  const float c = r * r * r * dot / static_cast<float>(n);
  for (int i = 0; i < n; ++i) dx[i] += r * dy[i] * g[i] - c * x[i];
}

// Rotates every head of x by +angle (sign = 1) or -angle (sign = -1, the transpose).
void RopeRow(float* x, int n_heads, int head_dim, const float* c, const float* s, float sign) {
  const int half = head_dim / 2;
  for (int h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (int i = 0; i < half; ++i) {
      const float a = v[2 * i], b = v[2 * i + 1];
      const float sn = sign * s[i];
      v[2 * i] = a * c[i] - b * sn;
      v[2 * i + 1] = a * sn + b * c[i];
    }
  }
}

}  // namespace

TrainModel::TrainModel(const ModelShape& shape, engine::ComputePool& pool)
    : shape_(shape), layout_(shape), pool_(pool) {}

void TrainModel::Resize(int B, int T) {
  if (B == B_ && T == T_) return;
  B_ = B;
  T_ = T;
  const size_t N = size_t(B) * T, L = size_t(shape_.n_layer), E = size_t(shape_.dim);
  const size_t QD = E, KVD = size_t(shape_.kv_dim()), F = size_t(shape_.n_ff);
  const size_t V = size_t(shape_.n_vocab), H = size_t(shape_.n_head);
  x_.assign((L + 1) * N * E, 0.f);
  xn1_.assign(L * N * E, 0.f);
  rs1_.assign(L * N, 0.f);
  q_.assign(L * N * QD, 0.f);
  k_.assign(L * N * KVD, 0.f);
  v_.assign(L * N * KVD, 0.f);
  probs_.assign(L * size_t(B) * H * size_t(T) * size_t(T), 0.f);
  att_.assign(L * N * QD, 0.f);
  xmid_.assign(L * N * E, 0.f);
  xn2_.assign(L * N * E, 0.f);
  rs2_.assign(L * N, 0.f);
  gate_.assign(L * N * F, 0.f);
  up_.assign(L * N * F, 0.f);
  hid_.assign(L * N * F, 0.f);
  xf_.assign(N * E, 0.f);
  rsf_.assign(N, 0.f);
  logits_.assign(N * V, 0.f);
  dx_.assign(N * E, 0.f);
  dxn_.assign(N * E, 0.f);
  dq_.assign(N * QD, 0.f);
  dk_.assign(N * KVD, 0.f);
  dv_.assign(N * KVD, 0.f);
  datt_.assign(N * QD, 0.f);
  dgate_.assign(N * F, 0.f);
  dup_.assign(N * F, 0.f);
  dhid_.assign(N * F, 0.f);
  dxf_.assign(N * E, 0.f);
  const int half = shape_.head_dim() / 2;
  rope_cos_.assign(size_t(T) * half, 0.f);
  rope_sin_.assign(size_t(T) * half, 0.f);
  // The engine's formulation: theta_i = pos / base^(2i / head_dim), in float.
  for (int t = 0; t < T; ++t) {
    for (int i = 0; i < half; ++i) {
      const float freq =
          1.0f / std::pow(shape_.rope_base,
                          static_cast<float>(2 * i) / static_cast<float>(shape_.head_dim()));
      const float val = static_cast<float>(t) * freq;
      rope_cos_[size_t(t) * half + i] = std::cos(val);
      rope_sin_[size_t(t) * half + i] = std::sin(val);
    }
  }
}

Result<double> TrainModel::CheckBatch(std::span<const float> params, const Batch& batch) const {
  const ModelShape& s = shape_;
  if (params.size() != layout_.total()) {
    return InvalidArgumentError("parameter vector has " + std::to_string(params.size()) +
                                " values, the model needs " + std::to_string(layout_.total()));
  }
  if (batch.B < 1 || batch.T < 1 || batch.T > s.seq_len) {
    return InvalidArgumentError("batch shape " + std::to_string(batch.B) + " x " +
                                std::to_string(batch.T) + " is outside [1, *] x [1, " +
                                std::to_string(s.seq_len) + "]");
  }
  const size_t N = size_t(batch.B) * size_t(batch.T);
  if (batch.tokens.size() != N || batch.targets.size() != N || batch.weights.size() != N) {
    return InvalidArgumentError("batch arrays must hold B * T entries");
  }
  double wsum = 0;
  for (size_t i = 0; i < N; ++i) {
    if (batch.tokens[i] < 0 || batch.tokens[i] >= s.n_vocab) {
      return InvalidArgumentError("token id " + std::to_string(batch.tokens[i]) +
                                  " is outside the vocabulary");
    }
    const float w = batch.weights[i];
    if (!(w >= 0.0f) || !std::isfinite(w)) return InvalidArgumentError("loss weights must be >= 0");
    if (w > 0 && (batch.targets[i] < 0 || batch.targets[i] >= s.n_vocab)) {
      return InvalidArgumentError("target id " + std::to_string(batch.targets[i]) +
                                  " is outside the vocabulary");
    }
    wsum += w;
  }
  return wsum;
}

void TrainModel::AttentionForward(int l, int B, int T) {
  const ModelShape& s = shape_;
  const int E = s.dim, hd = s.head_dim(), H = s.n_head, KVD = s.kv_dim();
  const int group = H / s.n_head_kv;
  const size_t N = size_t(B) * size_t(T);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const float* q = &q_[size_t(l) * N * E];
  const float* k = &k_[size_t(l) * N * KVD];
  const float* v = &v_[size_t(l) * N * KVD];
  float* pr = &probs_[size_t(l) * size_t(B) * H * T * T];
  float* att = &att_[size_t(l) * N * E];
  pool_.ParallelFor(int64_t{B} * H, 1, [&](int64_t j0, int64_t j1, int) {
    for (int64_t j = j0; j < j1; ++j) {
      const int b = static_cast<int>(j / H), h = static_cast<int>(j % H), kh = h / group;
      float* p = pr + size_t(j) * T * T;
      for (int t = 0; t < T; ++t) {
        const size_t nt = size_t(b) * T + t;
        const float* qt = &q[nt * E + size_t(h) * hd];
        float* pt = p + size_t(t) * T;
        float mx = -INFINITY;
        for (int u = 0; u <= t; ++u) {
          pt[u] = scale * Dot(qt, &k[(size_t(b) * T + u) * KVD + size_t(kh) * hd], hd);
          mx = std::max(mx, pt[u]);
        }
        float sum = 0.f;
        for (int u = 0; u <= t; ++u) {
          pt[u] = std::exp(pt[u] - mx);
          sum += pt[u];
        }
        const float inv = 1.0f / sum;
        float* ot = &att[nt * E + size_t(h) * hd];
        std::fill(ot, ot + hd, 0.0f);
        for (int u = 0; u <= t; ++u) {
          pt[u] *= inv;
          Axpy(pt[u], &v[(size_t(b) * T + u) * KVD + size_t(kh) * hd], ot, hd);
        }
        for (int u = t + 1; u < T; ++u) pt[u] = 0.0f;
      }
    }
  });
}

double TrainModel::CrossEntropy(const Batch& batch, double wsum) {
  const int V = shape_.n_vocab;
  const size_t N = size_t(batch.B) * size_t(batch.T);
  std::vector<double> row_loss(N, 0.0);
  const double inv_w = wsum > 0 ? 1.0 / wsum : 0.0;
  pool_.ParallelFor(int64_t(N), 64, [&](int64_t n0, int64_t n1, int) {
    for (int64_t n = n0; n < n1; ++n) {
      float* z = &logits_[size_t(n) * V];
      const float w = batch.weights[size_t(n)];
      if (w == 0.0f) {
        std::fill(z, z + V, 0.0f);
        continue;
      }
      float mx = z[0];
      for (int i = 1; i < V; ++i) mx = std::max(mx, z[i]);
      double sum = 0;
      for (int i = 0; i < V; ++i) sum += std::exp(double(z[i] - mx));
      const double lse = std::log(sum) + mx;
      const int tgt = batch.targets[size_t(n)];
      row_loss[size_t(n)] = double(w) * (lse - double(z[tgt]));
      const double c = double(w) * inv_w;
      for (int i = 0; i < V; ++i) z[i] = static_cast<float>(std::exp(double(z[i]) - lse) * c);
      z[tgt] -= static_cast<float>(c);
    }
  });
  double loss = 0;
  for (double r : row_loss) loss += r;
  return loss * inv_w;
}

Result<double> TrainModel::Forward(std::span<const float> params, const Batch& batch,
                                   std::vector<float>* logits) {
  ASSIGN_OR_RETURN(const double wsum, CheckBatch(params, batch));
  weight_sum_ = wsum;
  Resize(batch.B, batch.T);

  const ModelShape& s = shape_;
  const int B = batch.B, T = batch.T, E = s.dim, hd = s.head_dim(), H = s.n_head;
  const int Hkv = s.n_head_kv, KVD = s.kv_dim(), F = s.n_ff, V = s.n_vocab;
  const int half = hd / 2;
  const size_t N = size_t(B) * size_t(T);
  const int Ni = static_cast<int>(N);
  const float* P = params.data();

  for (size_t n = 0; n < N; ++n) {
    std::memcpy(&x_[n * E], P + layout_.token_embd() + size_t(batch.tokens[n]) * E,
                sizeof(float) * size_t(E));
  }
  for (int l = 0; l < s.n_layer; ++l) {
    const LayerOffsets& o = layout_.layer(l);
    float* x = &x_[size_t(l) * N * E];
    float* xn1 = &xn1_[size_t(l) * N * E];
    float* rs1 = &rs1_[size_t(l) * N];
    float* q = &q_[size_t(l) * N * E];
    float* k = &k_[size_t(l) * N * KVD];
    float* v = &v_[size_t(l) * N * KVD];
    float* att = &att_[size_t(l) * N * E];
    float* xmid = &xmid_[size_t(l) * N * E];
    float* xn2 = &xn2_[size_t(l) * N * E];
    float* rs2 = &rs2_[size_t(l) * N];
    float* gate = &gate_[size_t(l) * N * F];
    float* up = &up_[size_t(l) * N * F];
    float* hid = &hid_[size_t(l) * N * F];
    float* xnext = &x_[size_t(l + 1) * N * E];

    for (size_t n = 0; n < N; ++n) {
      RmsNormRow(&x[n * E], P + o.attn_norm, &xn1[n * E], &rs1[n], E, s.rms_eps);
    }
    LinearForward(xn1, P + o.wq, q, Ni, E, E, pool_);
    LinearForward(xn1, P + o.wk, k, Ni, E, KVD, pool_);
    LinearForward(xn1, P + o.wv, v, Ni, E, KVD, pool_);
    for (size_t n = 0; n < N; ++n) {
      const size_t t = n % size_t(T);
      RopeRow(&q[n * E], H, hd, &rope_cos_[t * half], &rope_sin_[t * half], 1.0f);
      RopeRow(&k[n * KVD], Hkv, hd, &rope_cos_[t * half], &rope_sin_[t * half], 1.0f);
    }
    AttentionForward(l, B, T);
    LinearForward(att, P + o.wo, xmid, Ni, E, E, pool_);
    for (size_t i = 0; i < N * E; ++i) xmid[i] += x[i];
    for (size_t n = 0; n < N; ++n) {
      RmsNormRow(&xmid[n * E], P + o.ffn_norm, &xn2[n * E], &rs2[n], E, s.rms_eps);
    }
    LinearForward(xn2, P + o.w_gate, gate, Ni, E, F, pool_);
    LinearForward(xn2, P + o.w_up, up, Ni, E, F, pool_);
    for (size_t i = 0; i < N * F; ++i) {
      const float g = gate[i];
      hid[i] = g / (1.0f + std::exp(-g)) * up[i];
    }
    LinearForward(hid, P + o.w_down, xnext, Ni, F, E, pool_);
    for (size_t i = 0; i < N * E; ++i) xnext[i] += xmid[i];
  }
  const float* xl = &x_[size_t(s.n_layer) * N * E];
  for (size_t n = 0; n < N; ++n) {
    RmsNormRow(&xl[n * E], P + layout_.output_norm(), &xf_[n * E], &rsf_[n], E, s.rms_eps);
  }
  LinearForward(xf_.data(), P + layout_.output(), logits_.data(), Ni, E, V, pool_);
  if (logits != nullptr) logits->assign(logits_.begin(), logits_.end());
  return CrossEntropy(batch, wsum);
}

void TrainModel::NormBackward(const float* params, float* grads, const float* x, const float* rs,
                              size_t g_off, const float* dy, float* dx, size_t N) {
  const int E = shape_.dim;
  float* dg = grads + g_off;
  // Gain gradient: each element summed over rows in row order (one owner per element).
  for (size_t n = 0; n < N; ++n) {
    for (int i = 0; i < E; ++i) dg[i] += dy[n * E + i] * x[n * E + i] * rs[n];
  }
  pool_.ParallelFor(int64_t(N), 64, [&](int64_t n0, int64_t n1, int) {
    for (int64_t n = n0; n < n1; ++n) {
      RmsNormBackwardRow(&x[size_t(n) * E], params + g_off, rs[n], &dy[size_t(n) * E],
                         &dx[size_t(n) * E], E);
    }
  });
}

void TrainModel::AttentionBackward(int l, int B, int T) {
  const ModelShape& s = shape_;
  const int E = s.dim, hd = s.head_dim(), H = s.n_head, Hkv = s.n_head_kv, KVD = s.kv_dim();
  const int group = H / Hkv;
  const size_t N = size_t(B) * size_t(T);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const float* q = &q_[size_t(l) * N * E];
  const float* k = &k_[size_t(l) * N * KVD];
  const float* v = &v_[size_t(l) * N * KVD];
  const float* pr = &probs_[size_t(l) * size_t(B) * H * T * T];
  std::fill(dk_.begin(), dk_.end(), 0.0f);
  std::fill(dv_.begin(), dv_.end(), 0.0f);
  // One task per (sequence, kv head): it owns that head's dk/dv and its query heads' dq.
  pool_.ParallelFor(int64_t{B} * Hkv, 1, [&](int64_t j0, int64_t j1, int) {
    std::vector<float> dp(static_cast<size_t>(T));
    for (int64_t j = j0; j < j1; ++j) {
      const int b = static_cast<int>(j / Hkv), kh = static_cast<int>(j % Hkv);
      for (int h = kh * group; h < (kh + 1) * group; ++h) {
        const float* p = pr + (size_t(b) * H + h) * T * T;
        for (int t = 0; t < T; ++t) {
          const size_t nt = size_t(b) * T + t;
          const float* pt = p + size_t(t) * T;
          const float* dot = &datt_[nt * E + size_t(h) * hd];
          float* dqt = &dq_[nt * E + size_t(h) * hd];
          std::fill(dqt, dqt + hd, 0.0f);
          float sum = 0.f;
          for (int u = 0; u <= t; ++u) {
            const size_t nu = size_t(b) * T + u;
            dp[size_t(u)] = Dot(dot, &v[nu * KVD + size_t(kh) * hd], hd);
            Axpy(pt[u], dot, &dv_[nu * KVD + size_t(kh) * hd], hd);
            sum += pt[u] * dp[size_t(u)];
          }
          const float* qt = &q[nt * E + size_t(h) * hd];
          for (int u = 0; u <= t; ++u) {
            const size_t nu = size_t(b) * T + u;
            const float ds = pt[u] * (dp[size_t(u)] - sum) * scale;
            Axpy(ds, &k[nu * KVD + size_t(kh) * hd], dqt, hd);
            Axpy(ds, qt, &dk_[nu * KVD + size_t(kh) * hd], hd);
          }
        }
      }
    }
  });
}

void TrainModel::Backward(std::span<const float> params, const Batch& batch,
                          std::span<float> grads) {
  const ModelShape& s = shape_;
  const int B = batch.B, T = batch.T, E = s.dim, hd = s.head_dim(), H = s.n_head;
  const int Hkv = s.n_head_kv, KVD = s.kv_dim(), F = s.n_ff, V = s.n_vocab;
  const int half = hd / 2;
  const size_t N = size_t(B) * T;
  const int Ni = static_cast<int>(N);
  const float* P = params.data();
  float* G = grads.data();
  std::fill(grads.begin(), grads.end(), 0.0f);

  // Output projection and final norm.
  LinearBackwardWeight(logits_.data(), xf_.data(), G + layout_.output(), Ni, E, V, pool_);
  LinearBackwardInput(logits_.data(), P + layout_.output(), dxf_.data(), Ni, E, V, false, pool_);
  const float* xl = &x_[size_t(s.n_layer) * N * E];
  std::fill(dx_.begin(), dx_.end(), 0.0f);
  NormBackward(P, G, xl, rsf_.data(), layout_.output_norm(), dxf_.data(), dx_.data(), N);

  for (int l = s.n_layer - 1; l >= 0; --l) {
    const LayerOffsets& o = layout_.layer(l);
    const float* x = &x_[size_t(l) * N * E];
    const float* xn1 = &xn1_[size_t(l) * N * E];
    const float* rs1 = &rs1_[size_t(l) * N];
    const float* att = &att_[size_t(l) * N * E];
    const float* xmid = &xmid_[size_t(l) * N * E];
    const float* xn2 = &xn2_[size_t(l) * N * E];
    const float* rs2 = &rs2_[size_t(l) * N];
    const float* gate = &gate_[size_t(l) * N * F];
    const float* up = &up_[size_t(l) * N * F];
    const float* hid = &hid_[size_t(l) * N * F];

    // dx_ holds d(loss)/d(x_{l+1}); x_{l+1} = xmid + W_down hid.
    LinearBackwardWeight(dx_.data(), hid, G + o.w_down, Ni, F, E, pool_);
    LinearBackwardInput(dx_.data(), P + o.w_down, dhid_.data(), Ni, F, E, false, pool_);
    for (size_t i = 0; i < N * F; ++i) {
      const float g = gate[i];
      const float sg = 1.0f / (1.0f + std::exp(-g));
      const float silu = g * sg;
      dup_[i] = dhid_[i] * silu;
      dgate_[i] = dhid_[i] * up[i] * sg * (1.0f + g * (1.0f - sg));
    }
    LinearBackwardWeight(dgate_.data(), xn2, G + o.w_gate, Ni, E, F, pool_);
    LinearBackwardWeight(dup_.data(), xn2, G + o.w_up, Ni, E, F, pool_);
    LinearBackwardInput(dgate_.data(), P + o.w_gate, dxn_.data(), Ni, E, F, false, pool_);
    LinearBackwardInput(dup_.data(), P + o.w_up, dxn_.data(), Ni, E, F, true, pool_);
    // dx_ continues as d/d(xmid): the residual path plus the norm's contribution.
    NormBackward(P, G, xmid, rs2, o.ffn_norm, dxn_.data(), dx_.data(), N);

    // xmid = x + W_o att.
    LinearBackwardWeight(dx_.data(), att, G + o.wo, Ni, E, E, pool_);
    LinearBackwardInput(dx_.data(), P + o.wo, datt_.data(), Ni, E, E, false, pool_);
    AttentionBackward(l, B, T);
    for (size_t n = 0; n < N; ++n) {
      const size_t t = n % size_t(T);
      RopeRow(&dq_[n * E], H, hd, &rope_cos_[t * half], &rope_sin_[t * half], -1.0f);
      RopeRow(&dk_[n * KVD], Hkv, hd, &rope_cos_[t * half], &rope_sin_[t * half], -1.0f);
    }
    LinearBackwardWeight(dq_.data(), xn1, G + o.wq, Ni, E, E, pool_);
    LinearBackwardWeight(dk_.data(), xn1, G + o.wk, Ni, E, KVD, pool_);
    LinearBackwardWeight(dv_.data(), xn1, G + o.wv, Ni, E, KVD, pool_);
    LinearBackwardInput(dq_.data(), P + o.wq, dxn_.data(), Ni, E, E, false, pool_);
    LinearBackwardInput(dk_.data(), P + o.wk, dxn_.data(), Ni, E, KVD, true, pool_);
    LinearBackwardInput(dv_.data(), P + o.wv, dxn_.data(), Ni, E, KVD, true, pool_);
    NormBackward(P, G, x, rs1, o.attn_norm, dxn_.data(), dx_.data(), N);
  }
  float* demb = G + layout_.token_embd();
  for (size_t n = 0; n < N; ++n) {
    Axpy(1.0f, &dx_[n * E], demb + size_t(batch.tokens[n]) * E, E);
  }
}

}  // namespace hotline::train
