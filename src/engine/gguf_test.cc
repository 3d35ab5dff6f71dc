#include "common/build_paths.h"
#include "engine/gguf.h"

#include <unistd.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace hotline::engine {
namespace {

// A small file with every metadata type and two tensors of different types.
std::vector<uint8_t> SampleFile(uint32_t alignment = 32) {
  GgufWriter w;
  w.SetString("general.architecture", "llama");
  w.SetU8("t.u8", 200);
  w.SetI8("t.i8", -5);
  w.SetU16("t.u16", 60000);
  w.SetI16("t.i16", -30000);
  w.SetU32("t.u32", 4000000000u);
  w.SetI32("t.i32", -2000000000);
  w.SetU64("t.u64", 1ull << 40);
  w.SetI64("t.i64", -(1ll << 40));
  w.SetF32("t.f32", 1.5f);
  w.SetF64("t.f64", 2.25);
  w.SetBool("t.bool", true);
  std::vector<std::string> toks = {"<unk>", "<s>", "</s>", "hello", ""};
  w.SetStringArray("tokenizer.ggml.tokens", toks);
  std::vector<float> scores = {0.f, -1.f, -2.f, -3.5f, 7.f};
  w.SetF32Array("tokenizer.ggml.scores", scores);
  std::vector<int32_t> types = {2, 3, 3, 1, 1};
  w.SetI32Array("tokenizer.ggml.token_type", types);
  w.SetAlignment(alignment);
  std::vector<float> a(8 * 3);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i) * 0.5f;
  std::vector<uint8_t> abytes(a.size() * 4);
  std::memcpy(abytes.data(), a.data(), abytes.size());
  const int64_t adims[] = {8, 3};
  EXPECT_TRUE(w.AddTensor("a.weight", GgmlType::F32, adims, abytes).ok());
  const int64_t bdims[] = {64, 2};
  EXPECT_TRUE(w.AddTensorFill("b.weight", GgmlType::Q8_0, bdims, [](std::span<uint8_t> out) {
                 for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 7);
                 return Status::Ok();
               }).ok());
  auto buf = w.WriteBuffer();
  EXPECT_TRUE(buf.ok());
  return *buf;
}

TEST(Gguf, RoundTripsEveryValueTypeAndTensor) {
  auto f = GgufFile::FromBuffer(SampleFile());
  ASSERT_TRUE(f.ok()) << f.status();
  const GgufFile& g = **f;
  EXPECT_EQ(g.version(), 3u);
  EXPECT_EQ(*g.GetString("general.architecture"), "llama");
  EXPECT_EQ(*g.GetInt("t.u8"), 200);
  EXPECT_EQ(*g.GetInt("t.i8"), -5);
  EXPECT_EQ(*g.GetInt("t.u16"), 60000);
  EXPECT_EQ(*g.GetInt("t.i16"), -30000);
  EXPECT_EQ(*g.GetInt("t.u32"), 4000000000ll);
  EXPECT_EQ(*g.GetInt("t.i32"), -2000000000);
  EXPECT_EQ(*g.GetInt("t.u64"), 1ll << 40);
  EXPECT_EQ(*g.GetInt("t.i64"), -(1ll << 40));
  EXPECT_EQ(*g.GetFloat("t.f32"), 1.5);
  EXPECT_EQ(*g.GetFloat("t.f64"), 2.25);
  EXPECT_TRUE(*g.GetBool("t.bool"));
  auto toks = g.GetStringArray("tokenizer.ggml.tokens");
  ASSERT_TRUE(toks.ok());
  ASSERT_EQ(toks->size(), 5u);
  EXPECT_EQ((*toks)[3], "hello");
  EXPECT_EQ((*toks)[4], "");
  auto scores = g.GetArray<float>("tokenizer.ggml.scores");
  ASSERT_TRUE(scores.ok());
  EXPECT_EQ((*scores)[3], -3.5f);
  auto types = g.GetArray<int32_t>("tokenizer.ggml.token_type");
  ASSERT_TRUE(types.ok());
  EXPECT_EQ((*types)[0], 2);

  ASSERT_EQ(g.tensors().size(), 2u);
  const GgufTensorInfo* a = g.FindTensor("a.weight");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->n_dims, 2);
  EXPECT_EQ(a->ne[0], 8);
  EXPECT_EQ(a->ne[1], 3);
  EXPECT_EQ(a->num_rows(), 3);
  EXPECT_EQ(a->size_bytes, 8u * 3u * 4u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a->data) % 32, 0u);
  float x;
  std::memcpy(&x, a->data + 5 * 4, 4);
  EXPECT_EQ(x, 2.5f);
  const GgufTensorInfo* b = g.FindTensor("b.weight");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->type, GgmlType::Q8_0);
  EXPECT_EQ(b->size_bytes, 2u * 2u * 34u);
  EXPECT_EQ(b->data[3], 21);
  EXPECT_EQ(b->offset % 32, 0u);
  EXPECT_EQ(g.FindTensor("missing"), nullptr);
}

TEST(Gguf, TypedAccessErrorsNameTheKey) {
  auto f = GgufFile::FromBuffer(SampleFile());
  ASSERT_TRUE(f.ok());
  auto s = (*f)->GetString("t.u32");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("t.u32"), std::string::npos);
  EXPECT_EQ((*f)->GetInt("nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*(*f)->GetIntOr("nope", 7), 7);
  EXPECT_FALSE((*f)->GetIntOr("general.architecture", 7).ok());
  EXPECT_FALSE((*f)->GetFloat("t.i32").ok());  // no silent int -> float
  EXPECT_FALSE((*f)->GetArray<int32_t>("tokenizer.ggml.scores").ok());
  EXPECT_FALSE((*f)->GetStringArray("tokenizer.ggml.scores").ok());
}

TEST(Gguf, CustomAlignmentIsHonoured) {
  auto f = GgufFile::FromBuffer(SampleFile(64));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->alignment(), 64u);
  for (const auto& t : (*f)->tensors()) EXPECT_EQ(t.offset % 64, 0u);
  EXPECT_EQ((*f)->data_offset() % 64, 0u);
}

TEST(Gguf, WriterRejectsBadTensors) {
  GgufWriter w;
  const int64_t bad_row[] = {33, 1};
  EXPECT_FALSE(w.AddTensor("x", GgmlType::Q4_0, bad_row, std::vector<uint8_t>(18)).ok());
  const int64_t dims[] = {4};
  EXPECT_FALSE(w.AddTensor("x", GgmlType::F32, dims, std::vector<uint8_t>(15)).ok());
  EXPECT_TRUE(w.AddTensor("x", GgmlType::F32, dims, std::vector<uint8_t>(16)).ok());
  EXPECT_FALSE(w.AddTensor("x", GgmlType::F32, dims, std::vector<uint8_t>(16)).ok());
  const int64_t zero[] = {0};
  EXPECT_FALSE(w.AddTensor("y", GgmlType::F32, zero, {}).ok());
}

TEST(Gguf, FileRoundTripThroughMmap) {
  std::string path = std::string(HOTLINE_BINARY_DIR) + "/gguf_test_roundtrip_" + std::to_string(::getpid()) + ".gguf";
  GgufWriter w;
  w.SetString("general.architecture", "qwen2");
  std::vector<uint8_t> data(16, 9);
  const int64_t dims[] = {8};
  ASSERT_TRUE(w.AddTensorView("t", GgmlType::F16, dims, data).ok());
  ASSERT_TRUE(w.WriteFile(path).ok());
  auto f = GgufFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(*(*f)->GetString("general.architecture"), "qwen2");
  EXPECT_EQ((*f)->tensors()[0].data[15], 9);
  std::remove(path.c_str());
  EXPECT_EQ(GgufFile::Open(path).status().code(), StatusCode::kNotFound);
}

TEST(Gguf, SetRawCopiesValuesUnchanged) {
  auto f = GgufFile::FromBuffer(SampleFile());
  ASSERT_TRUE(f.ok());
  GgufWriter w;
  for (const auto& [k, v] : (*f)->metadata()) w.SetRaw(k, v);
  auto buf = w.WriteBuffer();
  ASSERT_TRUE(buf.ok());
  auto g = GgufFile::FromBuffer(*buf);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->metadata().size(), (*f)->metadata().size());
  EXPECT_EQ((*(*g)->GetStringArray("tokenizer.ggml.tokens"))[3], "hello");
  EXPECT_EQ(*(*g)->GetInt("t.i64"), -(1ll << 40));
}

TEST(Gguf, ReadsFileWrittenByAnotherTool) {
  auto f = GgufFile::Open(std::string(HOTLINE_SHARED_DATA_DIR) +
                          "/llm/tiny-random/llama-2-tiny-random.gguf");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(*(*f)->GetString("general.architecture"), "llama");
  auto toks = (*f)->GetStringArray("tokenizer.ggml.tokens");
  ASSERT_TRUE(toks.ok());
  EXPECT_EQ(toks->size(), 32000u);
  const GgufTensorInfo* emb = (*f)->FindTensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->ne[1], 32000);
}

// Hand-built headers for faults the writer cannot produce.
struct RawBuilder {
  std::vector<uint8_t> b;
  template <typename T>
  RawBuilder& Put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    b.insert(b.end(), p, p + sizeof(T));
    return *this;
  }
  RawBuilder& Str(std::string_view s) {
    Put<uint64_t>(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
};

Status ParseStatus(const std::vector<uint8_t>& b) { return GgufFile::FromBuffer(b).status(); }

TEST(Gguf, RejectsHostileHeaders) {
  // Bad magic.
  EXPECT_EQ(ParseStatus(RawBuilder().Put<uint32_t>(0x12345678).Put<uint32_t>(3).b).code(),
            StatusCode::kInvalidArgument);
  // Unsupported version.
  auto v = ParseStatus(RawBuilder().Put(kGgufMagic).Put<uint32_t>(7).Put<uint64_t>(0).Put<uint64_t>(0).b);
  EXPECT_NE(v.message().find("version 7"), std::string::npos) << v;
  // Huge counts are refused before any allocation.
  EXPECT_FALSE(ParseStatus(RawBuilder().Put(kGgufMagic).Put<uint32_t>(3).Put<uint64_t>(0).Put<uint64_t>(~0ull).b).ok());
  EXPECT_FALSE(ParseStatus(RawBuilder().Put(kGgufMagic).Put<uint32_t>(3).Put<uint64_t>(1ull << 60).Put<uint64_t>(0).b).ok());
  // A string array claiming 2^62 elements.
  auto arr = RawBuilder().Put(kGgufMagic).Put<uint32_t>(3).Put<uint64_t>(0).Put<uint64_t>(1);
  arr.Str("k").Put<uint32_t>(9).Put<uint32_t>(8).Put<uint64_t>(1ull << 62);
  EXPECT_NE(ParseStatus(arr.b).message().find("more than the file can hold"), std::string::npos);
  // A key length of 2^63.
  auto key = RawBuilder().Put(kGgufMagic).Put<uint32_t>(3).Put<uint64_t>(0).Put<uint64_t>(1).Put<uint64_t>(1ull << 63);
  EXPECT_EQ(ParseStatus(key.b).code(), StatusCode::kDataLoss);
  // Nested arrays, unknown value type, bad alignment.
  auto nested = RawBuilder().Put(kGgufMagic).Put<uint32_t>(3).Put<uint64_t>(0).Put<uint64_t>(1);
  nested.Str("k").Put<uint32_t>(9).Put<uint32_t>(9).Put<uint64_t>(0);
  EXPECT_FALSE(ParseStatus(nested.b).ok());
  auto badtype = RawBuilder().Put(kGgufMagic).Put<uint32_t>(3).Put<uint64_t>(0).Put<uint64_t>(1);
  badtype.Str("k").Put<uint32_t>(13).Put<uint64_t>(0);
  EXPECT_FALSE(ParseStatus(badtype.b).ok());
  auto align = RawBuilder().Put(kGgufMagic).Put<uint32_t>(3).Put<uint64_t>(0).Put<uint64_t>(1);
  align.Str("general.alignment").Put<uint32_t>(4).Put<uint32_t>(24);
  EXPECT_NE(ParseStatus(align.b).message().find("power of two"), std::string::npos);
  // A tensor whose dims multiply past int64, one with 5 dims, one past the end of the file.
  auto dims = RawBuilder().Put(kGgufMagic).Put<uint32_t>(3).Put<uint64_t>(1).Put<uint64_t>(0);
  dims.Str("t").Put<uint32_t>(2).Put<uint64_t>(1ull << 40).Put<uint64_t>(1ull << 40).Put<uint32_t>(0).Put<uint64_t>(0);
  EXPECT_FALSE(ParseStatus(dims.b).ok());
  auto five = RawBuilder().Put(kGgufMagic).Put<uint32_t>(3).Put<uint64_t>(1).Put<uint64_t>(0);
  five.Str("t").Put<uint32_t>(5);
  for (int i = 0; i < 5; ++i) five.Put<uint64_t>(1);
  five.Put<uint32_t>(0).Put<uint64_t>(0);
  EXPECT_FALSE(ParseStatus(five.b).ok());
  auto past = RawBuilder().Put(kGgufMagic).Put<uint32_t>(3).Put<uint64_t>(1).Put<uint64_t>(0);
  past.Str("t").Put<uint32_t>(1).Put<uint64_t>(1024).Put<uint32_t>(0).Put<uint64_t>(0);
  past.b.resize(64 + 100);
  EXPECT_EQ(ParseStatus(past.b).code(), StatusCode::kDataLoss);
  // Unknown tensor type, misaligned offset.
  auto ttype = RawBuilder().Put(kGgufMagic).Put<uint32_t>(3).Put<uint64_t>(1).Put<uint64_t>(0);
  ttype.Str("t").Put<uint32_t>(1).Put<uint64_t>(4).Put<uint32_t>(5).Put<uint64_t>(0);
  ttype.b.resize(128);
  EXPECT_NE(ParseStatus(ttype.b).message().find("unknown ggml type 5"), std::string::npos);
  auto off = RawBuilder().Put(kGgufMagic).Put<uint32_t>(3).Put<uint64_t>(1).Put<uint64_t>(0);
  off.Str("t").Put<uint32_t>(1).Put<uint64_t>(4).Put<uint32_t>(0).Put<uint64_t>(4);
  off.b.resize(128);
  EXPECT_NE(ParseStatus(off.b).message().find("alignment"), std::string::npos);
}

TEST(Gguf, RejectsOverlappingTensors) {
  auto o = RawBuilder().Put(kGgufMagic).Put<uint32_t>(3).Put<uint64_t>(2).Put<uint64_t>(0);
  o.Str("a").Put<uint32_t>(1).Put<uint64_t>(16).Put<uint32_t>(0).Put<uint64_t>(0);
  o.Str("b").Put<uint32_t>(1).Put<uint64_t>(16).Put<uint32_t>(0).Put<uint64_t>(64);
  o.b.resize(256);
  EXPECT_TRUE(ParseStatus(o.b).ok()) << ParseStatus(o.b);
  auto p = RawBuilder().Put(kGgufMagic).Put<uint32_t>(3).Put<uint64_t>(2).Put<uint64_t>(0);
  p.Str("a").Put<uint32_t>(1).Put<uint64_t>(16).Put<uint32_t>(0).Put<uint64_t>(0);
  p.Str("b").Put<uint32_t>(1).Put<uint64_t>(16).Put<uint32_t>(0).Put<uint64_t>(32);
  p.b.resize(256);
  EXPECT_FALSE(ParseStatus(p.b).ok());
}

// Every prefix of a valid file must fail cleanly (no crash, no sanitizer report); then thousands
// of deterministic bit flips and byte overwrites must either parse to a self-consistent file or
// fail with an error.
TEST(GgufFuzz, TruncatedAndMutatedFilesNeverCrash) {
  const std::vector<uint8_t> good = SampleFile();
  auto whole = GgufFile::FromBuffer(good);
  ASSERT_TRUE(whole.ok());
  const GgufTensorInfo& last = (*whole)->tensors().back();
  const size_t needed = (*whole)->data_offset() + last.offset + last.size_bytes;
  for (size_t n = 0; n < good.size(); ++n) {
    auto f = GgufFile::FromBuffer(std::span<const uint8_t>(good.data(), n));
    // Only the padding after the last tensor may be cut off.
    EXPECT_EQ(f.ok(), n >= needed) << "prefix of " << n << " bytes";
  }
  std::mt19937_64 rng(12345);
  int ok_count = 0;
  const int kMutations = 4000;
  for (int i = 0; i < kMutations; ++i) {
    std::vector<uint8_t> m = good;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % m.size();
      switch (rng() % 3) {
        case 0: m[pos] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        case 1: m[pos] = static_cast<uint8_t>(rng()); break;
        default: m[pos] = 0xff; break;
      }
    }
    auto f = GgufFile::FromBuffer(m);
    if (!f.ok()) {
      EXPECT_FALSE(f.status().message().empty());
      continue;
    }
    ++ok_count;
    // Whatever parsed must be safe to walk.
    for (const auto& [k, v] : (*f)->metadata()) {
      (void)k;
      if (auto s = v.AsStringArray(); s.ok()) {
        for (std::string_view x : *s) (void)x.size();
      }
    }
    uint64_t sum = 0;
    for (const auto& t : (*f)->tensors()) {
      ASSERT_LE(t.offset + t.size_bytes, (*f)->file_size() - (*f)->data_offset());
      for (uint64_t j = 0; j < t.size_bytes; ++j) sum += t.data[j];
    }
    (void)sum;
  }
  // Mutations inside tensor data leave a valid file, so some must parse.
  EXPECT_GT(ok_count, 0);
  EXPECT_LT(ok_count, kMutations);
}

}  // namespace
}  // namespace hotline::engine
