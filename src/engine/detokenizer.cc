#include "engine/detokenizer.h"

#include "engine/unicode.h"

namespace hotline::engine {

StreamingDetokenizer::StreamingDetokenizer(const Tokenizer& tokenizer,
                                           const DecodeOptions& options)
    : tokenizer_(tokenizer),
      options_(options),
      strip_next_space_(options.strip_leading_space && tokenizer.vocab().add_space_prefix()) {}

void StreamingDetokenizer::Push(TokenId id, std::string* out) {
  std::string_view piece = tokenizer_.Piece(id, options_.render_special);
  if (piece.empty()) return;
  if (strip_next_space_) {
    // Same rule as Tokenizer::Decode: the first text after the start (or a BOS) loses the space
    // SentencePiece's dummy prefix put there.
    if (piece[0] == ' ' && tokenizer_.vocab().Type(id) != TokenType::kControl) {
      piece.remove_prefix(1);
    }
    strip_next_space_ = false;
  }
  if (pending_.empty()) {
    const size_t complete = CompleteUtf8Prefix(piece);
    AppendSanitizedUtf8(piece.substr(0, complete), out);
    pending_.assign(piece.substr(complete));
    return;
  }
  pending_.append(piece);
  const size_t complete = CompleteUtf8Prefix(pending_);
  AppendSanitizedUtf8(std::string_view(pending_).substr(0, complete), out);
  pending_.erase(0, complete);
}

void StreamingDetokenizer::Finish(std::string* out) {
  AppendSanitizedUtf8(pending_, out);
  pending_.clear();
  strip_next_space_ = options_.strip_leading_space && tokenizer_.vocab().add_space_prefix();
}

}  // namespace hotline::engine
