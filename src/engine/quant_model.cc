#include "engine/quant_model.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

#include "common/log.h"
#include "engine/gguf.h"
#include "engine/quant.h"

namespace hotline::engine {
namespace {

// GGUF general.file_type values (llama.cpp's LLAMA_FTYPE numbering).
uint32_t FileTypeFor(GgmlType t) {
  switch (t) {
    case GgmlType::F32: return 0;
    case GgmlType::F16: return 1;
    case GgmlType::Q4_0: return 2;
    case GgmlType::Q4_1: return 3;
    case GgmlType::Q8_0: return 7;
    case GgmlType::Q5_0: return 8;
    case GgmlType::Q5_1: return 9;
    case GgmlType::Q4_K: return 14;  // "Q4_K_S": every matrix Q4_K
    case GgmlType::Q5_K: return 16;
    case GgmlType::Q6_K: return 18;
    case GgmlType::BF16: return 32;
    default: return 0;
  }
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Runs `row_fn(row, out_row_bytes)` for every row of a tensor on the pool, collecting the first
// error.
Status FillRows(std::span<uint8_t> out, int64_t rows, int64_t out_row_bytes, ComputePool& pool,
                FnRef<Status(int64_t row, uint8_t* dst)> row_fn) {
  if (rows * out_row_bytes != static_cast<int64_t>(out.size())) {
    return InternalError("tensor size does not match rows x row bytes");
  }
  std::atomic<bool> failed{false};
  Status first;
  std::mutex mu;
  pool.ParallelFor(rows, 0, [&](int64_t r0, int64_t r1, int) {
    for (int64_t r = r0; r < r1 && !failed.load(std::memory_order_relaxed); ++r) {
      Status s = row_fn(r, out.data() + r * out_row_bytes);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (!failed.exchange(true)) first = s;
      }
    }
  });
  return first;
}

}  // namespace

Result<QuantizeStats> QuantizeGguf(const std::string& in_path, const std::string& out_path,
                                   GgmlType target, ComputePool& pool) {
  if (!CanQuantizeTo(target)) {
    return InvalidArgumentError(std::string("cannot quantize to ") + TypeName(target));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> file, GgufFile::Open(in_path));
  GgufWriter w;
  w.SetAlignment(static_cast<uint32_t>(file->alignment()));
  for (const auto& [key, value] : file->metadata()) {
    if (key == "general.alignment") continue;  // SetAlignment writes it when needed
    w.SetRaw(key, value);
  }
  w.SetU32("general.file_type", FileTypeFor(target));
  w.SetU32("general.quantization_version", 2);

  QuantizeStats stats;
  const int64_t target_block = GetTypeInfo(target)->block_elems;
  for (const GgufTensorInfo& t : file->tensors()) {
    stats.bytes_in += t.size_bytes;
    std::vector<int64_t> dims(t.ne.begin(), t.ne.begin() + t.n_dims);
    const GgmlTypeInfo* src_info = GetTypeInfo(t.type);
    const bool matrix = t.n_dims >= 2 && EndsWith(t.name, ".weight");
    const bool fits = t.ne[0] % target_block == 0;
    if (!matrix || !fits || t.type == target || src_info == nullptr || !src_info->supported) {
      if (matrix && !fits) {
        HLOG_WARN("quantize: keeping {} as {} (rows of {} are not a multiple of {})", t.name,
                  TypeName(t.type), t.ne[0], target_block);
      }
      RETURN_IF_ERROR(w.AddTensorView(t.name, t.type, dims, t.bytes()));
      stats.tensors_kept++;
      stats.bytes_out += t.size_bytes;
      continue;
    }
    const int64_t cols = t.ne[0], rows = t.num_rows();
    ASSIGN_OR_RETURN(const int64_t in_row_bytes, RowBytes(t.type, cols));
    ASSIGN_OR_RETURN(const int64_t out_row_bytes, RowBytes(target, cols));
    const uint8_t* src = t.data;
    const GgmlType src_type = t.type;
    RETURN_IF_ERROR(w.AddTensorFill(
        t.name, target, dims, [=, &pool](std::span<uint8_t> out) -> Status {
          return FillRows(out, rows, out_row_bytes, pool, [&](int64_t r, uint8_t* dst) -> Status {
            thread_local std::vector<float> row;
            row.resize(static_cast<size_t>(cols));
            DequantizeRow(src_type, src + r * in_row_bytes, row.data(), cols);
            return QuantizeRow(target, row.data(), dst, cols);
          });
        }));
    stats.tensors_quantized++;
    stats.bytes_out += static_cast<uint64_t>(rows * out_row_bytes);
  }
  RETURN_IF_ERROR(w.WriteFile(out_path));
  return stats;
}

// ---------------------------------------------------------------------------------------------
// Random models.

namespace {

struct Shape {
  int64_t n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab, ctx;
};

Result<Shape> ShapeFor(const std::string& shape) {
  if (shape == "tiny") return Shape{256, 2, 8, 2, 512, 1024, 2048};
  if (shape == "0.5b") return Shape{896, 24, 14, 2, 4864, 151936, 32768};  // Qwen2.5-0.5B
  if (shape == "1b") return Shape{2048, 16, 32, 8, 8192, 128256, 131072};   // Llama-3.2-1B
  return InvalidArgumentError("unknown shape '" + shape + "' (expected tiny, 0.5b or 1b)");
}

// SplitMix64: a fast, well-mixed generator; one stream per (tensor, row) so the output does not
// depend on how rows are spread over threads.
struct SplitMix {
  uint64_t s;
  uint64_t Next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float Uniform() { return static_cast<float>(static_cast<int64_t>(Next() >> 40) - (1 << 23)) / (1 << 23); }
};

// GPT-2's byte-to-character map (printable bytes map to themselves, others to U+0100 upwards).
std::string ByteChar(int b) {
  static const std::vector<std::string> table = [] {
    std::vector<std::string> t(256);
    int next = 256;
    for (int i = 0; i < 256; ++i) {
      const bool printable = (i >= 0x21 && i <= 0x7E) || (i >= 0xA1 && i <= 0xAC) || i >= 0xAE;
      const int cp = printable ? i : next++;
      std::string s;
      if (cp < 0x80) {
        s.push_back(static_cast<char>(cp));
      } else {
        s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
      t[static_cast<size_t>(i)] = s;
    }
    return t;
  }();
  return table[static_cast<size_t>(b)];
}

struct Vocab {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  std::vector<std::string> merges;
  int32_t bos = -1, eos = -1, eot = -1;
};

// 256 byte tokens, merges that build a few hundred common call-centre words (with and without the
// leading-space marker), the family's special tokens, then unused padding up to n_vocab.
Vocab MakeVocab(const std::string& arch, int64_t n_vocab) {
  Vocab v;
  for (int b = 0; b < 256; ++b) {
    v.tokens.push_back(ByteChar(b));
    v.types.push_back(1);
  }
  static const char* kWords[] = {
      "the", "and", "you", "your", "account", "card", "help", "call", "to", "of", "is", "in",
      "for", "that", "it", "with", "on", "can", "balance", "payment", "thank", "please", "hello",
      "transfer", "bank", "credit", "debit", "money", "what", "how", "my", "me", "we", "our",
      "order", "delivery", "refund", "support", "agent", "number", "phone", "time", "today"};
  auto has = [&](const std::string& s) {
    for (const auto& k : v.tokens) {
      if (k == s) return true;
    }
    return false;
  };
  const std::string space = ByteChar(' ');
  for (const char* word : kWords) {
    for (int with_space = 0; with_space < 2; ++with_space) {
      std::string acc = with_space ? space : "";
      for (const char* p = word; *p; ++p) {
        const std::string next(1, *p);
        if (acc.empty()) {
          acc = next;
          continue;
        }
        const std::string merged = acc + next;
        if (!has(merged) && static_cast<int64_t>(v.tokens.size()) < n_vocab - 16) {
          v.merges.push_back(acc + " " + next);
          v.tokens.push_back(merged);
          v.types.push_back(1);
        }
        acc = merged;
      }
    }
  }
  auto special = [&](const std::string& s) {
    v.tokens.push_back(s);
    v.types.push_back(3);  // control
    return static_cast<int32_t>(v.tokens.size() - 1);
  };
  if (arch == "qwen2") {
    v.eos = special("<|endoftext|>");
    special("<|im_start|>");
    v.eot = special("<|im_end|>");
  } else {
    v.bos = special("<|begin_of_text|>");
    v.eos = special("<|end_of_text|>");
    special("<|start_header_id|>");
    special("<|end_header_id|>");
    v.eot = special("<|eot_id|>");
  }
  for (int64_t i = static_cast<int64_t>(v.tokens.size()); i < n_vocab; ++i) {
    v.tokens.push_back("<|reserved_" + std::to_string(i) + "|>");
    v.types.push_back(5);  // unused
  }
  return v;
}

// The model's metadata: architecture, hyper-parameters as a real model of the shape has them,
// and the small byte-level BPE vocabulary.
void WriteMetadata(GgufWriter& w, const RandomModelSpec& spec, const Shape& sh) {
  const bool qwen = spec.arch == "qwen2";
  const std::string& a = spec.arch;
  const int64_t head_dim = sh.n_embd / sh.n_head;
  w.SetString("general.architecture", a);
  w.SetString("general.name", "hotline-random-" + a + "-" + spec.shape);
  w.SetU32("general.file_type", FileTypeFor(spec.type));
  w.SetU32("general.quantization_version", 2);
  w.SetU32(a + ".context_length", static_cast<uint32_t>(sh.ctx));
  w.SetU32(a + ".embedding_length", static_cast<uint32_t>(sh.n_embd));
  w.SetU32(a + ".block_count", static_cast<uint32_t>(sh.n_layer));
  w.SetU32(a + ".feed_forward_length", static_cast<uint32_t>(sh.n_ff));
  w.SetU32(a + ".attention.head_count", static_cast<uint32_t>(sh.n_head));
  w.SetU32(a + ".attention.head_count_kv", static_cast<uint32_t>(sh.n_head_kv));
  w.SetU32(a + ".rope.dimension_count", static_cast<uint32_t>(head_dim));
  w.SetF32(a + ".rope.freq_base", qwen ? 1000000.0f : 500000.0f);
  w.SetF32(a + ".attention.layer_norm_rms_epsilon", qwen ? 1e-6f : 1e-5f);

  const Vocab vocab = MakeVocab(a, sh.n_vocab);
  w.SetString("tokenizer.ggml.model", "gpt2");
  w.SetString("tokenizer.ggml.pre", qwen ? "qwen2" : "llama-bpe");
  w.SetStringArray("tokenizer.ggml.tokens", vocab.tokens);
  w.SetI32Array("tokenizer.ggml.token_type", vocab.types);
  w.SetStringArray("tokenizer.ggml.merges", vocab.merges);
  if (vocab.bos >= 0) w.SetU32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(vocab.bos));
  w.SetU32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(vocab.eos));
  w.SetU32("tokenizer.ggml.eot_token_id", static_cast<uint32_t>(vocab.eot));
  w.SetBool("tokenizer.ggml.add_bos_token", !qwen);
}

}  // namespace

Result<RandomModelInfo> WriteRandomModel(const RandomModelSpec& spec, const std::string& out_path,
                                         ComputePool& pool) {
  if (spec.arch != "llama" && spec.arch != "qwen2") {
    return InvalidArgumentError("unknown arch '" + spec.arch + "' (expected llama or qwen2)");
  }
  ASSIGN_OR_RETURN(const Shape sh, ShapeFor(spec.shape));
  if (!CanQuantizeTo(spec.type)) {
    return InvalidArgumentError(std::string("cannot generate weights of type ") +
                                TypeName(spec.type));
  }
  const int64_t block = GetTypeInfo(spec.type)->block_elems;
  if (sh.n_embd % block != 0 || sh.n_ff % block != 0) {
    return InvalidArgumentError(std::string("shape ") + spec.shape + " does not fit " +
                                TypeName(spec.type) + " blocks of " + std::to_string(block));
  }
  const bool qwen = spec.arch == "qwen2";
  const int64_t head_dim = sh.n_embd / sh.n_head;
  const int64_t kv_dim = head_dim * sh.n_head_kv;

  GgufWriter w;
  WriteMetadata(w, spec, sh);

  uint64_t tensor_index = 0;
  auto add_matrix = [&](const std::string& name, int64_t cols, int64_t rows) -> Status {
    // Uniform(-s, s) with s = sqrt(3 / cols): each output of x @ W^T keeps the input's scale.
    const float scale = std::sqrt(3.0f / static_cast<float>(cols));
    const uint64_t stream = spec.seed * 0x100000001B3ULL + (++tensor_index << 32);
    const GgmlType type = spec.type;
    const int64_t row_bytes = RowBytes(type, cols).value();
    const std::vector<int64_t> dims = {cols, rows};
    return w.AddTensorFill(name, type, dims, [=, &pool](std::span<uint8_t> out) -> Status {
      return FillRows(out, rows, row_bytes, pool, [&](int64_t r, uint8_t* dst) -> Status {
        thread_local std::vector<float> row;
        row.resize(static_cast<size_t>(cols));
        SplitMix rng{stream + static_cast<uint64_t>(r) * 0x9E3779B97F4A7C15ULL};
        for (float& x : row) x = rng.Uniform() * scale;
        return QuantizeRow(type, row.data(), dst, cols);
      });
    });
  };
  auto add_vector = [&](const std::string& name, int64_t n, float value) -> Status {
    std::vector<float> v(static_cast<size_t>(n), value);
    std::vector<uint8_t> bytes(v.size() * 4);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    const std::vector<int64_t> dims = {n};
    return w.AddTensor(name, GgmlType::F32, dims, std::move(bytes));
  };

  // Real 0.5B/1B models tie the output projection to the token embedding: keep that.
  RETURN_IF_ERROR(add_matrix("token_embd.weight", sh.n_embd, sh.n_vocab));
  RETURN_IF_ERROR(add_vector("output_norm.weight", sh.n_embd, 1.0f));
  for (int64_t l = 0; l < sh.n_layer; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    RETURN_IF_ERROR(add_vector(b + "attn_norm.weight", sh.n_embd, 1.0f));
    RETURN_IF_ERROR(add_matrix(b + "attn_q.weight", sh.n_embd, sh.n_embd));
    RETURN_IF_ERROR(add_matrix(b + "attn_k.weight", sh.n_embd, kv_dim));
    RETURN_IF_ERROR(add_matrix(b + "attn_v.weight", sh.n_embd, kv_dim));
    if (qwen) {
      RETURN_IF_ERROR(add_vector(b + "attn_q.bias", sh.n_embd, 0.0f));
      RETURN_IF_ERROR(add_vector(b + "attn_k.bias", kv_dim, 0.0f));
      RETURN_IF_ERROR(add_vector(b + "attn_v.bias", kv_dim, 0.0f));
    }
    RETURN_IF_ERROR(add_matrix(b + "attn_output.weight", sh.n_embd, sh.n_embd));
    RETURN_IF_ERROR(add_vector(b + "ffn_norm.weight", sh.n_embd, 1.0f));
    RETURN_IF_ERROR(add_matrix(b + "ffn_gate.weight", sh.n_embd, sh.n_ff));
    RETURN_IF_ERROR(add_matrix(b + "ffn_up.weight", sh.n_embd, sh.n_ff));
    RETURN_IF_ERROR(add_matrix(b + "ffn_down.weight", sh.n_ff, sh.n_embd));
  }
  RETURN_IF_ERROR(w.WriteFile(out_path));

  RandomModelInfo info{sh.n_embd, sh.n_layer, sh.n_head, sh.n_head_kv, sh.n_ff, sh.n_vocab, 0};
  if (FILE* f = std::fopen(out_path.c_str(), "rb")) {
    std::fseek(f, 0, SEEK_END);
    info.file_bytes = static_cast<uint64_t>(std::ftell(f));
    std::fclose(f);
  }
  return info;
}

}  // namespace hotline::engine
