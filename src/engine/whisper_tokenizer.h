// Whisper's tokenizer: GPT-2 byte-level BPE over the text tokens, plus special tokens whose ids
// follow from the vocabulary size.
//
// Ids (openai/whisper whisper/tokenizer.py get_encoding(): the specials are appended after the
// tiktoken ranks in this order; whisper.cpp's whisper_vocab uses the same numbers):
//   English-only (n_vocab < 51865, gpt2.tiktoken: 50256 text tokens):
//     <|endoftext|> 50256, <|startoftranscript|> 50257, 99 language tokens 50258..50356,
//     <|translate|> 50357, <|transcribe|> 50358, <|startoflm|> 50359, <|startofprev|> 50360,
//     <|nospeech|> 50361, <|notimestamps|> 50362, <|0.00|> 50363 .. <|30.00|> 51863 (n_vocab
//     51864).
//   Multilingual (n_vocab >= 51865, multilingual.tiktoken: 50257 text tokens): every id one higher
//     (eot 50257, sot 50258, languages from 50259), with 99 languages for n_vocab 51865 and 100
//     (the 100th is "yue", Cantonese, added for large-v3) for 51866.
//   In general: n_languages = n_vocab - n_text - 1509 (2 + 6 specials and 1501 timestamps).
// Timestamps are 0.02 s apart: <|i*0.02|> printed with two decimals.
//
// Encoding (tiktoken): the text is split with GPT-2's regex (engine/pretokenize.h, kGpt2); a
// piece that is a token is emitted whole; otherwise its bytes are merged pairwise, always merging
// the adjacent pair whose concatenation has the lowest rank (leftmost on ties), until no
// concatenation is a token. Whisper's vocabulary is a tiktoken ranks file, so rank == id. Special
// tokens are never produced from text ("<|en|>" in input encodes as ordinary text).
//
// Ownership and threads: immutable after Create; every method is const and thread-safe. Encode
// allocates scratch proportional to the text per call.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "engine/gguf.h"
#include "engine/vocab.h"

namespace hotline::engine {

inline constexpr int kWhisperTimestampCount = 1501;  // <|0.00|> .. <|30.00|>
inline constexpr double kWhisperTimestampSeconds = 0.02;

// Language codes in Whisper's order (the 100th, "yue", exists only in 51866-token models).
std::span<const std::string_view> WhisperLanguageCodes();

struct WhisperSpecialTokens {
  int n_vocab = 0;
  bool multilingual = false;
  int n_text = 0;  // text tokens: ids 0 .. n_text-1 (50256 English-only, 50257 multilingual)
  int n_languages = 0;
  TokenId eot = kNoToken;             // <|endoftext|> (== n_text)
  TokenId sot = kNoToken;             // <|startoftranscript|>
  TokenId first_language = kNoToken;  // <|en|>; language i is first_language + i
  TokenId translate = kNoToken;
  TokenId transcribe = kNoToken;
  TokenId start_of_lm = kNoToken;
  TokenId start_of_prev = kNoToken;
  TokenId no_speech = kNoToken;
  TokenId no_timestamps = kNoToken;
  TokenId timestamp_begin = kNoToken;  // <|0.00|>; the last timestamp is n_vocab - 1

  // InvalidArgument when n_vocab leaves no room for the specials or implies more languages than
  // Whisper knows (n_languages must be 1..100).
  static Result<WhisperSpecialTokens> ForVocabSize(int n_vocab);
};

enum class WhisperTask : uint8_t { kTranscribe, kTranslate };

struct WhisperPromptOptions {
  // Language code ("en", "zh", ...). Multilingual models: empty = "en" (what Whisper's
  // get_tokenizer defaults to); English-only models: must be empty or "en" (no token is added).
  std::string language;
  WhisperTask task = WhisperTask::kTranscribe;  // English-only models: must be kTranscribe
  bool timestamps = false;                      // false appends <|notimestamps|>
  // Text tokens of earlier context: <|startofprev|> + the last `max_previous` of them go first.
  std::vector<TokenId> previous;
  int max_previous = 223;  // Whisper: n_text_ctx / 2 - 1
};

enum class WhisperSpecialRendering : uint8_t {
  kSkip,            // text only (Whisper's decode())
  kTimestampsOnly,  // text and "<|1.24|>" (decode_with_timestamps() without the other specials)
  kAll,             // every special by name (decode_with_timestamps())
};

class WhisperTokenizer {
 public:
  // `text_tokens`: raw bytes of ids 0.. (at least specials.n_text of them; extra entries, such as
  // the "<|endoftext|>" an English-only `.bin` lists at 50256, are ignored).
  static Result<std::unique_ptr<const WhisperTokenizer>> Create(
      std::span<const std::string> text_tokens, int n_vocab);
  // From a Whisper GGUF: whisper.vocab_size and tokenizer.ggml.tokens (GPT-2 byte-to-unicode
  // form), with tokenizer.ggml.model == "whisper".
  static Result<std::unique_ptr<const WhisperTokenizer>> FromGguf(const GgufFile& file);

  const WhisperSpecialTokens& special() const { return sp_; }
  int n_vocab() const { return sp_.n_vocab; }
  bool multilingual() const { return sp_.multilingual; }

  bool IsText(TokenId id) const { return id >= 0 && id < sp_.n_text; }
  bool IsSpecial(TokenId id) const { return id >= sp_.eot && id < sp_.n_vocab; }
  bool IsTimestamp(TokenId id) const { return id >= sp_.timestamp_begin && id < sp_.n_vocab; }
  // Seconds of a timestamp token (REQUIRES: IsTimestamp(id)).
  double TimestampSeconds(TokenId id) const {
    return (id - sp_.timestamp_begin) * kWhisperTimestampSeconds;
  }
  // The timestamp token nearest to `seconds`, clamped to 0..30 s.
  TokenId TimestampToken(double seconds) const;
  // NotFound when the model has no token for `code` (unknown code, "yue" in a 99-language model).
  // English-only models carry the language tokens too (Whisper never prompts them with one).
  Result<TokenId> LanguageToken(std::string_view code) const;
  // "" when `id` is not a language token.
  std::string_view LanguageCode(TokenId id) const;

  // Appends the tokens of plain text (special-token names in the text are not parsed).
  void Encode(std::string_view text, std::vector<TokenId>* out) const;
  std::vector<TokenId> Encode(std::string_view text) const {
    std::vector<TokenId> out;
    Encode(text, &out);
    return out;
  }
  // Raw bytes of a text token; empty for specials and invalid ids.
  std::string_view TokenBytes(TokenId id) const;
  // Name of any token: the raw bytes of text tokens, "<|endoftext|>", "<|en|>", "<|1.24|>", ...;
  // "" for ids outside the vocabulary.
  std::string TokenName(TokenId id) const;
  // Concatenated bytes. The result may end inside a UTF-8 sequence when `ids` is a prefix of a
  // longer output (use SanitizeUtf8 / CompleteUtf8Prefix from engine/unicode.h when displaying).
  // Ids outside the vocabulary are skipped.
  std::string Decode(std::span<const TokenId> ids,
                     WhisperSpecialRendering specials = WhisperSpecialRendering::kSkip) const;

  // The decoder's initial tokens: [<|startofprev|> previous...] <|startoftranscript|>
  // [<|lang|> <|task|>] [<|notimestamps|>]. InvalidArgument for an unknown language or for a
  // language/translate on an English-only model.
  Result<std::vector<TokenId>> Prompt(const WhisperPromptOptions& options) const;

 private:
  WhisperTokenizer() = default;
  void EncodePiece(std::string_view piece, std::vector<TokenId>* out) const;
  TokenId Find(std::string_view bytes) const;

  WhisperSpecialTokens sp_;
  std::string arena_;                                  // text token bytes back to back
  std::vector<uint32_t> offsets_;                      // n_text + 1 offsets into arena_
  std::unordered_map<std::string_view, TokenId> ids_;  // bytes -> id (views into arena_)
};

}  // namespace hotline::engine
