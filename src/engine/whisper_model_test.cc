#include "engine/whisper_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "engine/compute_pool.h"
#include "engine/whisper_forward.h"
#include "engine/whisper_ops.h"
#include "engine/whisper_test_util.h"

namespace hotline::engine {
namespace {

using testing::MakeRandomWhisper;
using testing::RandomMel;
using testing::RandomWhisperSpec;
using testing::SmallWhisperHparams;
using testing::WhisperReference;

// max |a - b| relative to max |ref|.
double RelErr(std::span<const float> a, std::span<const double> ref) {
  EXPECT_EQ(a.size(), ref.size());
  double diff = 0, mag = 1e-30;
  for (size_t i = 0; i < std::min(a.size(), ref.size()); ++i) {
    diff = std::max(diff, std::abs(double(a[i]) - ref[i]));
    mag = std::max(mag, std::abs(ref[i]));
  }
  return diff / mag;
}

std::vector<int32_t> Tokens(int n, int n_vocab, int seed) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[size_t(i)] = (seed * 7919 + i * 104729) % n_vocab;
  return t;
}

std::unique_ptr<WhisperModel> LoadRandom(const RandomWhisperSpec& spec) {
  auto file = MakeRandomWhisper(spec);
  EXPECT_TRUE(file.ok()) << file.status();
  if (!file.ok()) return nullptr;
  auto model = WhisperModel::Load(*file);
  EXPECT_TRUE(model.ok()) << model.status();
  return model.ok() ? std::move(*model) : nullptr;
}

struct Parity {
  double encoder = 0;
  double logits = 0;
};

// Encodes random mel and decodes `n_tokens` tokens in one call; compares both with the
// double-precision reference.
Parity CheckParity(const WhisperModel& model, int n_frames, int n_tokens, ComputePool& pool) {
  const WhisperHparams& hp = model.hparams();
  const std::vector<float> mel = RandomMel(n_frames, hp.n_mels, 11);
  WhisperEncoder enc(model, pool);
  std::vector<float> audio;
  Status s = enc.Encode(mel, n_frames, &audio);
  EXPECT_TRUE(s.ok()) << s;
  WhisperReference ref(model.file());
  const std::vector<double> ref_audio = ref.Encode(mel, n_frames);
  Parity p;
  p.encoder = RelErr(audio, ref_audio);

  const int n_pos = n_frames / 2;
  const std::vector<int32_t> tokens = Tokens(n_tokens, hp.n_vocab, 3);
  WhisperDecoder dec(model, pool);
  EXPECT_TRUE(dec.SetAudio(audio, n_pos).ok());
  std::vector<float> logits;
  s = dec.Decode(tokens, &logits, WhisperLogits::kAll);
  EXPECT_TRUE(s.ok()) << s;
  // The reference decodes from its own encoder output, so the comparison covers both halves.
  p.logits = RelErr(logits, ref.Decode(ref_audio, n_pos, tokens));
  return p;
}

TEST(WhisperOps, GeluMatchesErfForm) {
  ComputePool pool(2);
  const int n = 40001;  // -20 .. 20 in steps of 1e-3, plus odd chunk tails
  std::vector<float> x(size_t{n}), bias(size_t{n}, 0.0f);
  for (int i = 0; i < n; ++i) x[size_t(i)] = -20.0f + 1e-3f * static_cast<float>(i);
  const std::vector<float> in = x;
  whisper::AddBiasGelu(x.data(), bias, 1, n, pool);
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    const double want = WhisperReference::Gelu(in[size_t(i)]);
    worst = std::max(worst, std::abs(x[size_t(i)] - want) / std::max(1.0, std::abs(want)));
  }
  EXPECT_LE(worst, 1e-6);
  EXPECT_LT(std::abs(x[0]), 1e-30f);  // gelu(-20) ~ -3e-88: (nearly) zero, not NaN
}

// ---- every size's layout (reduced depth and contexts, real widths and heads) -------------------

struct Layout {
  const char* name;
  int state;
  int heads;
  int n_mels;
};

class WhisperLayoutTest : public ::testing::TestWithParam<Layout> {};

TEST_P(WhisperLayoutTest, MatchesDoubleReference) {
  const Layout& l = GetParam();
  RandomWhisperSpec spec;
  spec.hp = SmallWhisperHparams(l.state, l.heads, l.n_mels);
  auto model = LoadRandom(spec);
  ASSERT_NE(model, nullptr);
  ComputePool pool(2);
  const Parity p = CheckParity(*model, /*n_frames=*/20, /*n_tokens=*/5, pool);
  EXPECT_LE(p.encoder, 1e-4) << l.name;
  EXPECT_LE(p.logits, 1e-4) << l.name;
  std::printf("%s: encoder rel err %.2e, logits rel err %.2e\n", l.name, p.encoder, p.logits);
}

INSTANTIATE_TEST_SUITE_P(Sizes, WhisperLayoutTest,
                         ::testing::Values(Layout{"tiny", 384, 6, 80}, Layout{"base", 512, 8, 80},
                                           Layout{"small", 768, 12, 80},
                                           Layout{"medium", 1024, 16, 80},
                                           Layout{"large", 1280, 20, 128}),
                         [](const auto& info) { return std::string(info.param.name); });

// The whole tiny layout: 4 + 4 layers, 30 s contexts, one second of audio.
TEST(WhisperModel, FullTinyLayoutOneSecond) {
  RandomWhisperSpec spec;
  spec.hp = SmallWhisperHparams(384, 6, 80, 4);
  spec.hp.n_audio_ctx = 1500;
  spec.hp.n_text_ctx = 448;
  spec.hp.n_vocab = 1000;  // not a multiple of 16: the packed rows' remainder is exercised
  spec.mel_filters = true;
  auto model = LoadRandom(spec);
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->mel_filters().size(), size_t{80} * 201);
  ComputePool pool(2);
  const Parity p = CheckParity(*model, /*n_frames=*/100, /*n_tokens=*/6, pool);
  EXPECT_LE(p.encoder, 1e-4);
  EXPECT_LE(p.logits, 1e-4);
  std::printf("tiny 4+4: encoder rel err %.2e, logits rel err %.2e\n", p.encoder, p.logits);
}

// The format allows an encoder wider than the decoder (cross-attention keys/values read the
// encoder's width); no released model does it, but the shapes must then still line up.
TEST(WhisperModel, EncoderWiderThanDecoder) {
  RandomWhisperSpec spec;
  spec.hp = SmallWhisperHparams(64, 2, 80, 1);
  spec.hp.n_audio_state = 128;
  spec.hp.n_audio_head = 4;
  auto model = LoadRandom(spec);
  ASSERT_NE(model, nullptr);
  ComputePool pool(2);
  const Parity p = CheckParity(*model, 12, 4, pool);
  EXPECT_LE(p.encoder, 1e-4);
  EXPECT_LE(p.logits, 1e-4);
}

// ---- stored weight types ------------------------------------------------------------------------

// The reference multiplies the same dequantized weights, so what remains is the engine's
// activation rounding: none for F16 (float activations), 8-bit activation blocks for Q8_0/Q4_0
// (relative error ~0.4% per product, compounding over the layers): 2e-2 of the largest value.
struct TypeCase {
  GgmlType type;
  double tolerance;
};

class WhisperTypeTest : public ::testing::TestWithParam<TypeCase> {};

TEST_P(WhisperTypeTest, MatchesDoubleReference) {
  const TypeCase& c = GetParam();
  RandomWhisperSpec spec;
  spec.hp = SmallWhisperHparams(384, 6, 80, 2);
  spec.type = c.type;
  auto model = LoadRandom(spec);
  ASSERT_NE(model, nullptr);
  ComputePool pool(2);
  const Parity p = CheckParity(*model, 24, 6, pool);
  EXPECT_LE(p.encoder, c.tolerance) << TypeName(c.type);
  EXPECT_LE(p.logits, c.tolerance) << TypeName(c.type);
  std::printf("%s: encoder rel err %.2e, logits rel err %.2e\n", TypeName(c.type), p.encoder,
              p.logits);
}

INSTANTIATE_TEST_SUITE_P(Types, WhisperTypeTest,
                         ::testing::Values(TypeCase{GgmlType::F32, 1e-4},
                                           TypeCase{GgmlType::F16, 1e-4},
                                           TypeCase{GgmlType::Q8_0, 2e-2},
                                           TypeCase{GgmlType::Q5_0, 2e-2},
                                           TypeCase{GgmlType::Q4_0, 2e-2}),
                         [](const auto& info) { return std::string(TypeName(info.param.type)); });

// Every kernel path this CPU has (packed weights are built at load for the path then active and
// ignored by the others): same parity.
TEST(WhisperModel, EveryKernelPathMatchesReference) {
  const KernelIsa saved = ActiveKernelIsa();
  for (KernelIsa isa :
       {KernelIsa::kScalar, KernelIsa::kAvx2, KernelIsa::kAvxVnni, KernelIsa::kAvx512}) {
    if (!SetKernelIsa(isa).ok()) continue;
    for (GgmlType type : {GgmlType::F16, GgmlType::Q8_0, GgmlType::Q4_0}) {
      RandomWhisperSpec spec;
      spec.hp = SmallWhisperHparams(128, 2, 80, 1);
      spec.type = type;
      auto model = LoadRandom(spec);
      ASSERT_NE(model, nullptr);
      ComputePool pool(2);
      const Parity p = CheckParity(*model, 16, 4, pool);
      const double tol = type == GgmlType::F16 ? 1e-4 : 2e-2;
      EXPECT_LE(p.encoder, tol) << KernelIsaName(isa) << " " << TypeName(type);
      EXPECT_LE(p.logits, tol) << KernelIsaName(isa) << " " << TypeName(type);
    }
  }
  ASSERT_TRUE(SetKernelIsa(saved).ok());
}

// ---- decoder caches -----------------------------------------------------------------------------

class WhisperDecoderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RandomWhisperSpec spec;
    spec.hp = SmallWhisperHparams(64, 2, 80, 2);
    spec.hp.n_text_ctx = 12;
    model_ = LoadRandom(spec);
    ASSERT_NE(model_, nullptr);
    WhisperEncoder enc(*model_, pool_);
    ASSERT_TRUE(enc.Encode(RandomMel(20, 80, 1), 20, &audio_a_).ok());
    ASSERT_TRUE(enc.Encode(RandomMel(14, 80, 2), 14, &audio_b_).ok());
  }

  std::vector<float> DecodeAll(WhisperDecoder& dec, std::span<const int32_t> tokens) {
    std::vector<float> logits;
    Status s = dec.Decode(tokens, &logits, WhisperLogits::kAll);
    EXPECT_TRUE(s.ok()) << s;
    return logits;
  }

  ComputePool pool_{2};
  std::unique_ptr<WhisperModel> model_;
  std::vector<float> audio_a_, audio_b_;
};

TEST_F(WhisperDecoderTest, IncrementalEqualsOneShot) {
  const int V = model_->hparams().n_vocab;
  const std::vector<int32_t> tokens = Tokens(9, V, 5);
  WhisperDecoder dec(*model_, pool_);
  ASSERT_TRUE(dec.SetAudio(audio_a_, 10).ok());
  const std::vector<float> all = DecodeAll(dec, tokens);
  ASSERT_EQ(all.size(), tokens.size() * size_t(V));

  // Token by token.
  dec.Reset();
  std::vector<float> last;
  for (size_t i = 0; i < tokens.size(); ++i) {
    ASSERT_TRUE(dec.Decode(std::span(tokens).subspan(i, 1), &last).ok());
    ASSERT_EQ(last.size(), size_t(V));
    EXPECT_LE(RelErr(last, std::vector<double>(all.begin() + i * V, all.begin() + (i + 1) * V)),
              1e-5)
        << "token " << i;
  }
  EXPECT_EQ(dec.n_past(), 9);

  // Uneven chunks: 4, 1, 4.
  dec.Reset();
  size_t at = 0;
  for (size_t n : {4, 1, 4}) {
    ASSERT_TRUE(dec.Decode(std::span(tokens).subspan(at, n), &last).ok());
    at += n;
    EXPECT_LE(RelErr(last, std::vector<double>(all.begin() + (at - 1) * V, all.begin() + at * V)),
              1e-5);
  }
}

TEST_F(WhisperDecoderTest, CrossCacheSurvivesResetAndIsReplacedBySetAudio) {
  const std::vector<int32_t> tokens = Tokens(5, model_->hparams().n_vocab, 9);
  WhisperDecoder dec(*model_, pool_);
  ASSERT_TRUE(dec.SetAudio(audio_a_, 10).ok());
  const std::vector<float> a1 = DecodeAll(dec, tokens);
  dec.Reset();
  EXPECT_TRUE(dec.has_audio());
  EXPECT_EQ(dec.n_past(), 0);
  const std::vector<float> a2 = DecodeAll(dec, tokens);
  EXPECT_EQ(a1, a2);

  // Shorter audio into the same buffers, then back.
  ASSERT_TRUE(dec.SetAudio(audio_b_, 7).ok());
  EXPECT_EQ(dec.n_past(), 0);
  const std::vector<float> b = DecodeAll(dec, tokens);
  WhisperReference ref(model_->file());
  const std::vector<double> ref_b =
      ref.Decode(std::vector<double>(audio_b_.begin(), audio_b_.end()), 7, tokens);
  EXPECT_LE(RelErr(b, ref_b), 1e-4);
  EXPECT_GT(RelErr(b, std::vector<double>(a1.begin(), a1.end())), 1e-3);  // audio matters
  ASSERT_TRUE(dec.SetAudio(audio_a_, 10).ok());
  EXPECT_EQ(DecodeAll(dec, tokens), a1);
}

TEST_F(WhisperDecoderTest, BadCallsAreErrors) {
  const int V = model_->hparams().n_vocab;
  WhisperDecoder dec(*model_, pool_);
  std::vector<float> logits;
  const int32_t one[] = {1};
  EXPECT_EQ(dec.Decode(one, &logits).code(), StatusCode::kFailedPrecondition);
  EXPECT_FALSE(dec.SetAudio(audio_a_, 9).ok());   // size mismatch
  EXPECT_FALSE(dec.SetAudio(audio_a_, 13).ok());  // beyond n_audio_ctx (12)
  EXPECT_FALSE(dec.has_audio());
  ASSERT_TRUE(dec.SetAudio(audio_a_, 10).ok());
  EXPECT_EQ(dec.Decode({}, &logits).code(), StatusCode::kInvalidArgument);
  const int32_t bad[] = {1, V};
  EXPECT_EQ(dec.Decode(bad, &logits).code(), StatusCode::kInvalidArgument);
  const int32_t neg[] = {-1};
  EXPECT_EQ(dec.Decode(neg, &logits).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(dec.n_past(), 0);
  const std::vector<int32_t> ten = Tokens(10, V, 1);
  ASSERT_TRUE(dec.Decode(ten, &logits).ok());
  const std::vector<int32_t> three = Tokens(3, V, 2);
  Status s = dec.Decode(three, &logits);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s;
  EXPECT_NE(s.message().find("12"), std::string::npos) << s;
  EXPECT_EQ(dec.n_past(), 10);
  EXPECT_TRUE(dec.Decode(std::span(three).first(2), &logits).ok());  // exactly full
  EXPECT_FALSE(dec.Decode(one, &logits).ok());

  WhisperDecoder small(*model_, pool_, /*max_tokens=*/4);
  EXPECT_EQ(small.max_tokens(), 4);
  ASSERT_TRUE(small.SetAudio(audio_a_, 10).ok());
  EXPECT_EQ(small.Decode(std::span(ten).first(5), &logits).code(), StatusCode::kOutOfRange);

  WhisperEncoder enc(*model_, pool_);
  std::vector<float> out;
  EXPECT_FALSE(enc.Encode(RandomMel(19, 80, 1), 19, &out).ok());  // odd
  EXPECT_FALSE(enc.Encode(RandomMel(26, 80, 1), 26, &out).ok());  // > 2 * n_audio_ctx
  EXPECT_FALSE(enc.Encode(RandomMel(20, 80, 1), 18, &out).ok());  // size mismatch
  EXPECT_FALSE(enc.Encode({}, 0, &out).ok());
  EXPECT_TRUE(enc.Encode(RandomMel(24, 80, 1), 24, &out).ok());  // the full context
  EXPECT_EQ(out.size(), size_t{12} * 64);
}

// ---- load errors --------------------------------------------------------------------------------

Status LoadStatus(const RandomWhisperSpec& spec) {
  auto file = MakeRandomWhisper(spec);
  if (!file.ok()) return file.status();
  return WhisperModel::Load(*file).status();
}

RandomWhisperSpec TinySpec() {
  RandomWhisperSpec spec;
  spec.hp = SmallWhisperHparams(64, 2, 80, 2);
  return spec;
}

void ExpectErrorMentions(const Status& s, const std::string& what) {
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(what), std::string::npos) << s;
}

TEST(WhisperModelLoad, MissingTensor) {
  RandomWhisperSpec spec = TinySpec();
  spec.omit = "decoder.blocks.1.cross_attn.value.bias";
  ExpectErrorMentions(LoadStatus(spec), "'decoder.blocks.1.cross_attn.value.bias' is missing");
}

TEST(WhisperModelLoad, WrongShape) {
  RandomWhisperSpec spec = TinySpec();
  spec.reshape["encoder.blocks.0.mlp.0.weight"] = {64, 255};
  const Status s = LoadStatus(spec);
  ExpectErrorMentions(s, "'encoder.blocks.0.mlp.0.weight' has shape [64, 255], expected [64, 256]");

  spec.reshape.clear();
  spec.reshape["encoder.conv1.weight"] = {80, 3, 64};  // PyTorch order instead of ggml order
  ExpectErrorMentions(LoadStatus(spec), "'encoder.conv1.weight' has shape [80, 3, 64]");
}

TEST(WhisperModelLoad, UnknownTensor) {
  RandomWhisperSpec spec = TinySpec();
  spec.extra = {"decoder.blocks.2.attn.query.weight"};  // a third layer the hparams do not have
  ExpectErrorMentions(LoadStatus(spec), "'decoder.blocks.2.attn.query.weight' is not part");
  spec.extra = {"encoder.something_else"};
  ExpectErrorMentions(LoadStatus(spec), "'encoder.something_else'");
}

TEST(WhisperModelLoad, BadHparams) {
  RandomWhisperSpec spec = TinySpec();
  spec.edit = [](GgufWriter& w) { w.SetU32("whisper.audio.head_count", 3); };
  ExpectErrorMentions(LoadStatus(spec), "heads");
  spec.edit = [](GgufWriter& w) { w.Remove("whisper.text.block_count"); };
  ExpectErrorMentions(LoadStatus(spec), "whisper.text.block_count");
  spec.edit = [](GgufWriter& w) { w.SetString("general.architecture", "llama"); };
  ExpectErrorMentions(LoadStatus(spec), "whisper");
}

TEST(WhisperModelLoad, QuantizedVectorIsRefused) {
  RandomWhisperSpec spec = TinySpec();
  spec.retype["encoder.ln_post.weight"] = GgmlType::Q8_0;
  ExpectErrorMentions(LoadStatus(spec), "'encoder.ln_post.weight' has type q8_0");
}

TEST(WhisperModelLoad, ConvBiasInEitherLayout) {
  RandomWhisperSpec spec = TinySpec();
  auto a = LoadRandom(spec);
  spec.reshape["encoder.conv1.bias"] = {64};  // PyTorch layout; same values
  spec.reshape["encoder.conv2.bias"] = {64};
  auto b = LoadRandom(spec);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->conv1().bias, b->conv1().bias);
  EXPECT_EQ(a->conv2().bias, b->conv2().bias);
  EXPECT_TRUE(a->mel_filters().empty());
}

TEST(WhisperModelLoad, MissingFile) {
  auto m = WhisperModel::Load("/nonexistent/whisper.gguf");
  EXPECT_FALSE(m.ok());
}

}  // namespace
}  // namespace hotline::engine
