// Tokenizer: text <-> token ids for a model's Vocabulary (SentencePiece "llama" or byte-level
// BPE "gpt2"), with special tokens, BOS/EOS and whole-text decoding. Streaming decoding is in
// engine/detokenizer.h, chat prompts in engine/chat_template.h.
//
// Encoding runs in two stages, as the reference implementation (llama.cpp) does:
//   1. Special tokens are cut out of the text as whole strings. User-defined tokens are always
//      matched; control and unknown tokens only when `parse_special` is set (or, for a chat
//      prompt, only inside the template's own text — never inside message content, so a caller
//      cannot inject "<|im_end|>"). At each position the longest matching token wins.
//   2. Each remaining run of text goes through the model's algorithm (spm.h / bpe.h). For SPM
//      with add_space_prefix, a run at the start or right after a special token gets a leading
//      space (SentencePiece's dummy prefix).
//
// Ownership and threads: a Tokenizer shares its Vocabulary (shared_ptr) and is immutable after
// Create(); Encode/Decode are const and safe from any number of threads. Encoding allocates
// O(text) scratch per call; decoding reads pieces precomputed at Create().
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "engine/bpe.h"
#include "engine/spm.h"
#include "engine/vocab.h"

namespace hotline::engine {

struct TokenizerConfig {
  // "auto" follows the file's tokenizer.ggml.add_bos_token; "true"/"false" override a file
  // whose flag is wrong. A missing BOS degrades most models badly; a doubled one slightly.
  std::string add_bos = "auto";
  // Parse control tokens ("<|im_start|>") written in raw prompts (`engine run -p`, the API's
  // completion endpoint). On lets power users write templates by hand; off makes every prompt
  // plain text. Chat messages are never parsed, whatever this says.
  bool parse_special = true;

  template <class V>
  void Visit(V& v) {
    v.Field("add_bos", add_bos, "Add BOS before a prompt: auto (as the model file says), true, false");
    v.Field("parse_special", parse_special,
            "Recognize control tokens like <|im_start|> written in raw prompts");
  }
  Status Validate() const;
};

struct EncodeOptions {
  // Add BOS/EOS as the vocabulary asks (add_bos_token / add_eos_token). `--no-bos` clears it.
  bool add_special = true;
  // Match control and unknown tokens written in the text.
  bool parse_special = false;
};

struct DecodeOptions {
  // Render control tokens (BOS, <|im_end|>, ...) as their text; otherwise they decode to "".
  bool render_special = false;
  // SPM with add_space_prefix: drop the space the encoder put before the first word. Set when
  // decoding from the start of a sequence; clear when continuing after a prompt.
  bool strip_leading_space = true;
};

// A run of prompt text; `trusted` runs may contain control tokens (template markup), others are
// always plain text (message content).
struct PromptSegment {
  std::string text;
  bool trusted = false;
};

class Tokenizer {
 public:
  static Result<std::shared_ptr<const Tokenizer>> Create(std::shared_ptr<const Vocabulary> vocab,
                                                         const TokenizerConfig& config = {});

  const Vocabulary& vocab() const { return *vocab_; }
  const std::shared_ptr<const Vocabulary>& shared_vocab() const { return vocab_; }
  // Whether Encode() with add_special puts BOS first (vocabulary flag or config override).
  bool adds_bos() const { return add_bos_; }

  std::vector<TokenId> Encode(std::string_view text, const EncodeOptions& options = {}) const;
  // Appends to *out.
  void Encode(std::string_view text, const EncodeOptions& options, std::vector<TokenId>* out) const;
  // A prompt made of trusted template text and untrusted content: the concatenated text is
  // tokenized as one string, but control tokens are matched only inside trusted segments.
  std::vector<TokenId> EncodePrompt(std::span<const PromptSegment> segments,
                                    bool add_special = true) const;

  // The bytes a token stands for (possibly part of a UTF-8 character). Control/unknown tokens
  // give "" unless `render_special`. Invalid ids give "".
  std::string_view Piece(TokenId id, bool render_special = false) const;
  // Whole-sequence decoding; malformed UTF-8 (cut characters) becomes U+FFFD.
  std::string Decode(std::span<const TokenId> ids, const DecodeOptions& options = {}) const;

 private:
  Tokenizer() = default;
  // Control tokens may start only where `allowed` says (nullptr = everywhere when
  // parse_special, nowhere otherwise).
  struct Range {
    size_t begin;
    size_t end;
  };
  void EncodeImpl(std::string_view text, bool add_special, bool parse_special,
                  std::span<const Range> trusted, std::vector<TokenId>* out) const;
  void EncodeRaw(std::string_view text, bool after_special, std::vector<TokenId>* out) const;

  std::shared_ptr<const Vocabulary> vocab_;
  bool add_bos_ = false;
  std::unique_ptr<SpmTokenizer> spm_;
  std::unique_ptr<BpeTokenizer> bpe_;
  // Special tokens by first byte, longest first.
  std::vector<std::vector<TokenId>> specials_by_byte_;
  // Decoded pieces of every token (specials: their text), back to back.
  std::string pieces_;
  std::vector<uint32_t> piece_offsets_;
};

}  // namespace hotline::engine
