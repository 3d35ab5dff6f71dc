#include "engine/llama2c.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <vector>

namespace hotline::engine {
namespace {

// Refuse files above this size (the largest llama2.c checkpoints are a few GB).
constexpr uint64_t kMaxFileBytes = uint64_t{64} << 30;

Result<std::vector<uint8_t>> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return NotFoundError("cannot open '" + path + "'");
  const std::streamoff size = in.tellg();
  if (size < 0 || static_cast<uint64_t>(size) > kMaxFileBytes) {
    return InvalidArgumentError("'" + path + "' is too large or unreadable");
  }
  std::vector<uint8_t> data(static_cast<size_t>(size));
  in.seekg(0);
  if (size > 0 && !in.read(reinterpret_cast<char*>(data.data()), size)) {
    return DataLossError("cannot read '" + path + "'");
  }
  return data;
}

class Cursor {
 public:
  Cursor(const std::vector<uint8_t>& d, std::string name) : d_(d), name_(std::move(name)) {}
  template <typename T>
  Status Read(T& out) {
    if (d_.size() - pos_ < sizeof(T)) return Truncated();
    std::memcpy(&out, d_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return Status::Ok();
  }
  // `n` floats as raw bytes.
  Result<std::vector<uint8_t>> Floats(uint64_t n) {
    if (n > (d_.size() - pos_) / 4) return Truncated();
    std::vector<uint8_t> out(d_.begin() + static_cast<std::ptrdiff_t>(pos_),
                             d_.begin() + static_cast<std::ptrdiff_t>(pos_ + n * 4));
    pos_ += n * 4;
    return out;
  }
  Status Skip(uint64_t bytes) {
    if (bytes > d_.size() - pos_) return Truncated();
    pos_ += bytes;
    return Status::Ok();
  }
  uint64_t remaining() const { return d_.size() - pos_; }
  Status Truncated() const {
    return DataLossError(name_ + ": file is truncated at byte " + std::to_string(pos_) + " of " +
                         std::to_string(d_.size()));
  }

 private:
  const std::vector<uint8_t>& d_;
  std::string name_;
  uint64_t pos_ = 0;
};

Status ReadTokenizer(const std::string& path, int vocab_size, GgufWriter* w) {
  ASSIGN_OR_RETURN(std::vector<uint8_t> data, ReadAll(path));
  Cursor c(data, path);
  int32_t max_len = 0;
  RETURN_IF_ERROR(c.Read(max_len));
  if (max_len < 1 || max_len > (1 << 16)) {
    return InvalidArgumentError(path + ": max_token_length " + std::to_string(max_len) +
                                " is not plausible; is this a llama2.c tokenizer.bin?");
  }
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  tokens.reserve(static_cast<size_t>(vocab_size));
  for (int i = 0; i < vocab_size; ++i) {
    float score = 0;
    int32_t len = 0;
    RETURN_IF_ERROR(c.Read(score));
    RETURN_IF_ERROR(c.Read(len));
    if (len < 0 || len > max_len || static_cast<uint64_t>(len) > c.remaining()) {
      return DataLossError(path + ": token " + std::to_string(i) + " has invalid length " +
                           std::to_string(len));
    }
    std::string piece(static_cast<size_t>(len), '\0');
    for (int j = 0; j < len; ++j) {
      uint8_t ch = 0;
      RETURN_IF_ERROR(c.Read(ch));
      piece[static_cast<size_t>(j)] = static_cast<char>(ch);
    }
    int32_t type = 1;  // normal
    if (i == 0) {
      piece = "<unk>";
      type = 2;  // unknown
    } else if (i == 1 || i == 2) {
      piece = i == 1 ? "<s>" : "</s>";  // llama2.c stores "\n<s>\n"; SPM's text is "<s>"
      type = 3;  // control
    } else if (piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && piece[5] == '>') {
      type = 6;  // byte
    } else {
      // llama2.c's export turned SentencePiece's U+2581 into spaces; undo that.
      std::string out;
      for (char ch : piece) {
        if (ch == ' ') out += "\xE2\x96\x81"; else out += ch;
      }
      piece = std::move(out);
    }
    tokens.push_back(std::move(piece));
    scores.push_back(score);
    types.push_back(type);
  }
  if (c.remaining() != 0) {
    return InvalidArgumentError(path + ": " + std::to_string(c.remaining()) +
                                " bytes left after " + std::to_string(vocab_size) +
                                " tokens; the tokenizer does not match the checkpoint's vocabulary");
  }
  // Byte fallback needs all 256 byte tokens; check they are there.
  int byte_tokens = 0;
  for (int32_t t : types) byte_tokens += t == 6;
  if (byte_tokens != 0 && byte_tokens != 256) {
    return InvalidArgumentError(path + ": found " + std::to_string(byte_tokens) +
                                " <0xNN> byte tokens, expected 256");
  }
  w->SetString("tokenizer.ggml.model", "llama");
  w->SetStringArray("tokenizer.ggml.tokens", tokens);
  w->SetF32Array("tokenizer.ggml.scores", scores);
  w->SetI32Array("tokenizer.ggml.token_type", types);
  w->SetU32("tokenizer.ggml.unknown_token_id", 0);
  w->SetU32("tokenizer.ggml.bos_token_id", 1);
  w->SetU32("tokenizer.ggml.eos_token_id", 2);
  w->SetBool("tokenizer.ggml.add_bos_token", true);
  w->SetBool("tokenizer.ggml.add_eos_token", false);
  return Status::Ok();
}

}  // namespace

Status Llama2cToGguf(const std::string& checkpoint_path, const std::string& tokenizer_path,
                     GgufWriter* w, Llama2cHeader* header_out) {
  ASSIGN_OR_RETURN(std::vector<uint8_t> data, ReadAll(checkpoint_path));
  Cursor c(data, checkpoint_path);
  int32_t h[7];
  for (int32_t& v : h) RETURN_IF_ERROR(c.Read(v));
  Llama2cHeader hd;
  hd.dim = h[0];
  hd.hidden_dim = h[1];
  hd.n_layers = h[2];
  hd.n_heads = h[3];
  hd.n_kv_heads = h[4];
  hd.shared_classifier = h[5] > 0;
  hd.vocab_size = h[5] == std::numeric_limits<int32_t>::min() ? 0 : (h[5] < 0 ? -h[5] : h[5]);
  hd.seq_len = h[6];
  const std::string bad = checkpoint_path + ": not a llama2.c checkpoint: ";
  if (hd.dim < 1 || hd.dim > (1 << 16) || hd.hidden_dim < 1 || hd.hidden_dim > (1 << 18) ||
      hd.n_layers < 1 || hd.n_layers > 1024 || hd.n_heads < 1 || hd.n_heads > hd.dim ||
      hd.n_kv_heads < 1 || hd.n_kv_heads > hd.n_heads || hd.vocab_size < 1 ||
      hd.vocab_size > (1 << 22) || hd.seq_len < 1 || hd.seq_len > (1 << 24)) {
    return InvalidArgumentError(bad + "header (" + std::to_string(h[0]) + ", " +
                                std::to_string(h[1]) + ", " + std::to_string(h[2]) + ", " +
                                std::to_string(h[3]) + ", " + std::to_string(h[4]) + ", " +
                                std::to_string(h[5]) + ", " + std::to_string(h[6]) +
                                ") is out of range");
  }
  if (hd.dim % hd.n_heads != 0 || hd.n_heads % hd.n_kv_heads != 0 ||
      (hd.dim / hd.n_heads) % 2 != 0) {
    return InvalidArgumentError(bad + "dim must split into even-sized heads and n_heads must be a "
                                      "multiple of n_kv_heads");
  }
  const uint64_t D = static_cast<uint64_t>(hd.dim), F = static_cast<uint64_t>(hd.hidden_dim),
                 L = static_cast<uint64_t>(hd.n_layers), V = static_cast<uint64_t>(hd.vocab_size);
  const uint64_t hs = D / static_cast<uint64_t>(hd.n_heads);
  const uint64_t kv = hs * static_cast<uint64_t>(hd.n_kv_heads);
  const uint64_t floats = V * D + L * D + L * D * D + 2 * L * D * kv + L * D * D + L * D +
                          3 * L * D * F + D + static_cast<uint64_t>(hd.seq_len) * hs +
                          (hd.shared_classifier ? 0 : V * D);
  if (floats * 4 != c.remaining()) {
    return InvalidArgumentError(bad + "the header implies " + std::to_string(floats * 4 + 28) +
                                " bytes but the file has " + std::to_string(data.size()));
  }

  w->SetString("general.architecture", "llama");
  w->SetString("general.name", "llama2.c import");
  w->SetU32("general.file_type", 0);  // all F32
  w->SetU32("llama.context_length", static_cast<uint32_t>(hd.seq_len));
  w->SetU32("llama.embedding_length", static_cast<uint32_t>(D));
  w->SetU32("llama.block_count", static_cast<uint32_t>(L));
  w->SetU32("llama.feed_forward_length", static_cast<uint32_t>(F));
  w->SetU32("llama.attention.head_count", static_cast<uint32_t>(hd.n_heads));
  w->SetU32("llama.attention.head_count_kv", static_cast<uint32_t>(hd.n_kv_heads));
  w->SetU32("llama.rope.dimension_count", static_cast<uint32_t>(hs));
  w->SetF32("llama.rope.freq_base", 10000.0f);
  w->SetF32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  RETURN_IF_ERROR(ReadTokenizer(tokenizer_path, hd.vocab_size, w));

  // Per-layer tensors are stored layer-major per kind ("all wq, then all wk"); read each kind for
  // all layers and name it per layer.
  auto add = [&](const std::string& name, uint64_t ne0, uint64_t ne1) -> Status {
    ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, c.Floats(ne0 * ne1));
    std::vector<int64_t> dims = {static_cast<int64_t>(ne0)};
    if (ne1 > 1 || name.find("norm") == std::string::npos) dims.push_back(static_cast<int64_t>(ne1));
    return w->AddTensor(name, GgmlType::F32, dims, std::move(bytes));
  };
  auto per_layer = [&](const std::string& kind, uint64_t ne0, uint64_t ne1) -> Status {
    for (uint64_t l = 0; l < L; ++l) {
      RETURN_IF_ERROR(add("blk." + std::to_string(l) + "." + kind, ne0, ne1));
    }
    return Status::Ok();
  };
  RETURN_IF_ERROR(add("token_embd.weight", D, V));
  RETURN_IF_ERROR(per_layer("attn_norm.weight", D, 1));
  RETURN_IF_ERROR(per_layer("attn_q.weight", D, D));
  RETURN_IF_ERROR(per_layer("attn_k.weight", D, kv));
  RETURN_IF_ERROR(per_layer("attn_v.weight", D, kv));
  RETURN_IF_ERROR(per_layer("attn_output.weight", D, D));
  RETURN_IF_ERROR(per_layer("ffn_norm.weight", D, 1));
  RETURN_IF_ERROR(per_layer("ffn_gate.weight", D, F));
  RETURN_IF_ERROR(per_layer("ffn_down.weight", F, D));
  RETURN_IF_ERROR(per_layer("ffn_up.weight", D, F));
  RETURN_IF_ERROR(add("output_norm.weight", D, 1));
  RETURN_IF_ERROR(c.Skip(static_cast<uint64_t>(hd.seq_len) * hs * 4));  // freq_cis real + imag
  if (!hd.shared_classifier) RETURN_IF_ERROR(add("output.weight", D, V));
  if (header_out != nullptr) *header_out = hd;
  return Status::Ok();
}

Status ConvertLlama2c(const std::string& checkpoint_path, const std::string& tokenizer_path,
                      const std::string& out_path, Llama2cHeader* header) {
  GgufWriter w;
  RETURN_IF_ERROR(Llama2cToGguf(checkpoint_path, tokenizer_path, &w, header));
  return w.WriteFile(out_path);
}

}  // namespace hotline::engine
