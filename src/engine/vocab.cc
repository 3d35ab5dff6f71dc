#include "engine/vocab.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

#include "engine/unicode.h"

namespace hotline::engine {
namespace {

struct ByteLevelTables {
  std::array<std::string, 256> to_char;
  std::array<char32_t, 256> to_cp{};
};

const ByteLevelTables& ByteLevel() {
  static const ByteLevelTables tables = [] {
    ByteLevelTables t;
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      t.to_cp[b] = printable ? static_cast<char32_t>(b) : static_cast<char32_t>(next++);
      AppendUtf8(t.to_cp[b], &t.to_char[b]);
    }
    return t;
  }();
  return tables;
}

Result<PreTokenizerKind> ParsePre(TokenizerModel model, const std::string& pre) {
  if (model == TokenizerModel::kSpm) {
    if (pre.empty() || pre == "default") return PreTokenizerKind::kNone;
    return InvalidArgumentError("tokenizer.ggml.pre '" + pre +
                                "' is not supported for a SentencePiece ('llama') vocabulary; "
                                "expected 'default'");
  }
  if (pre.empty() || pre == "default" || pre == "gpt-2" || pre == "gpt2") {
    return PreTokenizerKind::kGpt2;
  }
  if (pre == "llama3" || pre == "llama-bpe" || pre == "llama-v3") return PreTokenizerKind::kLlama3;
  if (pre == "qwen2") return PreTokenizerKind::kQwen2;
  return InvalidArgumentError("tokenizer.ggml.pre '" + pre +
                              "' is not supported; Hotline knows gpt-2, llama3 (llama-bpe) "
                              "and qwen2");
}

uint64_t HashText(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, then a final mix so low bits are usable
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

uint64_t HashKey(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb3fe1a85ec53ull;
  return k ^ (k >> 33);
}

// Smallest power of two >= 2n (load factor <= 1/2).
size_t TableSize(size_t n) {
  size_t size = 16;
  while (size < 2 * n) size <<= 1;
  return size;
}

uint64_t PairKey(TokenId a, TokenId b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

}  // namespace

std::string_view ByteToBpeChar(uint8_t byte) { return ByteLevel().to_char[byte]; }

int BpeCharToByte(char32_t cp) {
  if (cp < 256) {
    const bool printable =
        (cp >= 0x21 && cp <= 0x7E) || (cp >= 0xA1 && cp <= 0xAC) || cp >= 0xAE;
    return printable ? static_cast<int>(cp) : -1;
  }
  if (cp >= 256 + 68) return -1;  // 68 bytes are remapped, to U+0100..U+0143
  static const std::array<int, 68> inverse = [] {
    std::array<int, 68> inv{};
    const auto& t = ByteLevel();
    for (int b = 0; b < 256; ++b) {
      if (t.to_cp[b] >= 256) inv[t.to_cp[b] - 256] = b;
    }
    return inv;
  }();
  return inverse[cp - 256];
}

Result<std::shared_ptr<const Vocabulary>> Vocabulary::Create(VocabData data) {
  std::shared_ptr<Vocabulary> v(new Vocabulary());
  RETURN_IF_ERROR(v->Build(data));
  return std::shared_ptr<const Vocabulary>(std::move(v));
}

Status Vocabulary::Build(VocabData& data) {
  if (data.model == "llama") {
    model_ = TokenizerModel::kSpm;
  } else if (data.model == "gpt2") {
    model_ = TokenizerModel::kBpe;
  } else {
    return UnimplementedError("tokenizer.ggml.model '" + data.model +
                              "' is not supported; Hotline reads 'llama' (SentencePiece) and "
                              "'gpt2' (byte-level BPE) vocabularies");
  }
  ASSIGN_OR_RETURN(pre_, ParsePre(model_, data.pre));
  RETURN_IF_ERROR(StoreTokens(data));
  IndexTexts();
  RETURN_IF_ERROR(SetSpecialIds(data));
  FindByteTokens(!data.token_types.empty());
  if (model_ == TokenizerModel::kBpe) RETURN_IF_ERROR(IndexMerges(data.merges));
  CollectSpecialTokens();
  chat_template_ = std::move(data.chat_template);
  return Status::Ok();
}

// The token texts into one arena, the scores and the types, each checked against the bounds.
Status Vocabulary::StoreTokens(VocabData& data) {
  const size_t n = data.tokens.size();
  if (n == 0) return InvalidArgumentError("the vocabulary has no tokens (tokenizer.ggml.tokens)");
  if (n > kMaxTokens) {
    return InvalidArgumentError("the vocabulary has " + std::to_string(n) +
                                " tokens; at most " + std::to_string(kMaxTokens) +
                                " are accepted");
  }
  if (!data.scores.empty() && data.scores.size() != n) {
    return InvalidArgumentError("tokenizer.ggml.scores has " + std::to_string(data.scores.size()) +
                                " entries for " + std::to_string(n) + " tokens");
  }
  if (!data.token_types.empty() && data.token_types.size() != n) {
    return InvalidArgumentError("tokenizer.ggml.token_type has " +
                                std::to_string(data.token_types.size()) + " entries for " +
                                std::to_string(n) + " tokens");
  }
  size_t total = 0;
  for (const auto& t : data.tokens) {
    if (t.size() > kMaxTokenBytes) {
      return InvalidArgumentError("a token is " + std::to_string(t.size()) +
                                  " bytes long; tokens are limited to " +
                                  std::to_string(kMaxTokenBytes));
    }
    total += t.size();
  }
  if (total > UINT32_MAX) {
    return InvalidArgumentError("the vocabulary's token texts total " + std::to_string(total) +
                                " bytes; at most 4 GiB are accepted");
  }
  arena_.reserve(total);
  offsets_.reserve(n + 1);
  offsets_.push_back(0);
  for (const auto& t : data.tokens) {
    arena_.insert(arena_.end(), t.begin(), t.end());
    offsets_.push_back(static_cast<uint32_t>(arena_.size()));
  }
  scores_ = std::move(data.scores);
  types_.assign(n, TokenType::kNormal);
  for (size_t i = 0; i < data.token_types.size(); ++i) {
    const int32_t t = data.token_types[i];
    if (t < 0 || t > static_cast<int32_t>(TokenType::kByte)) {
      return InvalidArgumentError("token " + std::to_string(i) + " has token type " +
                                  std::to_string(t) + "; valid types are 0..6");
    }
    types_[i] = static_cast<TokenType>(t);
  }
  return Status::Ok();
}

// The open-addressing index of token ids by text (Find).
void Vocabulary::IndexTexts() {
  const size_t n = types_.size();
  text_slots_.assign(TableSize(n), kNoToken);
  const size_t mask = text_slots_.size() - 1;
  for (size_t i = 0; i < n; ++i) {
    const auto id = static_cast<TokenId>(i);
    const std::string_view text = Text(id);
    size_t slot = HashText(text) & mask;
    bool duplicate = false;
    while (text_slots_[slot] != kNoToken) {
      // First id wins for duplicate texts, as in the reference tokenizers' vocab maps.
      if (Text(text_slots_[slot]) == text) {
        duplicate = true;
        break;
      }
      slot = (slot + 1) & mask;
    }
    if (!duplicate) text_slots_[slot] = id;
  }
}

// BOS, EOS, UNK, PAD and EOT ids (EOT found by name when the file names none), and whether
// encoding adds BOS, EOS and a leading space.
Status Vocabulary::SetSpecialIds(const VocabData& data) {
  const size_t n = types_.size();
  auto check_id = [&](TokenId id, const char* key) -> Status {
    if (id != kNoToken && (id < 0 || static_cast<size_t>(id) >= n)) {
      return InvalidArgumentError(std::string(key) + " is " + std::to_string(id) +
                                  ", outside the vocabulary of " + std::to_string(n) +
                                  " tokens");
    }
    return Status::Ok();
  };
  RETURN_IF_ERROR(check_id(data.bos_id, "tokenizer.ggml.bos_token_id"));
  RETURN_IF_ERROR(check_id(data.eos_id, "tokenizer.ggml.eos_token_id"));
  RETURN_IF_ERROR(check_id(data.unk_id, "tokenizer.ggml.unknown_token_id"));
  RETURN_IF_ERROR(check_id(data.pad_id, "tokenizer.ggml.padding_token_id"));
  RETURN_IF_ERROR(check_id(data.eot_id, "tokenizer.ggml.eot_token_id"));
  bos_id_ = data.bos_id;
  eos_id_ = data.eos_id;
  unk_id_ = data.unk_id;
  pad_id_ = data.pad_id;
  eot_id_ = data.eot_id;
  if (eot_id_ == kNoToken) {
    for (std::string_view name : {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>"}) {
      const TokenId id = Find(name);
      if (id != kNoToken && types_[id] != TokenType::kNormal) {
        eot_id_ = id;
        break;
      }
    }
  }
  const bool spm = model_ == TokenizerModel::kSpm;
  add_bos_ = data.add_bos.value_or(spm || pre_ == PreTokenizerKind::kLlama3);
  add_eos_ = data.add_eos.value_or(false);
  add_space_prefix_ = data.add_space_prefix.value_or(spm);
  if (add_bos_ && bos_id_ == kNoToken) {
    return InvalidArgumentError(
        "the vocabulary asks for a BOS token (tokenizer.ggml.add_bos_token) but has no "
        "tokenizer.ggml.bos_token_id");
  }
  if (add_eos_ && eos_id_ == kNoToken) {
    return InvalidArgumentError(
        "the vocabulary asks for an EOS token (tokenizer.ggml.add_eos_token) but has no "
        "tokenizer.ggml.eos_token_id");
  }
  return Status::Ok();
}

// Each byte's token: "<0xAB>" (or the byte itself) in SentencePiece, the byte-level character in
// BPE. SentencePiece byte tokens get the byte type when the file gives no types.
void Vocabulary::FindByteTokens(bool types_given) {
  const bool spm = model_ == TokenizerModel::kSpm;
  byte_tokens_.fill(kNoToken);
  for (int b = 0; b < 256; ++b) {
    if (spm) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      TokenId id = Find(name);
      if (id == kNoToken) id = Find(std::string_view(reinterpret_cast<const char*>(&b), 1));
      byte_tokens_[b] = id;
    } else {
      byte_tokens_[b] = Find(ByteToBpeChar(static_cast<uint8_t>(b)));
    }
  }
  if (spm && !types_given) {
    for (int b = 0; b < 256; ++b) {
      const TokenId id = byte_tokens_[b];
      if (id != kNoToken && Text(id).size() == 6) types_[id] = TokenType::kByte;
    }
  }
}

// The BPE merge ranks: by token-id pair when both halves are tokens, else by text.
Status Vocabulary::IndexMerges(const std::vector<std::string>& merges) {
  if (merges.empty()) {
    return InvalidArgumentError("a byte-level BPE ('gpt2') vocabulary needs tokenizer.ggml.merges");
  }
  merge_slots_.assign(TableSize(merges.size()), MergeSlot{});
  for (size_t r = 0; r < merges.size(); ++r) {
    const std::string& m = merges[r];
    // Halves never contain a space (byte-level text encodes it as U+0120); split at the first.
    const size_t sp = m.find(' ', 1);
    if (sp == std::string::npos || sp + 1 >= m.size()) {
      return InvalidArgumentError("tokenizer.ggml.merges[" + std::to_string(r) + "] '" +
                                  m.substr(0, 64) + "' is not two pieces separated by a space");
    }
    std::string_view left(m.data(), sp);
    std::string_view right(m.data() + sp + 1, m.size() - sp - 1);
    const TokenId l = Find(left);
    const TokenId rt = Find(right);
    const auto rank = static_cast<int32_t>(r);
    if (l != kNoToken && rt != kNoToken) {
      const uint64_t key = PairKey(l, rt);
      const size_t mask = merge_slots_.size() - 1;
      size_t slot = HashKey(key) & mask;
      while (merge_slots_[slot].key != MergeSlot{}.key && merge_slots_[slot].key != key) {
        slot = (slot + 1) & mask;
      }
      // First (best) rank wins for duplicates.
      if (merge_slots_[slot].key != key) merge_slots_[slot] = {key, rank};
    } else {
      text_merges_.emplace(m, rank);
    }
  }
  return Status::Ok();
}

// Special tokens, longest first (ties by id for determinism), and the tokens that end a
// generation (EOS, EOT and the usual end-of-turn controls).
void Vocabulary::CollectSpecialTokens() {
  for (size_t i = 0; i < types_.size(); ++i) {
    const TokenType t = types_[i];
    if ((t == TokenType::kControl || t == TokenType::kUnknown || t == TokenType::kUserDefined) &&
        offsets_[i + 1] > offsets_[i]) {
      special_tokens_.push_back(static_cast<TokenId>(i));
    }
  }
  std::sort(special_tokens_.begin(), special_tokens_.end(), [&](TokenId a, TokenId b) {
    const size_t la = Text(a).size();
    const size_t lb = Text(b).size();
    return la != lb ? la > lb : a < b;
  });
  for (TokenId id : {eos_id_, eot_id_}) {
    if (id != kNoToken) end_of_generation_.push_back(id);
  }
  for (std::string_view name :
       {"<|eot_id|>", "<|eom_id|>", "<|im_end|>", "<|end|>", "<|endoftext|>", "<end_of_turn>"}) {
    const TokenId id = Find(name);
    if (id != kNoToken && types_[id] == TokenType::kControl) end_of_generation_.push_back(id);
  }
  std::sort(end_of_generation_.begin(), end_of_generation_.end());
  end_of_generation_.erase(std::unique(end_of_generation_.begin(), end_of_generation_.end()),
                           end_of_generation_.end());
}

TokenId Vocabulary::Find(std::string_view text) const {
  if (text_slots_.empty()) return kNoToken;
  const size_t mask = text_slots_.size() - 1;
  for (size_t slot = HashText(text) & mask;; slot = (slot + 1) & mask) {
    const TokenId id = text_slots_[slot];
    if (id == kNoToken || Text(id) == text) return id;
  }
}

int32_t Vocabulary::MergeRank(TokenId left, TokenId right) const {
  if (merge_slots_.empty()) return -1;
  const uint64_t key = PairKey(left, right);
  const size_t mask = merge_slots_.size() - 1;
  for (size_t slot = HashKey(key) & mask;; slot = (slot + 1) & mask) {
    const MergeSlot& m = merge_slots_[slot];
    if (m.key == key) return m.rank;
    if (m.key == MergeSlot{}.key) return -1;
  }
}

int32_t Vocabulary::MergeRankByText(std::string_view left, std::string_view right) const {
  if (text_merges_.empty()) return -1;
  std::string key;
  key.reserve(left.size() + right.size() + 1);
  key.append(left).append(1, ' ').append(right);
  auto it = text_merges_.find(key);
  return it == text_merges_.end() ? -1 : it->second;
}

int Vocabulary::ByteValue(TokenId id) const {
  if (!IsValid(id)) return -1;
  const std::string_view t = Text(id);
  if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') return -1;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = hex(t[3]);
  const int lo = hex(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

bool Vocabulary::IsEndOfGeneration(TokenId id) const {
  return std::binary_search(end_of_generation_.begin(), end_of_generation_.end(), id);
}

}  // namespace hotline::engine
