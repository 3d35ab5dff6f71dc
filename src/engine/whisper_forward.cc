#include "engine/whisper_forward.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "engine/matmul.h"
#include "engine/whisper_ops.h"

namespace hotline::engine {
namespace {

using whisper::AddBias;
using whisper::AddBiasGelu;
using whisper::AddResidual;
using whisper::AttentionSpec;
using whisper::LayerNormRows;
using whisper::MultiHeadAttention;
using whisper::SplitHeads;

void GrowTo(std::vector<float>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
}

// Copies the kernel-3 windows of `x` (n_in frame-major rows of `width` floats) into `cols`: row t
// is input rows stride * t - 1, stride * t, stride * t + 1 (zeros past either end), which is the
// column order of WhisperConv::matrix.
void Im2Col(const float* x, int n_in, int width, int stride, int n_out, float* cols) {
  const size_t row_bytes = sizeof(float) * static_cast<size_t>(width);
  for (int t = 0; t < n_out; ++t) {
    float* dst = cols + int64_t{t} * 3 * width;
    for (int k = 0; k < 3; ++k) {
      const int src = stride * t + k - 1;
      float* d = dst + int64_t{k} * width;
      if (src < 0 || src >= n_in) {
        std::memset(d, 0, row_bytes);
      } else {
        std::memcpy(d, x + int64_t{src} * width, row_bytes);
      }
    }
  }
}

// The feed-forward half of an encoder or decoder block, in place on x (n rows of width E):
// x += fc2(GELU(fc1(LayerNorm(x)) + b1)) + b2. xn (n x E), hidden (n x 4E) and tmp (n x E) are
// workspaces.
void MlpBlock(const WhisperLayerNorm& ln, const WhisperMlpWeights& mlp, float* x, float* xn,
              float* hidden, float* tmp, int n, int E, ComputePool& pool) {
  LayerNormRows(x, ln, xn, n, E, pool);
  MatMul(mlp.fc1, xn, n, hidden, pool);
  AddBiasGelu(hidden, mlp.fc1_bias, n, 4 * E, pool);
  MatMul(mlp.fc2, hidden, n, tmp, pool);
  AddResidual(x, tmp, mlp.fc2_bias, n, E);
}

}  // namespace

// ---- encoder ----------------------------------------------------------------------------------

WhisperEncoder::WhisperEncoder(const WhisperModel& model, ComputePool& pool)
    : model_(model), pool_(pool) {
  scratch_.resize(static_cast<size_t>(pool.num_threads()) *
                  static_cast<size_t>(model.hparams().n_audio_ctx));
}

void WhisperEncoder::Grow(int n_frames) {
  const WhisperHparams& hp = model_.hparams();
  const int64_t n = n_frames / 2;
  const int64_t E = hp.n_audio_state;
  GrowTo(cols_, std::max(int64_t{n_frames} * 3 * hp.n_mels, n * 3 * E));
  GrowTo(h1_, int64_t{n_frames} * E);
  for (std::vector<float>* v : {&x_, &xn_, &q_, &k_, &v_, &att_, &tmp_, &kh_, &vh_}) {
    GrowTo(*v, n * E);
  }
  GrowTo(mlp_, n * 4 * E);
}

Status WhisperEncoder::Encode(std::span<const float> mel, int n_frames, std::vector<float>* out) {
  const WhisperHparams& hp = model_.hparams();
  if (n_frames < 2 || n_frames % 2 != 0 || n_frames > 2 * hp.n_audio_ctx) {
    return InvalidArgumentError("whisper encoder: " + std::to_string(n_frames) +
                                " mel frames; expected an even count in [2, " +
                                std::to_string(2 * hp.n_audio_ctx) + "] (pad odd counts by one)");
  }
  if (mel.size() != static_cast<size_t>(n_frames) * static_cast<size_t>(hp.n_mels)) {
    return InvalidArgumentError("whisper encoder: " + std::to_string(mel.size()) +
                                " mel values for " + std::to_string(n_frames) + " frames of " +
                                std::to_string(hp.n_mels) + " bands");
  }
  Grow(n_frames);
  const int n = n_frames / 2;
  const int E = hp.n_audio_state;
  const WhisperConv& c1 = model_.conv1();
  const WhisperConv& c2 = model_.conv2();

  Im2Col(mel.data(), n_frames, hp.n_mels, 1, n_frames, cols_.data());
  MatMul(c1.matrix, cols_.data(), n_frames, h1_.data(), pool_);
  AddBiasGelu(h1_.data(), c1.bias, n_frames, E, pool_);
  Im2Col(h1_.data(), n_frames, E, 2, n, cols_.data());
  MatMul(c2.matrix, cols_.data(), n, x_.data(), pool_);
  AddBiasGelu(x_.data(), c2.bias, n, E, pool_);
  const float* pos = model_.encoder_positions().data();
  for (int64_t i = 0; i < int64_t{n} * E; ++i) x_[size_t(i)] += pos[i];

  for (const WhisperEncoderLayer& L : model_.encoder_layers()) Layer(L, n);

  out->resize(static_cast<size_t>(n) * static_cast<size_t>(E));
  LayerNormRows(x_.data(), model_.encoder_ln_post(), out->data(), n, E, pool_);
  return Status::Ok();
}

void WhisperEncoder::Layer(const WhisperEncoderLayer& L, int n) {
  const WhisperHparams& hp = model_.hparams();
  const int E = hp.n_audio_state;
  const int H = hp.n_audio_head;
  const int D = E / H;

  LayerNormRows(x_.data(), L.attn_ln, xn_.data(), n, E, pool_);
  const WeightMatrix* ws[] = {&L.attn.query, &L.attn.key, &L.attn.value};
  float* ys[] = {q_.data(), k_.data(), v_.data()};
  MatMulMany(ws, xn_.data(), n, ys, pool_);
  AddBias(q_.data(), L.attn.query_bias, n, E);
  AddBias(v_.data(), L.attn.value_bias, n, E);
  SplitHeads(k_.data(), n, H, D, kh_.data(), n, 0);
  SplitHeads(v_.data(), n, H, D, vh_.data(), n, 0);
  AttentionSpec a;
  a.q = q_.data();
  a.k = kh_.data();
  a.v = vh_.data();
  a.out = att_.data();
  a.n_q = n;
  a.n_head = H;
  a.head_dim = D;
  a.capacity = n;
  a.n_kv = n;
  a.scratch = scratch_.data();
  a.scratch_stride = hp.n_audio_ctx;
  MultiHeadAttention(a, pool_);
  MatMul(L.attn.out, att_.data(), n, tmp_.data(), pool_);
  AddResidual(x_.data(), tmp_.data(), L.attn.out_bias, n, E);

  MlpBlock(L.mlp_ln, L.mlp, x_.data(), xn_.data(), mlp_.data(), tmp_.data(), n, E, pool_);
}

// ---- decoder ----------------------------------------------------------------------------------

WhisperDecoder::WhisperDecoder(const WhisperModel& model, ComputePool& pool, int max_tokens)
    : model_(model),
      pool_(pool),
      capacity_(max_tokens <= 0 || max_tokens > model.hparams().n_text_ctx
                    ? model.hparams().n_text_ctx
                    : max_tokens) {
  const WhisperHparams& hp = model.hparams();
  const size_t cache = size_t(hp.n_text_layer) * size_t(capacity_) * size_t(hp.n_text_state);
  self_k_.resize(cache);
  self_v_.resize(cache);
  scratch_.resize(size_t(pool.num_threads()) * size_t(std::max(capacity_, hp.n_audio_ctx)));
}

void WhisperDecoder::Grow(int n) {
  if (n <= grown_) return;
  const int64_t E = model_.hparams().n_text_state;
  for (std::vector<float>* v : {&x_, &xn_, &q_, &k_, &v_, &att_, &tmp_}) GrowTo(*v, n * E);
  GrowTo(mlp_, n * 4 * E);
  grown_ = n;
}

Status WhisperDecoder::SetAudio(std::span<const float> encoder_output, int n_positions) {
  const WhisperHparams& hp = model_.hparams();
  n_audio_ = 0;
  n_past_ = 0;
  if (n_positions < 1 || n_positions > hp.n_audio_ctx) {
    return InvalidArgumentError("whisper decoder: " + std::to_string(n_positions) +
                                " audio positions; expected 1.." + std::to_string(hp.n_audio_ctx));
  }
  if (encoder_output.size() != size_t(n_positions) * size_t(hp.n_audio_state)) {
    return InvalidArgumentError("whisper decoder: " + std::to_string(encoder_output.size()) +
                                " encoder values for " + std::to_string(n_positions) +
                                " positions of " + std::to_string(hp.n_audio_state));
  }
  const int E = hp.n_text_state;
  const int H = hp.n_text_head;
  const int D = E / H;
  const int64_t per_layer = int64_t{n_positions} * E;
  GrowTo(cross_k_, per_layer * hp.n_text_layer);
  GrowTo(cross_v_, per_layer * hp.n_text_layer);
  // The projections' outputs go through the encoder-sized workspaces k_/v_ before the head split.
  GrowTo(k_, per_layer);
  GrowTo(v_, per_layer);
  for (int l = 0; l < hp.n_text_layer; ++l) {
    const WhisperAttentionWeights& c = model_.decoder_layers()[size_t(l)].cross_attn;
    const WeightMatrix* ws[] = {&c.key, &c.value};
    float* ys[] = {k_.data(), v_.data()};
    MatMulMany(ws, encoder_output.data(), n_positions, ys, pool_);
    AddBias(v_.data(), c.value_bias, n_positions, E);
    SplitHeads(k_.data(), n_positions, H, D, cross_k_.data() + l * per_layer, n_positions, 0);
    SplitHeads(v_.data(), n_positions, H, D, cross_v_.data() + l * per_layer, n_positions, 0);
  }
  n_audio_ = n_positions;
  return Status::Ok();
}

Status WhisperDecoder::Decode(std::span<const int32_t> tokens, std::vector<float>* logits,
                              WhisperLogits which) {
  const WhisperHparams& hp = model_.hparams();
  if (n_audio_ == 0) {
    return FailedPreconditionError("whisper decoder: Decode before SetAudio");
  }
  if (tokens.empty()) return InvalidArgumentError("whisper decoder: no tokens to decode");
  for (int32_t t : tokens) {
    if (t < 0 || t >= hp.n_vocab) {
      return InvalidArgumentError("whisper decoder: token id " + std::to_string(t) +
                                  " is outside the vocabulary [0, " + std::to_string(hp.n_vocab) +
                                  ")");
    }
  }
  if (tokens.size() > size_t(capacity_ - n_past_)) {
    return OutOfRangeError("whisper decoder: " + std::to_string(n_past_) + " + " +
                           std::to_string(tokens.size()) + " tokens exceed the text context of " +
                           std::to_string(capacity_) + " positions");
  }
  const int n = static_cast<int>(tokens.size());
  const int E = hp.n_text_state;
  Grow(n);
  const float* pos = model_.decoder_positions().data();
  for (int i = 0; i < n; ++i) {
    float* x = x_.data() + int64_t{i} * E;
    model_.EmbedToken(tokens[size_t(i)], x);
    const float* p = pos + int64_t{n_past_ + i} * E;
    for (int j = 0; j < E; ++j) x[j] += p[j];
  }
  for (int l = 0; l < hp.n_text_layer; ++l) Layer(l, n);
  n_past_ += n;

  // Logits of the rows asked for: only the last one in the generation loop.
  const int first = which == WhisperLogits::kAll ? 0 : n - 1;
  const int rows = n - first;
  LayerNormRows(x_.data() + int64_t{first} * E, model_.decoder_ln(), xn_.data(), rows, E, pool_);
  logits->resize(size_t(rows) * size_t(hp.n_vocab));
  MatMul(model_.token_embedding(), xn_.data(), rows, logits->data(), pool_);
  return Status::Ok();
}

void WhisperDecoder::Layer(int l, int n) {
  const WhisperHparams& hp = model_.hparams();
  const WhisperDecoderLayer& L = model_.decoder_layers()[size_t(l)];
  const int E = hp.n_text_state;
  const int H = hp.n_text_head;
  const int D = E / H;
  const int64_t self_layer = int64_t{capacity_} * E;

  // Causal self-attention; this call's keys/values join the cache first, so token i sees the
  // history and the call's tokens up to itself.
  LayerNormRows(x_.data(), L.attn_ln, xn_.data(), n, E, pool_);
  const WeightMatrix* ws[] = {&L.attn.query, &L.attn.key, &L.attn.value};
  float* ys[] = {q_.data(), k_.data(), v_.data()};
  MatMulMany(ws, xn_.data(), n, ys, pool_);
  AddBias(q_.data(), L.attn.query_bias, n, E);
  AddBias(v_.data(), L.attn.value_bias, n, E);
  float* kc = self_k_.data() + l * self_layer;
  float* vc = self_v_.data() + l * self_layer;
  SplitHeads(k_.data(), n, H, D, kc, capacity_, n_past_);
  SplitHeads(v_.data(), n, H, D, vc, capacity_, n_past_);
  AttentionSpec a;
  a.q = q_.data();
  a.k = kc;
  a.v = vc;
  a.out = att_.data();
  a.n_q = n;
  a.n_head = H;
  a.head_dim = D;
  a.capacity = capacity_;
  a.causal = true;
  a.pos0 = n_past_;
  a.scratch = scratch_.data();
  a.scratch_stride = std::max(capacity_, hp.n_audio_ctx);
  MultiHeadAttention(a, pool_);
  MatMul(L.attn.out, att_.data(), n, tmp_.data(), pool_);
  AddResidual(x_.data(), tmp_.data(), L.attn.out_bias, n, E);

  // Cross-attention over the utterance.
  LayerNormRows(x_.data(), L.cross_attn_ln, xn_.data(), n, E, pool_);
  MatMul(L.cross_attn.query, xn_.data(), n, q_.data(), pool_);
  AddBias(q_.data(), L.cross_attn.query_bias, n, E);
  const int64_t cross_layer = int64_t{n_audio_} * E;
  a.k = cross_k_.data() + l * cross_layer;
  a.v = cross_v_.data() + l * cross_layer;
  a.capacity = n_audio_;
  a.causal = false;
  a.pos0 = 0;
  a.n_kv = n_audio_;
  MultiHeadAttention(a, pool_);
  MatMul(L.cross_attn.out, att_.data(), n, tmp_.data(), pool_);
  AddResidual(x_.data(), tmp_.data(), L.cross_attn.out_bias, n, E);

  MlpBlock(L.mlp_ln, L.mlp, x_.data(), xn_.data(), mlp_.data(), tmp_.data(), n, E, pool_);
}

}  // namespace hotline::engine
