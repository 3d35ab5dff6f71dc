#include "engine/whisper_ggml.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "common/build_paths.h"
#include "engine/whisper_mel.h"
#include "engine/whisper_tokenizer.h"

namespace hotline::engine {
namespace {

std::string AssetPath(const char* name) {
  return std::string(HOTLINE_SHARED_DATA_DIR) + "/asr/whisper/" + name;
}

#define REQUIRE_ASSET(path)                                                                    \
  if (!std::filesystem::exists(path)) {                                                        \
    GTEST_SKIP() << "missing " << path                                                         \
                 << " (whisper.cpp's for-tests-ggml-*.bin; the shared data sets live next to " \
                    "the checkout, in ../shared/data)";                                        \
  }

// A little-endian `.bin` image built by hand.
class BinBuilder {
 public:
  template <typename T>
  BinBuilder& Put(T v) {
    const size_t at = bytes.size();
    bytes.resize(at + sizeof(T));
    std::memcpy(bytes.data() + at, &v, sizeof(T));
    return *this;
  }
  BinBuilder& PutBytes(std::string_view s) {
    bytes.insert(bytes.end(), s.begin(), s.end());
    return *this;
  }
  std::vector<uint8_t> bytes;
};

// GPT-2's byte order: ids 0..255 of Whisper's vocabularies.
std::string ByteToken(int id) {
  std::vector<int> order;
  for (int b = 0; b < 256; ++b) {
    if ((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE) order.push_back(b);
  }
  for (int b = 0; b < 256; ++b) {
    if (!((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)) order.push_back(b);
  }
  return std::string(1, static_cast<char>(order[static_cast<size_t>(id)]));
}

constexpr int32_t kTinyHparams[11] = {51865, 1500, 384, 6, 4, 448, 384, 6, 4, 80, 1};

struct Regions {
  size_t tokens_end = 0;
  std::vector<size_t> tensor_ends;
};

// tiny's hparams, the computed filterbank, `n_tokens` short tokens, then the given tensors
// (name, type, dims) filled with a byte pattern.
struct TensorSpec {
  std::string name;
  GgmlType type;
  std::vector<int32_t> dims;
};
std::vector<uint8_t> SmallBin(int n_tokens, const std::vector<TensorSpec>& tensors,
                              Regions* regions = nullptr, const int32_t* hparams = kTinyHparams) {
  BinBuilder b;
  b.Put<uint32_t>(kWhisperGgmlMagic);
  for (int i = 0; i < 11; ++i) b.Put<int32_t>(hparams[i]);
  const WhisperMelFilters f = WhisperMelFilters::Compute(hparams[9] == 128 ? 128 : 80);
  b.Put<int32_t>(f.n_mels).Put<int32_t>(kWhisperFftBins);
  for (float w : f.weights) b.Put<float>(w);
  b.Put<int32_t>(n_tokens);
  for (int i = 0; i < n_tokens; ++i) {
    const std::string tok = i < 256 ? ByteToken(i) : "tok" + std::to_string(i);
    b.Put<uint32_t>(static_cast<uint32_t>(tok.size())).PutBytes(tok);
  }
  if (regions) regions->tokens_end = b.bytes.size();
  for (const TensorSpec& t : tensors) {
    b.Put<int32_t>(static_cast<int32_t>(t.dims.size()))
        .Put<int32_t>(static_cast<int32_t>(t.name.size()))
        .Put<int32_t>(static_cast<int32_t>(t.type));
    int64_t n = 1;
    for (int32_t d : t.dims) {
      b.Put<int32_t>(d);
      n *= d;
    }
    b.PutBytes(t.name);
    const int64_t bytes = RowBytes(t.type, t.dims[0]).value() * (n / t.dims[0]);
    for (int64_t i = 0; i < bytes; ++i) b.Put<uint8_t>(static_cast<uint8_t>(i * 7 + 3));
    if (regions) regions->tensor_ends.push_back(b.bytes.size());
  }
  return b.bytes;
}

std::vector<TensorSpec> SomeTensors() {
  // Real names and types; shapes shrunk to keep the file (and the every-byte cuts) small.
  return {{"encoder.conv1.bias", GgmlType::F32, {1, 384}},
          {"encoder.conv1.weight", GgmlType::F16, {3, 80, 4}},
          {"decoder.blocks.0.attn.query.weight", GgmlType::Q8_0, {64, 8}},
          {"decoder.blocks.0.mlp.0.weight", GgmlType::Q4_0, {64, 4}},
          {"decoder.ln.bias", GgmlType::F32, {384}}};
}

TEST(WhisperGgml, ReadsTheRealTinyFiles) {
  for (const char* name : {"for-tests-ggml-tiny.bin", "for-tests-ggml-tiny.en.bin"}) {
    const std::string path = AssetPath(name);
    REQUIRE_ASSET(path);
    auto f = WhisperGgmlFile::Open(path);
    ASSERT_TRUE(f.ok()) << f.status();
    const WhisperHparams& hp = (*f)->hparams();
    const bool en = std::string(name).find(".en.") != std::string::npos;
    EXPECT_EQ(hp.n_vocab, en ? 51864 : 51865);
    EXPECT_EQ(hp.n_audio_ctx, 1500);
    EXPECT_EQ(hp.n_audio_state, 384);
    EXPECT_EQ(hp.n_audio_head, 6);
    EXPECT_EQ(hp.n_audio_layer, 4);
    EXPECT_EQ(hp.n_text_ctx, 448);
    EXPECT_EQ(hp.n_text_state, 384);
    EXPECT_EQ(hp.n_text_head, 6);
    EXPECT_EQ(hp.n_text_layer, 4);
    EXPECT_EQ(hp.n_mels, 80);
    EXPECT_EQ((*f)->ftype(), 1);
    EXPECT_EQ((*f)->n_fft_bins(), 201);
    EXPECT_EQ((*f)->mel_filters().size(), 80u * 201u);
    EXPECT_EQ((*f)->tokens().size(), 50257u);
    EXPECT_EQ((*f)->tokens()[0], "!");
    EXPECT_TRUE((*f)->tensors().empty());  // the for-tests files carry no weights
    if (en) {
      EXPECT_EQ((*f)->tokens()[50256], "<|endoftext|>");
    }
  }
}

TEST(WhisperGgml, ConvertsTheRealTinyFilesToGguf) {
  for (const char* name : {"for-tests-ggml-tiny.bin", "for-tests-ggml-tiny.en.bin"}) {
    const std::string path = AssetPath(name);
    REQUIRE_ASSET(path);
    auto in = WhisperGgmlFile::Open(path);
    ASSERT_TRUE(in.ok()) << in.status();
    GgufWriter w;
    WhisperGgmlImportSummary sum;
    ASSERT_TRUE(WhisperGgmlToGguf(**in, &w, &sum).ok());
    const bool en = std::string(name).find(".en.") != std::string::npos;
    EXPECT_EQ(sum.multilingual, !en);
    EXPECT_EQ(sum.n_text_tokens, en ? 50256 : 50257);
    EXPECT_EQ(sum.n_tensors, 0);
    // These files stored the 128 non-UTF-8 single-byte tokens (and more) as U+FFFD.
    EXPECT_EQ(sum.restored_byte_tokens, 128);
    EXPECT_GT(sum.lossy_tokens, 0);
    EXPECT_EQ(sum.missing_tensors.size(), WhisperTensorNames((*in)->hparams()).size());
    auto buf = w.WriteBuffer();
    ASSERT_TRUE(buf.ok()) << buf.status();
    auto g = GgufFile::FromBuffer(*buf, name);
    ASSERT_TRUE(g.ok()) << g.status();
    auto hp = ReadWhisperHparams(**g);
    ASSERT_TRUE(hp.ok()) << hp.status();
    EXPECT_EQ(hp->n_vocab, (*in)->hparams().n_vocab);
    EXPECT_EQ(hp->n_text_layer, 4);
    EXPECT_EQ((*g)->GetString("tokenizer.ggml.model").value(), "whisper");
    auto toks = (*g)->GetStringArray("tokenizer.ggml.tokens");
    ASSERT_TRUE(toks.ok());
    EXPECT_EQ(toks->size(), static_cast<size_t>(sum.n_text_tokens));
    EXPECT_EQ((*toks)[220], "\xC4\xA0");  // byte-to-unicode: " " is U+0120 ("Ġ")
    const GgufTensorInfo* mel = (*g)->FindTensor("mel_filters");
    ASSERT_NE(mel, nullptr);
    EXPECT_EQ(mel->type, GgmlType::F32);
    EXPECT_EQ(mel->n_dims, 2);
    EXPECT_EQ(mel->ne[0], 201);
    EXPECT_EQ(mel->ne[1], 80);
    EXPECT_EQ(std::memcmp(mel->data, (*in)->mel_filters().data(), 80 * 201 * 4), 0);

    // The tokenizer reads the same vocabulary back from either form.
    auto from_gguf = WhisperTokenizer::FromGguf(**g);
    ASSERT_TRUE(from_gguf.ok()) << from_gguf.status();
    auto vocab = WhisperGgmlTextTokens(**in);
    ASSERT_TRUE(vocab.ok()) << vocab.status();
    auto from_bin = WhisperTokenizer::Create(vocab->tokens, (*in)->hparams().n_vocab);
    ASSERT_TRUE(from_bin.ok()) << from_bin.status();
    for (TokenId id : {0, 220, 1000, 30000, 50255}) {
      EXPECT_EQ((*from_gguf)->TokenBytes(id), (*from_bin)->TokenBytes(id)) << id;
    }
    auto filters = WhisperMelFilters::FromGguf(**g);
    ASSERT_TRUE(filters.ok()) << filters.status();
    EXPECT_EQ(filters->weights, (*in)->mel_filters());
  }
}

TEST(WhisperGgml, ConvertWritesAFile) {
  const std::string path = AssetPath("for-tests-ggml-tiny.en.bin");
  REQUIRE_ASSET(path);
  const std::string out = std::string(HOTLINE_BINARY_DIR) + "/whisper_ggml_test_" +
                          std::to_string(::getpid()) + ".gguf";
  WhisperGgmlImportSummary sum;
  ASSERT_TRUE(ConvertWhisperGgml(path, out, &sum).ok());
  auto g = GgufFile::Open(out);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(ReadWhisperHparams(**g).value().n_vocab, 51864);
  std::filesystem::remove(out);
  EXPECT_EQ(ConvertWhisperGgml(path + ".missing", out).code(), StatusCode::kNotFound);
}

TEST(WhisperGgml, TensorsKeepBytesAndConvBiasesLoseTheirUnitDim) {
  const std::vector<TensorSpec> specs = SomeTensors();
  const std::vector<uint8_t> bin = SmallBin(50257, specs);
  auto in = WhisperGgmlFile::FromBuffer(bin, "small.bin");
  ASSERT_TRUE(in.ok()) << in.status();
  ASSERT_EQ((*in)->tensors().size(), specs.size());
  EXPECT_EQ((*in)->tensors()[0].ne[0], 1);
  EXPECT_EQ((*in)->tensors()[0].ne[1], 384);
  GgufWriter w;
  WhisperGgmlImportSummary sum;
  ASSERT_TRUE(WhisperGgmlToGguf(**in, &w, &sum).ok());
  EXPECT_EQ(sum.n_tensors, 5);
  EXPECT_TRUE(sum.extra_tensors.empty());
  auto buf = w.WriteBuffer();
  ASSERT_TRUE(buf.ok());
  auto g = GgufFile::FromBuffer(*buf);
  ASSERT_TRUE(g.ok()) << g.status();
  const GgufTensorInfo* bias = (*g)->FindTensor("encoder.conv1.bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_EQ(bias->n_dims, 1);
  EXPECT_EQ(bias->ne[0], 384);
  for (const WhisperGgmlTensor& t : (*in)->tensors()) {
    const GgufTensorInfo* o = (*g)->FindTensor(t.name);
    ASSERT_NE(o, nullptr) << t.name;
    EXPECT_EQ(o->type, t.type) << t.name;
    EXPECT_EQ(o->num_elements(), t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]) << t.name;
    ASSERT_EQ(o->size_bytes, t.data.size()) << t.name;
    EXPECT_EQ(std::memcmp(o->data, t.data.data(), t.data.size()), 0) << t.name;
    if (t.name != "encoder.conv1.bias") {
      EXPECT_EQ(o->n_dims, t.n_dims) << t.name;
      for (int d = 0; d < 4; ++d) EXPECT_EQ(o->ne[d], t.ne[d]) << t.name;
    }
  }
}

// Every cut of the file must either parse (exactly at a tensor boundary) or be refused with a
// message; never crash or read past the end.
TEST(WhisperGgml, TruncationAnywhereIsRefused) {
  Regions r;
  const std::vector<uint8_t> bin = SmallBin(300, SomeTensors(), &r);
  const size_t filters_begin = 4 + 44 + 8;
  const size_t filters_end = filters_begin + 80 * 201 * 4;
  int refused = 0;
  for (size_t cut = 0; cut < bin.size(); ++cut) {
    // Inside the filterbank and the tensor data every byte is alike; sample them.
    const bool in_filters = cut > filters_begin + 8 && cut + 8 < filters_end;
    if (in_filters && cut % 997 != 0) continue;
    auto f = WhisperGgmlFile::FromBuffer(std::span(bin.data(), cut), "cut.bin");
    const bool boundary =
        cut == r.tokens_end ||
        std::find(r.tensor_ends.begin(), r.tensor_ends.end(), cut) != r.tensor_ends.end();
    if (boundary) {
      EXPECT_TRUE(f.ok()) << "cut at " << cut << ": " << f.status();
    } else {
      ASSERT_FALSE(f.ok()) << "cut at " << cut << " was accepted";
      EXPECT_FALSE(f.status().message().empty());
      ++refused;
    }
  }
  EXPECT_GT(refused, 1000);
  auto whole = WhisperGgmlFile::FromBuffer(bin);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ((*whole)->tensors().size(), 5u);
}

void Patch(std::vector<uint8_t>& bin, size_t at, int32_t v) { std::memcpy(&bin[at], &v, 4); }

std::string ErrorOf(const std::vector<uint8_t>& bin) {
  auto f = WhisperGgmlFile::FromBuffer(bin, "bad.bin");
  return f.ok() ? std::string("accepted") : std::string(f.status().message());
}

TEST(WhisperGgml, CorruptValuesAreRefusedWithAMessage) {
  Regions r;
  const std::vector<uint8_t> good = SmallBin(300, SomeTensors(), &r);
  const size_t tokens_at = 4 + 44 + 8 + 80 * 201 * 4;  // the token count
  const size_t tensor0 = r.tokens_end;
  {
    auto b = good;
    Patch(b, 0, 0x46554747);
    EXPECT_NE(ErrorOf(b).find("not a whisper.cpp ggml model"), std::string::npos) << ErrorOf(b);
  }
  {
    auto b = good;
    Patch(b, 4, -5);  // n_vocab
    EXPECT_NE(ErrorOf(b).find("vocab_size"), std::string::npos) << ErrorOf(b);
  }
  {
    auto b = good;
    Patch(b, 4 + 9 * 4, 81);  // n_mels
    EXPECT_NE(ErrorOf(b).find("n_mels"), std::string::npos) << ErrorOf(b);
  }
  {
    auto b = good;
    Patch(b, 4 + 2 * 4, 385);  // n_audio_state not divisible by 6 heads
    EXPECT_NE(ErrorOf(b).find("heads"), std::string::npos) << ErrorOf(b);
  }
  {
    auto b = good;
    Patch(b, 4, 60000);  // a vocabulary size with no room for Whisper's specials layout
    EXPECT_NE(ErrorOf(b).find("special-token layout"), std::string::npos) << ErrorOf(b);
  }
  {
    auto b = good;
    Patch(b, 48, 128);  // filterbank n_mel disagrees with hparams
    EXPECT_NE(ErrorOf(b).find("mel bands"), std::string::npos) << ErrorOf(b);
  }
  {
    auto b = good;
    Patch(b, 52, 2147483647);  // n_fft
    EXPECT_NE(ErrorOf(b).find("n_fft"), std::string::npos) << ErrorOf(b);
  }
  {
    auto b = good;
    float nan = std::nanf("");
    std::memcpy(&b[56], &nan, 4);
    EXPECT_NE(ErrorOf(b).find("filterbank weight 0"), std::string::npos) << ErrorOf(b);
  }
  {
    auto b = good;
    Patch(b, tokens_at, 2147483647);
    EXPECT_NE(ErrorOf(b).find("token count 2147483647"), std::string::npos) << ErrorOf(b);
  }
  {
    auto b = good;
    Patch(b, tokens_at, -1);
    EXPECT_NE(ErrorOf(b).find("token count -1"), std::string::npos) << ErrorOf(b);
  }
  {
    // Token 123's length (tokens 0..255 are one byte each, so it sits at a known place).
    auto b = good;
    Patch(b, tokens_at + 4 + 123 * 5, 4000000);
    EXPECT_NE(ErrorOf(b).find("token 123: length 4000000"), std::string::npos) << ErrorOf(b);
    EXPECT_NE(ErrorOf(b).find("runs past the end of the file"), std::string::npos);
  }
  {
    auto b = good;
    Patch(b, tokens_at + 4, -1);  // 0xffffffff as u32
    EXPECT_NE(ErrorOf(b).find("token 0: length 4294967295"), std::string::npos) << ErrorOf(b);
  }
  {
    auto b = good;
    Patch(b, tensor0, 5);  // n_dims
    EXPECT_NE(ErrorOf(b).find("n_dims 5"), std::string::npos) << ErrorOf(b);
  }
  {
    auto b = good;
    Patch(b, tensor0 + 4, -1);  // name length
    EXPECT_NE(ErrorOf(b).find("name length -1"), std::string::npos) << ErrorOf(b);
  }
  {
    auto b = good;
    Patch(b, tensor0 + 4, 1 << 30);
    EXPECT_NE(ErrorOf(b).find("name length"), std::string::npos) << ErrorOf(b);
  }
  {
    auto b = good;
    Patch(b, tensor0 + 8, 99);  // type
    EXPECT_NE(ErrorOf(b).find("unknown ggml type 99"), std::string::npos) << ErrorOf(b);
  }
  {
    auto b = good;
    Patch(b, tensor0 + 12, 0);  // dim 0
    EXPECT_NE(ErrorOf(b).find("dim 0 is 0"), std::string::npos) << ErrorOf(b);
  }
  {
    auto b = good;
    Patch(b, tensor0 + 12, 2147483647);  // huge dims
    Patch(b, tensor0 + 16, 2147483647);
    EXPECT_NE(ErrorOf(b).find("runs past the end of the file"), std::string::npos) << ErrorOf(b);
  }
  {
    // Q8_0 rows must be whole blocks of 32.
    auto b = good;
    const size_t t2 = r.tensor_ends[1];
    Patch(b, t2 + 12, 63);
    EXPECT_NE(ErrorOf(b).find("decoder.blocks.0.attn.query.weight"), std::string::npos)
        << ErrorOf(b);
  }
  {
    std::vector<TensorSpec> dup = SomeTensors();
    dup.push_back(dup.back());
    EXPECT_NE(ErrorOf(SmallBin(300, dup)).find("duplicate tensor name"), std::string::npos);
  }
  {
    // A lossy single-byte token is restored; a wrong one is refused.
    std::vector<uint8_t> b = SmallBin(50257, {});
    auto f = WhisperGgmlFile::FromBuffer(b);
    ASSERT_TRUE(f.ok());
    const size_t at = tokens_at + 4 + 100 * 5;  // token 100: a single byte
    b.erase(b.begin() + static_cast<std::ptrdiff_t>(at),
            b.begin() + static_cast<std::ptrdiff_t>(at) + 5);
    const char kFffd[] = "\x03\x00\x00\x00\xEF\xBF\xBD";
    b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), kFffd, kFffd + 7);
    auto lossy = WhisperGgmlFile::FromBuffer(b);
    ASSERT_TRUE(lossy.ok()) << lossy.status();
    auto v = WhisperGgmlTextTokens(**lossy);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(v->restored_byte_tokens, 1);
    EXPECT_EQ(v->tokens[100], ByteToken(100));
    b[at + 4] = 'x';
    b[at + 5] = 'y';
    b[at + 6] = 'z';
    auto wrong = WhisperGgmlFile::FromBuffer(b);
    ASSERT_TRUE(wrong.ok());
    EXPECT_NE(WhisperGgmlTextTokens(**wrong).status().message().find("token 100 should be"),
              std::string::npos);
  }
  // A vocabulary too short for the model's text tokens reads, but does not convert.
  auto in = WhisperGgmlFile::FromBuffer(good);
  ASSERT_TRUE(in.ok());
  GgufWriter w;
  const Status s = WhisperGgmlToGguf(**in, &w);
  EXPECT_NE(s.message().find("needs the 50257 text tokens"), std::string::npos) << s;
}

TEST(WhisperGgml, RandomCorruptionNeverCrashes) {
  const std::vector<uint8_t> good = SmallBin(300, SomeTensors());
  const size_t filters_begin = 4 + 44 + 8;
  const size_t filters_end = filters_begin + 80 * 201 * 4;
  std::mt19937 rng(1234);
  int refused = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::vector<uint8_t> b = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      // Mostly outside the filterbank, whose floats are only range-checked.
      size_t at = rng() % b.size();
      if (at >= filters_begin && at < filters_end && rng() % 8 != 0) at = rng() % filters_begin;
      b[at] = static_cast<uint8_t>(rng());
    }
    if (rng() % 3 == 0) b.resize(rng() % b.size());
    auto f = WhisperGgmlFile::FromBuffer(b, "fuzz.bin");
    if (!f.ok()) {
      ++refused;
      EXPECT_FALSE(f.status().message().empty());
    }
  }
  EXPECT_GT(refused, 100);
}

}  // namespace
}  // namespace hotline::engine
