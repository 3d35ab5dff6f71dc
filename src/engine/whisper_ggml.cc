#include "engine/whisper_ggml.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <unordered_set>

#include "engine/vocab.h"
#include "engine/whisper_tokenizer.h"

namespace hotline::engine {
namespace {

// Whisper's tokens are at most a few hundred bytes (GPT-2's longest is 128); names at most ~40.
constexpr uint32_t kMaxTokenBytes = 1 << 16;
constexpr int32_t kMaxNameBytes = 1024;
constexpr int32_t kMaxFilterBins = 1 << 12;
// Each tensor header takes at least 16 bytes, so the tensor count is bounded by the file size;
// this bound only keeps absurd files from building huge name sets.
constexpr size_t kMaxTensors = 1 << 16;

std::string Where(uint64_t pos) { return " at byte " + std::to_string(pos); }

}  // namespace

class WhisperGgmlParser {
 public:
  explicit WhisperGgmlParser(WhisperGgmlFile& f) : f_(f) {}

  Status Parse() {
    uint32_t magic = 0;
    RETURN_IF_ERROR(Read(magic, "the magic number"));
    if (magic != kWhisperGgmlMagic) {
      char hex[16];
      std::snprintf(hex, sizeof(hex), "0x%08x", magic);
      return InvalidArgumentError(f_.name_ + ": not a whisper.cpp ggml model (magic " + hex +
                                  ", expected 0x67676d6c)");
    }
    RETURN_IF_ERROR(ParseHparams());
    RETURN_IF_ERROR(ParseFilters());
    RETURN_IF_ERROR(ParseTokens());
    return ParseTensors();
  }

 private:
  template <typename T>
  Status Read(T& out, const char* what) {
    if (f_.size_ - pos_ < sizeof(T)) {
      return DataLossError(f_.name_ + ": file is truncated: " + what + Where(pos_) + " needs " +
                           std::to_string(sizeof(T)) + " bytes, " +
                           std::to_string(f_.size_ - pos_) + " left");
    }
    std::memcpy(&out, f_.base_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return Status::Ok();
  }
  uint64_t left() const { return f_.size_ - pos_; }

  Status ParseHparams() {
    const char* names[11] = {"n_vocab",       "n_audio_ctx", "n_audio_state", "n_audio_head",
                             "n_audio_layer", "n_text_ctx",  "n_text_state",  "n_text_head",
                             "n_text_layer",  "n_mels",      "ftype"};
    int32_t h[11];
    for (int i = 0; i < 11; ++i) RETURN_IF_ERROR(Read(h[i], names[i]));
    WhisperHparams& hp = f_.hparams_;
    hp.n_vocab = h[0];
    hp.n_audio_ctx = h[1];
    hp.n_audio_state = h[2];
    hp.n_audio_head = h[3];
    hp.n_audio_layer = h[4];
    hp.n_text_ctx = h[5];
    hp.n_text_state = h[6];
    hp.n_text_head = h[7];
    hp.n_text_layer = h[8];
    hp.n_mels = h[9];
    if (Status s = hp.Validate(); !s.ok()) return s.WithContext(f_.name_ + ": hparams");
    // The special-token layout must make sense for this vocabulary size.
    if (Result<WhisperSpecialTokens> sp = WhisperSpecialTokens::ForVocabSize(hp.n_vocab);
        !sp.ok()) {
      return sp.status().WithContext(f_.name_ + ": hparams");
    }
    if (h[10] < 0 || h[10] >= 100000) {
      return InvalidArgumentError(f_.name_ + ": hparams: ftype " + std::to_string(h[10]) +
                                  " is out of range");
    }
    f_.ftype_ = h[10];
    return Status::Ok();
  }

  Status ParseFilters() {
    int32_t n_mel = 0, n_fft = 0;
    RETURN_IF_ERROR(Read(n_mel, "the filterbank's n_mel"));
    RETURN_IF_ERROR(Read(n_fft, "the filterbank's n_fft"));
    if (n_mel != f_.hparams_.n_mels) {
      return InvalidArgumentError(f_.name_ + ": the filterbank has " + std::to_string(n_mel) +
                                  " mel bands but hparams say n_mels " +
                                  std::to_string(f_.hparams_.n_mels));
    }
    if (n_fft != kWhisperFftSize / 2 + 1) {
      if (n_fft < 1 || n_fft > kMaxFilterBins) {
        return InvalidArgumentError(f_.name_ + ": the filterbank's n_fft " + std::to_string(n_fft) +
                                    " is out of range");
      }
      return InvalidArgumentError(f_.name_ + ": the filterbank has " + std::to_string(n_fft) +
                                  " frequency bins; Whisper's 400-point FFT has 201");
    }
    const uint64_t bytes =
        uint64_t{4} * static_cast<uint64_t>(n_mel) * static_cast<uint64_t>(n_fft);
    if (bytes > left()) {
      return DataLossError(f_.name_ + ": file is truncated: the " + std::to_string(n_mel) + "x" +
                           std::to_string(n_fft) + " filterbank" + Where(pos_) + " needs " +
                           std::to_string(bytes) + " bytes, " + std::to_string(left()) + " left");
    }
    f_.n_fft_bins_ = n_fft;
    f_.mel_filters_.resize(static_cast<size_t>(n_mel) * static_cast<size_t>(n_fft));
    std::memcpy(f_.mel_filters_.data(), f_.base_ + pos_, bytes);
    pos_ += bytes;
    for (size_t i = 0; i < f_.mel_filters_.size(); ++i) {
      const float v = f_.mel_filters_[i];
      if (!(v >= 0.0f && v < 1e3f)) {  // also catches NaN
        return InvalidArgumentError(f_.name_ + ": filterbank weight " + std::to_string(i) +
                                    " (mel " + std::to_string(i / static_cast<size_t>(n_fft)) +
                                    ") is " + std::to_string(v) + ", not a plausible weight");
      }
    }
    return Status::Ok();
  }

  Status ParseTokens() {
    int32_t n_tokens = 0;
    RETURN_IF_ERROR(Read(n_tokens, "the token count"));
    // Each token needs at least its 4-byte length.
    if (n_tokens < 0 || n_tokens > f_.hparams_.n_vocab ||
        static_cast<uint64_t>(n_tokens) * 4 > left()) {
      return DataLossError(f_.name_ + ": token count " + std::to_string(n_tokens) +
                           Where(pos_ - 4) + " is impossible (n_vocab " +
                           std::to_string(f_.hparams_.n_vocab) + ", " + std::to_string(left()) +
                           " bytes left)");
    }
    f_.tokens_.reserve(static_cast<size_t>(n_tokens));
    for (int32_t i = 0; i < n_tokens; ++i) {
      uint32_t len = 0;
      const uint64_t at = pos_;
      if (left() < 4) {
        return DataLossError(f_.name_ + ": file is truncated: token " + std::to_string(i) + " of " +
                             std::to_string(n_tokens) + Where(at) + " has no length");
      }
      RETURN_IF_ERROR(Read(len, "a token length"));
      if (len > left()) {
        return DataLossError(f_.name_ + ": token " + std::to_string(i) + ": length " +
                             std::to_string(len) + Where(at) + " runs past the end of the file");
      }
      if (len > kMaxTokenBytes) {
        return InvalidArgumentError(f_.name_ + ": token " + std::to_string(i) + ": length " +
                                    std::to_string(len) + Where(at) + " is implausible");
      }
      f_.tokens_.emplace_back(reinterpret_cast<const char*>(f_.base_ + pos_), len);
      pos_ += len;
    }
    return Status::Ok();
  }

  Status ParseTensors() {
    std::unordered_set<std::string> seen;
    while (pos_ < f_.size_) {
      const uint64_t at = pos_;
      const std::string ctx = "tensor " + std::to_string(f_.tensors_.size()) + Where(at);
      if (left() < 12) {
        return DataLossError(f_.name_ + ": file is truncated: " + ctx +
                             ": header needs 12 bytes, " + std::to_string(left()) + " left");
      }
      int32_t n_dims = 0, name_len = 0, ttype = 0;
      RETURN_IF_ERROR(Read(n_dims, "a tensor's n_dims"));
      RETURN_IF_ERROR(Read(name_len, "a tensor's name length"));
      RETURN_IF_ERROR(Read(ttype, "a tensor's type"));
      if (n_dims < 1 || n_dims > 4) {
        return DataLossError(f_.name_ + ": " + ctx + ": n_dims " + std::to_string(n_dims) +
                             " is not 1..4");
      }
      if (name_len < 1 || name_len > kMaxNameBytes) {
        return DataLossError(f_.name_ + ": " + ctx + ": name length " + std::to_string(name_len) +
                             " is not 1.." + std::to_string(kMaxNameBytes));
      }
      const GgmlTypeInfo* info = GetTypeInfo(static_cast<uint32_t>(ttype));
      if (ttype < 0 || info == nullptr) {
        return InvalidArgumentError(f_.name_ + ": " + ctx + ": unknown ggml type " +
                                    std::to_string(ttype));
      }
      WhisperGgmlTensor t;
      t.type = static_cast<GgmlType>(ttype);
      t.n_dims = n_dims;
      if (static_cast<uint64_t>(n_dims) * 4 + static_cast<uint64_t>(name_len) > left()) {
        return DataLossError(f_.name_ + ": file is truncated: " + ctx + ": dims and name need " +
                             std::to_string(n_dims * 4 + name_len) + " bytes, " +
                             std::to_string(left()) + " left");
      }
      for (int d = 0; d < n_dims; ++d) {
        int32_t v = 0;
        RETURN_IF_ERROR(Read(v, "a tensor dim"));
        if (v < 1) {
          return DataLossError(f_.name_ + ": " + ctx + ": dim " + std::to_string(d) + " is " +
                               std::to_string(v));
        }
        t.ne[static_cast<size_t>(d)] = v;
      }
      t.name.assign(reinterpret_cast<const char*>(f_.base_ + pos_), static_cast<size_t>(name_len));
      pos_ += static_cast<uint64_t>(name_len);
      const std::string tctx = ctx + " ('" + t.name + "')";
      // Row bytes times rows, with overflow checks: each dim < 2^31, so check the running product
      // against the bytes left.
      Result<int64_t> row = RowBytes(t.type, t.ne[0]);
      if (!row.ok()) return row.status().WithContext(f_.name_ + ": " + tctx);
      uint64_t bytes = static_cast<uint64_t>(*row);
      for (size_t d = 1; d < 4; ++d) {
        const uint64_t n = static_cast<uint64_t>(t.ne[d]);
        if (bytes != 0 && n > (uint64_t{1} << 62) / bytes) {
          bytes = ~uint64_t{0};
          break;
        }
        bytes *= n;
      }
      if (bytes > left()) {
        return DataLossError(f_.name_ + ": " + tctx + ": " + TypeName(t.type) + " data of " +
                             (bytes == ~uint64_t{0} ? std::string("an impossible size")
                                                    : std::to_string(bytes) + " bytes") +
                             " runs past the end of the file (" + std::to_string(left()) +
                             " bytes left)");
      }
      if (!seen.insert(t.name).second) {
        return InvalidArgumentError(f_.name_ + ": " + tctx + ": duplicate tensor name");
      }
      if (f_.tensors_.size() >= kMaxTensors) {
        return InvalidArgumentError(f_.name_ + ": more than " + std::to_string(kMaxTensors) +
                                    " tensors");
      }
      t.file_offset = pos_;
      t.data = std::span<const uint8_t>(f_.base_ + pos_, static_cast<size_t>(bytes));
      pos_ += bytes;
      f_.tensors_.push_back(std::move(t));
    }
    return Status::Ok();
  }

  WhisperGgmlFile& f_;
  uint64_t pos_ = 0;
};

Result<std::unique_ptr<WhisperGgmlFile>> WhisperGgmlFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return NotFoundError("cannot open whisper model '" + path + "': " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return InvalidArgumentError("'" + path + "' is not a regular file");
  }
  std::unique_ptr<WhisperGgmlFile> f(new WhisperGgmlFile());
  f->name_ = path;
  f->size_ = static_cast<uint64_t>(st.st_size);
  if (st.st_size > 0) {
    void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    const int map_errno = errno;
    ::close(fd);
    if (p == MAP_FAILED) {
      return InternalError("cannot map '" + path + "': " + std::strerror(map_errno));
    }
    f->base_ = static_cast<const uint8_t*>(p);
    f->mapped_ = true;
  } else {
    ::close(fd);
    f->base_ = f->owned_.data();
  }
  WhisperGgmlParser parser(*f);
  RETURN_IF_ERROR(parser.Parse());
  return f;
}

Result<std::unique_ptr<WhisperGgmlFile>> WhisperGgmlFile::FromBuffer(std::span<const uint8_t> bytes,
                                                                     std::string name) {
  std::unique_ptr<WhisperGgmlFile> f(new WhisperGgmlFile());
  f->name_ = std::move(name);
  f->owned_.assign(bytes.begin(), bytes.end());
  f->base_ = f->owned_.data();
  f->size_ = f->owned_.size();
  WhisperGgmlParser parser(*f);
  RETURN_IF_ERROR(parser.Parse());
  return f;
}

WhisperGgmlFile::~WhisperGgmlFile() {
  if (mapped_) ::munmap(const_cast<uint8_t*>(base_), static_cast<size_t>(size_));
}

const WhisperGgmlTensor* WhisperGgmlFile::FindTensor(std::string_view name) const {
  for (const WhisperGgmlTensor& t : tensors_) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

namespace {

// GPT-2's byte order (bytes_to_unicode): the printable bytes '!'..'~', 0xA1..0xAC, 0xAE..0xFF
// first, then the rest ascending. Token i < 256 of Whisper's vocabularies is byte kByteOrder[i].
std::array<uint8_t, 256> Gpt2ByteOrder() {
  std::array<uint8_t, 256> order{};
  std::array<bool, 256> printable{};
  size_t n = 0;
  for (int b = 0; b < 256; ++b) {
    printable[static_cast<size_t>(b)] =
        (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    if (printable[static_cast<size_t>(b)]) order[n++] = static_cast<uint8_t>(b);
  }
  for (int b = 0; b < 256; ++b) {
    if (!printable[static_cast<size_t>(b)]) order[n++] = static_cast<uint8_t>(b);
  }
  return order;
}

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

}  // namespace

Result<WhisperGgmlVocab> WhisperGgmlTextTokens(const WhisperGgmlFile& in) {
  ASSIGN_OR_RETURN(WhisperSpecialTokens sp,
                   WhisperSpecialTokens::ForVocabSize(in.hparams().n_vocab));
  const int n_text = sp.n_text;
  if (static_cast<int>(in.tokens().size()) < n_text) {
    return InvalidArgumentError(
        in.name() + ": the vocabulary has " + std::to_string(in.tokens().size()) + " tokens; a " +
        (sp.multilingual ? "multilingual" : "English-only") + " Whisper model with n_vocab " +
        std::to_string(in.hparams().n_vocab) + " needs the " + std::to_string(n_text) +
        " text tokens");
  }
  WhisperGgmlVocab v;
  v.tokens.assign(in.tokens().begin(), in.tokens().begin() + n_text);
  const std::array<uint8_t, 256> order = Gpt2ByteOrder();
  for (size_t i = 0; i < 256; ++i) {
    const std::string want(1, static_cast<char>(order[i]));
    if (v.tokens[i] == want) continue;
    if (v.tokens[i] != kReplacement) {
      return InvalidArgumentError(in.name() + ": token " + std::to_string(i) +
                                  " should be the single byte " + std::to_string(order[i]) +
                                  " (GPT-2 byte order); this is not a Whisper vocabulary");
    }
    v.tokens[i] = want;
    ++v.restored_byte_tokens;
  }
  for (size_t i = 256; i < v.tokens.size(); ++i) {
    if (v.tokens[i].find(kReplacement) != std::string::npos) ++v.lossy_tokens;
  }
  return v;
}

Status WhisperGgmlToGguf(const WhisperGgmlFile& in, GgufWriter* out,
                         WhisperGgmlImportSummary* summary) {
  const WhisperHparams& hp = in.hparams();
  ASSIGN_OR_RETURN(WhisperSpecialTokens sp, WhisperSpecialTokens::ForVocabSize(hp.n_vocab));
  ASSIGN_OR_RETURN(WhisperGgmlVocab vocab, WhisperGgmlTextTokens(in));
  const int n_text = sp.n_text;
  WriteWhisperHparams(hp, *out);
  out->SetString("general.name", "whisper (ggml import)");
  out->SetString("tokenizer.ggml.model", "whisper");
  std::vector<std::string> pieces;
  pieces.reserve(static_cast<size_t>(n_text));
  for (int i = 0; i < n_text; ++i) {
    std::string s;
    for (char c : vocab.tokens[static_cast<size_t>(i)])
      s.append(ByteToBpeChar(static_cast<uint8_t>(c)));
    pieces.push_back(std::move(s));
  }
  out->SetStringArray("tokenizer.ggml.tokens", pieces);

  const int64_t mel_dims[2] = {in.n_fft_bins(), hp.n_mels};
  std::vector<uint8_t> mel_bytes(in.mel_filters().size() * sizeof(float));
  std::memcpy(mel_bytes.data(), in.mel_filters().data(), mel_bytes.size());
  RETURN_IF_ERROR(out->AddTensor("mel_filters", GgmlType::F32, mel_dims, std::move(mel_bytes)));

  const std::vector<std::string> expected = WhisperTensorNames(hp);
  const std::unordered_set<std::string> expected_set(expected.begin(), expected.end());
  WhisperGgmlImportSummary sum;
  sum.hparams = hp;
  sum.multilingual = sp.multilingual;
  sum.n_text_tokens = n_text;
  sum.restored_byte_tokens = vocab.restored_byte_tokens;
  sum.lossy_tokens = vocab.lossy_tokens;
  for (const WhisperGgmlTensor& t : in.tensors()) {
    std::vector<int64_t> dims(t.ne.begin(), t.ne.begin() + t.n_dims);
    const bool conv_bias = t.name == "encoder.conv1.bias" || t.name == "encoder.conv2.bias";
    if (conv_bias && dims.size() == 2 && dims[0] == 1) dims.erase(dims.begin());
    if (t.name == "mel_filters") {
      return InvalidArgumentError(in.name() +
                                  ": holds a tensor named 'mel_filters', which the "
                                  "GGUF reserves for the filterbank");
    }
    if (Status s = out->AddTensorView(t.name, t.type, dims, t.data); !s.ok()) {
      return s.WithContext(in.name() + ": tensor '" + t.name + "'");
    }
    ++sum.n_tensors;
    if (!expected_set.contains(t.name)) sum.extra_tensors.push_back(t.name);
  }
  for (const std::string& name : expected) {
    if (in.FindTensor(name) == nullptr) sum.missing_tensors.push_back(name);
  }
  if (summary != nullptr) *summary = std::move(sum);
  return Status::Ok();
}

Status ConvertWhisperGgml(const std::string& in_path, const std::string& out_path,
                          WhisperGgmlImportSummary* summary) {
  ASSIGN_OR_RETURN(std::unique_ptr<WhisperGgmlFile> in, WhisperGgmlFile::Open(in_path));
  GgufWriter w;
  RETURN_IF_ERROR(WhisperGgmlToGguf(*in, &w, summary));
  return w.WriteFile(out_path);
}

}  // namespace hotline::engine
