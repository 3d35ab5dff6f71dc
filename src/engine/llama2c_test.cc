#include "engine/llama2c.h"

#include <unistd.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/build_paths.h"
#include "engine/model.h"
#include "engine/model_forward.h"
#include "engine/quant.h"

namespace hotline::engine {
namespace {

const std::string kDir = std::string(HOTLINE_SHARED_DATA_DIR) + "/llm/stories260k/";

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Greedy decoding from BOS, as llama2.c's `run` does with an empty prompt.
std::vector<int32_t> Greedy(const GgufFile& file, std::shared_ptr<const GgufFile> shared, int steps) {
  (void)file;
  auto model = Model::Load(std::move(shared));
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return {};
  const ModelHParams& hp = (*model)->hparams();
  auto kv = PerSequenceKvCache::Create({hp.n_layer, hp.n_head_kv, hp.head_dim, KvType::kF32}, 64,
                                       hp.n_ctx_train);
  EXPECT_TRUE(kv.ok());
  ComputePool pool(1);
  ForwardPass fwd(**model, pool);
  std::vector<float> logits;
  std::vector<int32_t> out;
  int32_t token = 1;
  for (int pos = 0; pos < steps; ++pos) {
    BatchToken b{token, 0, pos, true};
    Status s = fwd.Run(std::span<const BatchToken>(&b, 1), **kv, &logits);
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) break;
    token = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    if (token == 1) break;  // llama2.c stops on BOS
    out.push_back(token);
  }
  return out;
}

// llama2.c's decode: strip the leading space of the piece after BOS, <0xNN> is a raw byte, and
// safe_printf drops single non-printable, non-space bytes.
std::string DecodeLikeLlama2c(const GgufFile& f, const std::vector<int32_t>& ids) {
  auto toks = f.GetStringArray("tokenizer.ggml.tokens");
  EXPECT_TRUE(toks.ok());
  std::string text;
  int32_t prev = 1;
  for (int32_t id : ids) {
    std::string piece(toks.value()[static_cast<size_t>(id)]);
    for (size_t p; (p = piece.find("\xE2\x96\x81")) != std::string::npos;) piece.replace(p, 3, " ");
    if (prev == 1 && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
    unsigned int byte = 0;
    if (piece.size() == 6 && std::sscanf(piece.c_str(), "<0x%02X>", &byte) == 1) {
      piece = std::string(1, static_cast<char>(byte));
    }
    if (piece.size() == 1) {
      unsigned char ch = static_cast<unsigned char>(piece[0]);
      if (!(std::isprint(ch) || std::isspace(ch))) piece.clear();
    }
    text += piece;
    prev = id;
  }
  return text;
}

TEST(Llama2c, Stories260kGreedyMatchesReferenceInF32AndQ8_0) {
  const std::string out = std::string(HOTLINE_BINARY_DIR) + "/stories260k_test_" + std::to_string(::getpid()) + ".gguf";
  Llama2cHeader h;
  Status s = ConvertLlama2c(kDir + "stories260K.bin", kDir + "tok512.bin", out, &h);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(h.dim, 64);
  EXPECT_EQ(h.n_kv_heads, 4);
  EXPECT_TRUE(h.shared_classifier);
  auto opened = GgufFile::Open(out);
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::shared_ptr<const GgufFile> f32 = std::move(opened).value();
  EXPECT_EQ(*f32->GetString("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(f32->GetStringArray("tokenizer.ggml.tokens")->size(), 512u);

  const std::vector<int32_t> ids = Greedy(*f32, f32, 200);
  const std::string expected = ReadText(kDir + "expected_greedy_200.txt");
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(DecodeLikeLlama2c(*f32, ids), expected);

  // Q8_0 round trip of every matrix whose rows are whole Q8_0 blocks (ffn_down's 172-wide rows
  // are not, and stay F32, as a quantizer must do).
  GgufWriter w;
  for (const auto& [k, v] : f32->metadata()) w.SetRaw(k, v);
  int quantized = 0;
  for (const GgufTensorInfo& t : f32->tensors()) {
    std::vector<int64_t> dims(t.ne.begin(), t.ne.begin() + t.n_dims);
    if (t.n_dims == 2 && t.ne[0] % 32 == 0) {
      auto row_bytes = RowBytes(GgmlType::Q8_0, t.ne[0]);
      ASSERT_TRUE(row_bytes.ok());
      std::vector<uint8_t> q(static_cast<size_t>(*row_bytes * t.ne[1]));
      for (int64_t r = 0; r < t.ne[1]; ++r) {
        ASSERT_TRUE(QuantizeRow(GgmlType::Q8_0,
                                reinterpret_cast<const float*>(t.data) + r * t.ne[0],
                                q.data() + r * *row_bytes, t.ne[0])
                        .ok());
      }
      ASSERT_TRUE(w.AddTensor(t.name, GgmlType::Q8_0, dims, std::move(q)).ok());
      ++quantized;
    } else {
      ASSERT_TRUE(w.AddTensorView(t.name, t.type, dims, t.bytes()).ok());
    }
  }
  EXPECT_EQ(quantized, 1 + 5 * 6);  // embedding + q, k, v, o, gate, up per layer
  auto buf = w.WriteBuffer();
  ASSERT_TRUE(buf.ok());
  auto q8 = GgufFile::FromBuffer(*buf, "stories260k-q8_0");
  ASSERT_TRUE(q8.ok()) << q8.status();
  std::shared_ptr<const GgufFile> q8s = std::move(q8).value();
  const std::vector<int32_t> q8_ids = Greedy(*q8s, q8s, 50);
  ASSERT_GE(ids.size(), 50u);
  EXPECT_EQ(q8_ids, std::vector<int32_t>(ids.begin(), ids.begin() + 50));
  std::remove(out.c_str());
}

TEST(Llama2c, RejectsMismatchedFiles) {
  const std::string out = std::string(HOTLINE_BINARY_DIR) + "/llama2c_bad_" + std::to_string(::getpid()) + ".gguf";
  // Tokenizer given as checkpoint: its "header" is nonsense.
  Status s = ConvertLlama2c(kDir + "tok512.bin", kDir + "tok512.bin", out);
  EXPECT_FALSE(s.ok());
  // Checkpoint given as tokenizer.
  s = ConvertLlama2c(kDir + "stories260K.bin", kDir + "stories260K.bin", out);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(ConvertLlama2c(kDir + "missing.bin", kDir + "tok512.bin", out).code(),
            StatusCode::kNotFound);
  // A truncated checkpoint.
  const std::string cut = std::string(HOTLINE_BINARY_DIR) + "/llama2c_cut_" + std::to_string(::getpid()) + ".bin";
  std::string ck = ReadText(kDir + "stories260K.bin");
  std::ofstream(cut, std::ios::binary).write(ck.data(), static_cast<std::streamsize>(ck.size() / 2));
  s = ConvertLlama2c(cut, kDir + "tok512.bin", out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("bytes"), std::string::npos) << s;
  std::remove(cut.c_str());
}

}  // namespace
}  // namespace hotline::engine
