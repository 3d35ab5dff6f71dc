#include "engine/tokenizer.h"

#include <cstring>

#include "engine/unicode.h"

namespace hotline::engine {
namespace {

// The bytes a normal token stands for.
std::string NormalPiece(const Vocabulary& vocab, TokenId id) {
  const std::string_view text = vocab.Text(id);
  std::string out;
  out.reserve(text.size());
  if (vocab.model() == TokenizerModel::kSpm) {
    for (size_t pos = 0; pos < text.size();) {
      if (text.compare(pos, kSpmSpace.size(), kSpmSpace) == 0) {
        out.push_back(' ');
        pos += kSpmSpace.size();
      } else {
        out.push_back(text[pos++]);
      }
    }
    return out;
  }
  // Byte-level BPE: each character stands for one byte; anything else is kept as written.
  for (size_t pos = 0; pos < text.size();) {
    const size_t start = pos;
    const char32_t cp = DecodeUtf8(text, &pos);
    const int byte = BpeCharToByte(cp);
    if (byte >= 0) {
      out.push_back(static_cast<char>(byte));
    } else {
      out.append(text.substr(start, pos - start));
    }
  }
  return out;
}

}  // namespace

Status TokenizerConfig::Validate() const {
  if (add_bos != "auto" && add_bos != "true" && add_bos != "false") {
    return InvalidArgumentError("add_bos must be auto, true or false, got '" + add_bos + "'");
  }
  return Status::Ok();
}

Result<std::shared_ptr<const Tokenizer>> Tokenizer::Create(std::shared_ptr<const Vocabulary> vocab,
                                                           const TokenizerConfig& config) {
  if (vocab == nullptr) return InvalidArgumentError("Tokenizer::Create needs a vocabulary");
  RETURN_IF_ERROR(config.Validate());
  std::shared_ptr<Tokenizer> t(new Tokenizer());
  t->vocab_ = std::move(vocab);
  const Vocabulary& v = *t->vocab_;
  t->add_bos_ = config.add_bos == "auto" ? v.add_bos() : config.add_bos == "true";
  if (t->add_bos_ && v.bos_id() == kNoToken) {
    return InvalidArgumentError("tokenizer add_bos is true but the vocabulary has no BOS token");
  }
  if (v.model() == TokenizerModel::kSpm) {
    t->spm_ = std::make_unique<SpmTokenizer>(v);
  } else {
    t->bpe_ = std::make_unique<BpeTokenizer>(v);
  }
  t->specials_by_byte_.resize(256);
  for (TokenId id : v.special_tokens()) {  // already longest first
    t->specials_by_byte_[static_cast<uint8_t>(v.Text(id)[0])].push_back(id);
  }
  t->piece_offsets_.reserve(v.size() + 1);
  t->piece_offsets_.push_back(0);
  for (size_t i = 0; i < v.size(); ++i) {
    const auto id = static_cast<TokenId>(i);
    switch (v.Type(id)) {
      case TokenType::kControl:
      case TokenType::kUnknown:
      case TokenType::kUserDefined:
        t->pieces_.append(v.Text(id));
        break;
      case TokenType::kByte: {
        const int b = v.model() == TokenizerModel::kSpm ? v.ByteValue(id) : -1;
        if (b >= 0) {
          t->pieces_.push_back(static_cast<char>(b));
        } else {
          t->pieces_.append(NormalPiece(v, id));
        }
        break;
      }
      default:
        t->pieces_.append(NormalPiece(v, id));
        break;
    }
    t->piece_offsets_.push_back(static_cast<uint32_t>(t->pieces_.size()));
  }
  return std::shared_ptr<const Tokenizer>(std::move(t));
}

std::vector<TokenId> Tokenizer::Encode(std::string_view text, const EncodeOptions& options) const {
  std::vector<TokenId> out;
  Encode(text, options, &out);
  return out;
}

void Tokenizer::Encode(std::string_view text, const EncodeOptions& options,
                       std::vector<TokenId>* out) const {
  EncodeImpl(text, options.add_special, options.parse_special, {}, out);
}

std::vector<TokenId> Tokenizer::EncodePrompt(std::span<const PromptSegment> segments,
                                             bool add_special) const {
  std::string text;
  std::vector<Range> trusted;
  for (const PromptSegment& s : segments) {
    if (s.trusted && !s.text.empty()) trusted.push_back({text.size(), text.size() + s.text.size()});
    text += s.text;
  }
  std::vector<TokenId> out;
  // An empty trusted list would mean "everywhere"; a sentinel range means "nowhere".
  if (trusted.empty()) trusted.push_back({0, 0});
  EncodeImpl(text, add_special, /*parse_special=*/true, trusted, &out);
  return out;
}

void Tokenizer::EncodeRaw(std::string_view text, bool after_special,
                          std::vector<TokenId>* out) const {
  if (text.empty()) return;
  if (spm_) {
    spm_->Encode(text, vocab_->add_space_prefix() && after_special, out);
  } else {
    bpe_->Encode(text, out);
  }
}

void Tokenizer::EncodeImpl(std::string_view text, bool add_special, bool parse_special,
                           std::span<const Range> trusted, std::vector<TokenId>* out) const {
  const Vocabulary& v = *vocab_;
  if (add_special && add_bos_) out->push_back(v.bos_id());

  size_t range = 0;  // first trusted range that may still contain `pos`
  auto control_allowed = [&](size_t begin, size_t end) {
    if (!parse_special) return false;
    if (trusted.empty()) return true;
    while (range < trusted.size() && trusted[range].end <= begin) ++range;
    return range < trusted.size() && trusted[range].begin <= begin && end <= trusted[range].end;
  };

  bool after_special = true;  // the text's start counts as "after a special" (dummy prefix)
  size_t fragment = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const auto& candidates = specials_by_byte_[static_cast<uint8_t>(text[pos])];
    TokenId match = kNoToken;
    size_t match_len = 0;
    for (TokenId id : candidates) {
      const std::string_view t = v.Text(id);
      if (t.size() > text.size() - pos || std::memcmp(text.data() + pos, t.data(), t.size()) != 0) {
        continue;
      }
      if (v.IsControl(id) && !control_allowed(pos, pos + t.size())) continue;
      match = id;
      match_len = t.size();
      break;
    }
    if (match == kNoToken) {
      ++pos;
      continue;
    }
    if (pos > fragment) {
      EncodeRaw(text.substr(fragment, pos - fragment), after_special, out);
    }
    out->push_back(match);
    after_special = true;
    pos += match_len;
    fragment = pos;
  }
  if (text.size() > fragment) EncodeRaw(text.substr(fragment), after_special, out);

  if (add_special && v.add_eos()) out->push_back(v.eos_id());
}

std::string_view Tokenizer::Piece(TokenId id, bool render_special) const {
  if (!vocab_->IsValid(id)) return {};
  if (!render_special && vocab_->IsControl(id)) return {};
  return std::string_view(pieces_.data() + piece_offsets_[id],
                          piece_offsets_[id + 1] - piece_offsets_[id]);
}

std::string Tokenizer::Decode(std::span<const TokenId> ids, const DecodeOptions& options) const {
  std::string bytes;
  bool strip = options.strip_leading_space && vocab_->add_space_prefix();
  for (TokenId id : ids) {
    std::string_view piece = Piece(id, options.render_special);
    if (piece.empty()) continue;
    if (strip) {
      // Only a normal token's space came from the dummy prefix.
      if (piece[0] == ' ' && vocab_->Type(id) != TokenType::kControl) piece.remove_prefix(1);
      strip = false;
    }
    bytes.append(piece);
  }
  return SanitizeUtf8(bytes);
}

}  // namespace hotline::engine
