// Vocabulary: the token table of a model, as stored in a GGUF file's tokenizer.ggml.* metadata,
// with the look-up structures the tokenizers need (text -> id, BPE merge ranks, byte tokens,
// special tokens), built once at load.
//
// Two tokenizer models are supported:
//   "llama" (SentencePiece-style, scores + byte fallback <0xNN>)   -> TokenizerModel::kSpm
//   "gpt2"  (byte-level BPE with merges, a regex pre-tokenizer)     -> TokenizerModel::kBpe
// Pre-tokenizer names (tokenizer.ggml.pre) for BPE: "gpt-2"/"default" (GPT-2 regex),
// "llama3"/"llama-bpe"/"llama-v3" (Llama-3 regex), "qwen2" (Qwen2 regex).
//
// Ownership and threads: a Vocabulary is immutable once built and is shared (shared_ptr<const>)
// by every tokenizer and detokenizer of a model; all methods are const and thread-safe.
// Loading is O(tokens + merges) with hash maps reserved up front (a 150k-token vocabulary loads
// in tens of milliseconds).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"

namespace hotline::engine {

class GgufFile;

using TokenId = int32_t;
inline constexpr TokenId kNoToken = -1;

enum class TokenizerModel : uint8_t { kSpm, kBpe };

enum class PreTokenizerKind : uint8_t {
  kNone,    // SentencePiece: no split, whitespace is part of the pieces
  kGpt2,    // 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
  kLlama3,  // (?i:'s|...)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|...
  kQwen2,   // as kLlama3 with \p{N} (one digit per piece)
};

// tokenizer.ggml.token_type values (on-disk numbers; never renumber).
enum class TokenType : uint8_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

// Plain description of a vocabulary: what a GGUF file's metadata holds. Used to build one by
// hand (tests, importers) and as the intermediate form of FromGguf().
struct VocabData {
  std::string model = "llama";  // tokenizer.ggml.model: "llama" or "gpt2"
  std::string pre;              // tokenizer.ggml.pre; empty = the model's default
  std::vector<std::string> tokens;
  std::vector<float> scores;        // empty = all 0 (SPM merges by score)
  std::vector<int32_t> token_types;  // empty = all normal (except <0xNN> byte pieces in SPM)
  std::vector<std::string> merges;  // "left right", highest priority first (BPE only)
  TokenId bos_id = kNoToken;
  TokenId eos_id = kNoToken;
  TokenId unk_id = kNoToken;
  TokenId pad_id = kNoToken;
  TokenId eot_id = kNoToken;  // end of turn (<|eot_id|>, <|im_end|>); found by name when unset
  std::optional<bool> add_bos;           // default: true for SPM and Llama-3, false otherwise
  std::optional<bool> add_eos;           // default: false
  std::optional<bool> add_space_prefix;  // default: true for SPM, false for BPE
  std::string chat_template;             // tokenizer.chat_template (Jinja source), may be empty
};

class Vocabulary {
 public:
  // Largest vocabulary accepted (real ones are <= 256k); bounds allocations on hostile files.
  static constexpr size_t kMaxTokens = 1 << 22;
  static constexpr size_t kMaxTokenBytes = 1 << 16;

  // Validates `data` (ids in range, array lengths equal, merges well-formed, known model and
  // pre-tokenizer) and builds the look-up tables. InvalidArgument names what to fix.
  static Result<std::shared_ptr<const Vocabulary>> Create(VocabData data);
  // Reads tokenizer.ggml.* and tokenizer.chat_template from a GGUF file.
  static Result<std::shared_ptr<const Vocabulary>> FromGguf(const GgufFile& file);
  // Only the metadata extraction of FromGguf().
  static Result<VocabData> ReadGgufMetadata(const GgufFile& file);

  TokenizerModel model() const { return model_; }
  PreTokenizerKind pre_tokenizer() const { return pre_; }
  size_t size() const { return offsets_.size() - 1; }
  bool IsValid(TokenId id) const { return id >= 0 && static_cast<size_t>(id) < size(); }

  // REQUIRES: IsValid(id).
  std::string_view Text(TokenId id) const {
    return std::string_view(arena_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]);
  }
  float Score(TokenId id) const { return scores_.empty() ? 0.0f : scores_[id]; }
  TokenType Type(TokenId id) const { return types_[id]; }
  // Control and unknown tokens: matched in input text only when parsing specials, and rendered
  // only on request when decoding.
  bool IsControl(TokenId id) const {
    return types_[id] == TokenType::kControl || types_[id] == TokenType::kUnknown;
  }

  // Exact text -> id (kNoToken when absent). For BPE the text is in byte-level encoding.
  TokenId Find(std::string_view text) const;

  // BPE: rank of merging `left` and `right` (lower merges first), or -1. Ids must be valid.
  int32_t MergeRank(TokenId left, TokenId right) const;
  // BPE: rank of a merge whose halves are not tokens themselves (rare), or -1.
  int32_t MergeRankByText(std::string_view left, std::string_view right) const;
  bool has_text_merges() const { return !text_merges_.empty(); }

  // SPM: the <0xNN> token of a byte (or the single-byte token, or unk), kNoToken if none.
  // BPE: the token of the byte's byte-level character.
  TokenId ByteToken(uint8_t byte) const { return byte_tokens_[byte]; }
  // SPM: the byte a kByte token stands for (parsed from "<0xNN>"), or -1.
  int ByteValue(TokenId id) const;

  // Tokens matched as whole strings in input text before the tokenizer model runs (control,
  // unknown and user-defined tokens with non-empty text), longest first.
  const std::vector<TokenId>& special_tokens() const { return special_tokens_; }

  TokenId bos_id() const { return bos_id_; }
  TokenId eos_id() const { return eos_id_; }
  TokenId eot_id() const { return eot_id_; }
  TokenId unk_id() const { return unk_id_; }
  TokenId pad_id() const { return pad_id_; }
  bool add_bos() const { return add_bos_; }
  bool add_eos() const { return add_eos_; }
  bool add_space_prefix() const { return add_space_prefix_; }
  // BPE Llama-3: a pre-tokenized word that is itself a token is not merged.
  bool ignore_merges() const { return pre_ == PreTokenizerKind::kLlama3; }
  const std::string& chat_template() const { return chat_template_; }

  // End of generation: eos, eot, and control tokens that end a turn in known chat formats.
  bool IsEndOfGeneration(TokenId id) const;

 private:
  Vocabulary() = default;
  // Build's steps, in order: the model and pre-tokenizer; the token texts, scores and types
  // (sizes checked); the text index; the special ids and the add-token flags; the byte tokens;
  // the merges (BPE only); the special tokens and the end-of-generation set.
  Status Build(VocabData& data);
  Status StoreTokens(VocabData& data);
  void IndexTexts();
  Status SetSpecialIds(const VocabData& data);
  void FindByteTokens(bool types_given);
  Status IndexMerges(const std::vector<std::string>& merges);
  void CollectSpecialTokens();

  TokenizerModel model_ = TokenizerModel::kSpm;
  PreTokenizerKind pre_ = PreTokenizerKind::kNone;
  std::vector<char> arena_;        // all token texts back to back
  std::vector<uint32_t> offsets_;  // size()+1 offsets into arena_
  std::vector<float> scores_;
  std::vector<TokenType> types_;
  // Open-addressing hash tables (power-of-two sizes, linear probing): node-based maps cost a
  // cache miss per probe, which dominated both loading and encoding.
  std::vector<TokenId> text_slots_;  // token ids by hash of their text; kNoToken = empty
  struct MergeSlot {
    uint64_t key = ~uint64_t{0};  // (left << 32 | right); all ones = empty
    int32_t rank = -1;
  };
  std::vector<MergeSlot> merge_slots_;
  std::unordered_map<std::string, int32_t> text_merges_;   // "left right" -> rank
  std::array<TokenId, 256> byte_tokens_{};
  std::vector<TokenId> special_tokens_;
  std::vector<TokenId> end_of_generation_;
  TokenId bos_id_ = kNoToken;
  TokenId eos_id_ = kNoToken;
  TokenId eot_id_ = kNoToken;
  TokenId unk_id_ = kNoToken;
  TokenId pad_id_ = kNoToken;
  bool add_bos_ = false;
  bool add_eos_ = false;
  bool add_space_prefix_ = false;
  std::string chat_template_;
};

// GPT-2 byte-level encoding: each byte maps to one printable code point (printable Latin-1 bytes
// to themselves, the rest to U+0100 + n). Returns the UTF-8 of the byte's code point.
std::string_view ByteToBpeChar(uint8_t byte);
// Inverse of ByteToBpeChar for one code point, or -1 when `cp` is not a byte-level character.
int BpeCharToByte(char32_t cp);

}  // namespace hotline::engine
