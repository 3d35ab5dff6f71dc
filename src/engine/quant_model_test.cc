#include "engine/quant_model.h"

#include <unistd.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/build_paths.h"
#include "engine/engine.h"
#include "engine/gguf.h"

namespace hotline::engine {
namespace {

std::string TempPath(const std::string& name) {
  return std::string(HOTLINE_BINARY_DIR) + "/quant_model_test_" + std::to_string(::getpid()) + "_" + name + ".gguf";
}

std::vector<char> ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// Logits after feeding a fixed prompt to the model at `path`.
std::vector<float> Logits(const std::string& path) {
  EngineConfig config;
  config.model_path = path;
  config.threads = 2;
  config.max_seq_len = 64;
  auto engine = Engine::Load(config);
  EXPECT_TRUE(engine.ok()) << engine.status();
  if (!engine.ok()) return {};
  auto seq = (*engine)->CreateSequence();
  EXPECT_TRUE(seq.ok());
  const std::vector<int32_t> prompt = {5, 300, 17, 42, 256, 7, 99, 1000};
  auto logits = (*engine)->Feed(*seq, prompt);
  EXPECT_TRUE(logits.ok()) << logits.status();
  if (!logits.ok()) return {};
  return {logits->begin(), logits->end()};
}

double Cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += static_cast<double>(a[i]) * b[i];
    aa += static_cast<double>(a[i]) * a[i];
    bb += static_cast<double>(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

TEST(RandomModel, TinyModelLoadsAndRunsForBothFamilies) {
  ComputePool pool(2);
  for (const char* arch : {"llama", "qwen2"}) {
    RandomModelSpec spec;
    spec.arch = arch;
    spec.shape = "tiny";
    spec.type = GgmlType::Q8_0;
    const std::string path = TempPath(std::string("tiny_") + arch);
    auto info = WriteRandomModel(spec, path, pool);
    ASSERT_TRUE(info.ok()) << info.status();
    EXPECT_EQ(info->n_vocab, 1024);
    const std::vector<float> logits = Logits(path);
    ASSERT_EQ(logits.size(), 1024u);
    float spread = 0;
    for (float v : logits) {
      ASSERT_TRUE(std::isfinite(v));
      spread = std::max(spread, std::fabs(v - logits[0]));
    }
    EXPECT_GT(spread, 0.0f) << "logits should depend on the weights";
    std::remove(path.c_str());
  }
}

TEST(RandomModel, SameSeedSameFileWhateverTheThreads) {
  RandomModelSpec spec;
  spec.shape = "tiny";
  spec.type = GgmlType::Q4_0;
  spec.seed = 42;
  ComputePool one(1), three(3);
  const std::string a = TempPath("seed_a"), b = TempPath("seed_b"), c = TempPath("seed_c");
  ASSERT_TRUE(WriteRandomModel(spec, a, one).ok());
  ASSERT_TRUE(WriteRandomModel(spec, b, three).ok());
  spec.seed = 43;
  ASSERT_TRUE(WriteRandomModel(spec, c, one).ok());
  EXPECT_EQ(ReadAll(a), ReadAll(b));
  EXPECT_NE(ReadAll(a), ReadAll(c));
  for (const auto& p : {a, b, c}) std::remove(p.c_str());
}

TEST(RandomModel, RejectsUnknownShapeArchAndType) {
  ComputePool pool(1);
  RandomModelSpec spec;
  spec.shape = "7b";
  EXPECT_FALSE(WriteRandomModel(spec, TempPath("bad"), pool).ok());
  spec.shape = "tiny";
  spec.arch = "gpt-j";
  EXPECT_FALSE(WriteRandomModel(spec, TempPath("bad"), pool).ok());
  spec.arch = "llama";
  spec.type = GgmlType::Q3_K;
  EXPECT_FALSE(WriteRandomModel(spec, TempPath("bad"), pool).ok());
}

// Quantizing an F32 model keeps 1-D tensors, converts matrices, and the quantized model's logits
// stay close to the F32 model's. Thresholds: the logits' cosine similarity with F32 is 0.9998
// for Q8_0 and 0.978 (Q4_0) / 0.983 (Q4_K) on this random tiny model (weights uniform, so the
// 4-bit error is ~8 % RMS per matrix); we require 0.999 and 0.95.
TEST(Quantize, F32ModelToEachTargetStaysCloseToF32) {
  ComputePool pool(2);
  RandomModelSpec spec;
  spec.shape = "tiny";
  spec.arch = "qwen2";
  spec.type = GgmlType::F32;
  const std::string f32 = TempPath("f32");
  ASSERT_TRUE(WriteRandomModel(spec, f32, pool).ok());
  const std::vector<float> ref = Logits(f32);
  ASSERT_FALSE(ref.empty());
  struct Case {
    GgmlType type;
    double min_cosine;
  };
  for (const Case& c : {Case{GgmlType::Q8_0, 0.999}, Case{GgmlType::Q4_0, 0.95},
                        Case{GgmlType::Q4_K, 0.95}}) {
    const std::string out = TempPath(std::string("q_") + TypeName(c.type));
    auto stats = QuantizeGguf(f32, out, c.type, pool);
    ASSERT_TRUE(stats.ok()) << stats.status();
    auto file = GgufFile::Open(out);
    ASSERT_TRUE(file.ok()) << file.status();
    for (const GgufTensorInfo& t : (*file)->tensors()) {
      if (t.n_dims == 1) {
        EXPECT_EQ(t.type, GgmlType::F32) << t.name;
      } else if (c.type == GgmlType::Q4_K && t.ne[0] % 256 != 0) {
        EXPECT_EQ(t.type, GgmlType::F32) << t.name << " does not fit Q4_K blocks";
      } else {
        EXPECT_EQ(t.type, c.type) << t.name;
      }
    }
    EXPECT_EQ(*(*file)->GetString("general.architecture"), "qwen2");
    EXPECT_GT(stats->tensors_quantized, 0);
    const std::vector<float> got = Logits(out);
    ASSERT_EQ(got.size(), ref.size());
    const double cos = Cosine(ref, got);
    EXPECT_GE(cos, c.min_cosine) << TypeName(c.type);
    RecordProperty(TypeName(c.type), std::to_string(cos));
    std::remove(out.c_str());
  }
  std::remove(f32.c_str());
}

TEST(Quantize, RefusesMissingInputAndBadTarget) {
  ComputePool pool(1);
  EXPECT_FALSE(QuantizeGguf("/nonexistent.gguf", TempPath("x"), GgmlType::Q8_0, pool).ok());
  EXPECT_FALSE(QuantizeGguf("/nonexistent.gguf", TempPath("x"), GgmlType::Q3_K, pool).ok());
}

}  // namespace
}  // namespace hotline::engine
