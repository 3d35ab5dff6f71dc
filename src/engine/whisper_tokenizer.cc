#include "engine/whisper_tokenizer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <queue>

#include "engine/pretokenize.h"
#include "engine/unicode.h"

namespace hotline::engine {
namespace {

// openai/whisper whisper/tokenizer.py LANGUAGES, in its order (the token order). "he" was "iw" in
// early releases; the token is the same position.
constexpr std::string_view kLanguages[] = {
    "en", "zh", "de", "es",  "ru", "ko", "fr", "ja", "pt", "tr",  "pl", "ca", "nl", "ar", "sv",
    "it", "id", "hi", "fi",  "vi", "he", "uk", "el", "ms", "cs",  "ro", "da", "hu", "ta", "no",
    "th", "ur", "hr", "bg",  "lt", "la", "mi", "ml", "cy", "sk",  "te", "fa", "lv", "bn", "sr",
    "az", "sl", "kn", "et",  "mk", "br", "eu", "is", "hy", "ne",  "mn", "bs", "kk", "sq", "sw",
    "gl", "mr", "pa", "si",  "km", "sn", "yo", "so", "af", "oc",  "ka", "be", "tg", "sd", "gu",
    "am", "yi", "lo", "uz",  "fo", "ht", "ps", "tk", "nn", "mt",  "sa", "lb", "my", "bo", "tl",
    "mg", "as", "tt", "haw", "ln", "ha", "ba", "jw", "su", "yue",
};
static_assert(std::size(kLanguages) == 100);

// Text tokens of the two tiktoken files Whisper ships (gpt2.tiktoken, multilingual.tiktoken).
constexpr int kEnglishTextTokens = 50256;
constexpr int kMultilingualTextTokens = 50257;
constexpr int kFirstMultilingualVocab = 51865;
// sot, eot + translate, transcribe, startoflm, startofprev, nospeech, notimestamps + timestamps.
constexpr int kNonLanguageSpecials = 2 + 6 + kWhisperTimestampCount;

}  // namespace

std::span<const std::string_view> WhisperLanguageCodes() { return kLanguages; }

Result<WhisperSpecialTokens> WhisperSpecialTokens::ForVocabSize(int n_vocab) {
  WhisperSpecialTokens sp;
  sp.n_vocab = n_vocab;
  // whisper.cpp's whisper_vocab::is_multilingual(): n_vocab >= 51865.
  sp.multilingual = n_vocab >= kFirstMultilingualVocab;
  sp.n_text = sp.multilingual ? kMultilingualTextTokens : kEnglishTextTokens;
  sp.n_languages = n_vocab - sp.n_text - kNonLanguageSpecials;
  if (sp.n_languages < 1 || sp.n_languages > static_cast<int>(std::size(kLanguages))) {
    return InvalidArgumentError(
        "whisper vocabulary size " + std::to_string(n_vocab) +
        " does not fit Whisper's special-token layout (51864 for English-only models, 51865 or "
        "51866 for multilingual ones)");
  }
  sp.eot = sp.n_text;
  sp.sot = sp.eot + 1;
  sp.first_language = sp.sot + 1;
  sp.translate = sp.first_language + sp.n_languages;
  sp.transcribe = sp.translate + 1;
  sp.start_of_lm = sp.transcribe + 1;
  sp.start_of_prev = sp.start_of_lm + 1;
  sp.no_speech = sp.start_of_prev + 1;
  sp.no_timestamps = sp.no_speech + 1;
  sp.timestamp_begin = sp.no_timestamps + 1;
  return sp;
}

Result<std::unique_ptr<const WhisperTokenizer>> WhisperTokenizer::Create(
    std::span<const std::string> text_tokens, int n_vocab) {
  ASSIGN_OR_RETURN(WhisperSpecialTokens sp, WhisperSpecialTokens::ForVocabSize(n_vocab));
  if (text_tokens.size() < static_cast<size_t>(sp.n_text)) {
    return InvalidArgumentError("whisper vocabulary has " + std::to_string(text_tokens.size()) +
                                " text tokens; n_vocab " + std::to_string(n_vocab) + " needs " +
                                std::to_string(sp.n_text));
  }
  std::unique_ptr<WhisperTokenizer> t(new WhisperTokenizer());
  t->sp_ = sp;
  size_t total = 0;
  for (int i = 0; i < sp.n_text; ++i) total += text_tokens[static_cast<size_t>(i)].size();
  if (total >= (size_t{1} << 31)) return InvalidArgumentError("whisper vocabulary is too large");
  t->arena_.reserve(total);
  t->offsets_.reserve(static_cast<size_t>(sp.n_text) + 1);
  t->offsets_.push_back(0);
  for (int i = 0; i < sp.n_text; ++i) {
    t->arena_.append(text_tokens[static_cast<size_t>(i)]);
    t->offsets_.push_back(static_cast<uint32_t>(t->arena_.size()));
  }
  t->ids_.reserve(static_cast<size_t>(sp.n_text));
  for (int i = 0; i < sp.n_text; ++i) {
    const std::string_view bytes = t->TokenBytes(i);
    // The multilingual file has an empty entry at 50256; an empty string is never a merge result.
    // Duplicates keep the lowest id (the lowest rank).
    if (!bytes.empty()) t->ids_.emplace(bytes, i);
  }
  for (int b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    if (t->Find(std::string_view(&c, 1)) == kNoToken) {
      return InvalidArgumentError("whisper vocabulary lacks the single-byte token " +
                                  std::to_string(b) + "; byte-level BPE needs all 256");
    }
  }
  return std::unique_ptr<const WhisperTokenizer>(std::move(t));
}

Result<std::unique_ptr<const WhisperTokenizer>> WhisperTokenizer::FromGguf(const GgufFile& file) {
  ASSIGN_OR_RETURN(std::string_view model, file.GetString("tokenizer.ggml.model"));
  if (model != "whisper") {
    return InvalidArgumentError(file.name() + ": tokenizer.ggml.model is \"" + std::string(model) +
                                "\", not \"whisper\"");
  }
  ASSIGN_OR_RETURN(int64_t n_vocab, file.GetInt("whisper.vocab_size"));
  if (n_vocab < 1 || n_vocab > (1 << 24)) {
    return InvalidArgumentError(file.name() + ": whisper.vocab_size " + std::to_string(n_vocab) +
                                " is out of range");
  }
  ASSIGN_OR_RETURN(std::span<const std::string_view> pieces,
                   file.GetStringArray("tokenizer.ggml.tokens"));
  std::vector<std::string> tokens;
  tokens.reserve(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::string bytes;
    for (size_t pos = 0; pos < pieces[i].size();) {
      const char32_t cp = DecodeUtf8(pieces[i], &pos);
      const int b = BpeCharToByte(cp);
      if (b < 0) {
        return InvalidArgumentError(file.name() + ": tokenizer.ggml.tokens[" + std::to_string(i) +
                                    "] is not in GPT-2 byte-level form");
      }
      bytes.push_back(static_cast<char>(b));
    }
    tokens.push_back(std::move(bytes));
  }
  auto t = Create(tokens, static_cast<int>(n_vocab));
  if (!t.ok()) return t.status().WithContext(file.name());
  return t;
}

TokenId WhisperTokenizer::Find(std::string_view bytes) const {
  auto it = ids_.find(bytes);
  return it == ids_.end() ? kNoToken : it->second;
}

std::string_view WhisperTokenizer::TokenBytes(TokenId id) const {
  if (!IsText(id)) return {};
  return std::string_view(arena_).substr(
      offsets_[static_cast<size_t>(id)],
      offsets_[static_cast<size_t>(id) + 1] - offsets_[static_cast<size_t>(id)]);
}

TokenId WhisperTokenizer::TimestampToken(double seconds) const {
  double steps = std::round(seconds / kWhisperTimestampSeconds);
  if (!(steps >= 0)) steps = 0;  // also NaN
  steps = std::min(steps, static_cast<double>(kWhisperTimestampCount - 1));
  return sp_.timestamp_begin + static_cast<TokenId>(steps);
}

Result<TokenId> WhisperTokenizer::LanguageToken(std::string_view code) const {
  for (int i = 0; i < sp_.n_languages; ++i) {
    if (kLanguages[i] == code) return sp_.first_language + i;
  }
  return NotFoundError("whisper: no language token for \"" + std::string(code) + "\" in this " +
                       std::to_string(sp_.n_languages) + "-language model");
}

std::string_view WhisperTokenizer::LanguageCode(TokenId id) const {
  const int i = id - sp_.first_language;
  if (i < 0 || i >= sp_.n_languages) return {};
  return kLanguages[i];
}

std::string WhisperTokenizer::TokenName(TokenId id) const {
  if (IsText(id)) return std::string(TokenBytes(id));
  if (!IsSpecial(id)) return {};
  if (IsTimestamp(id)) {
    // Whisper prints i * 0.02 with "%.2f"; in whole centiseconds that is exact.
    const int cs = (id - sp_.timestamp_begin) * 2;
    char buf[24];
    std::snprintf(buf, sizeof(buf), "<|%d.%02d|>", cs / 100, cs % 100);
    return buf;
  }
  if (std::string_view code = LanguageCode(id); !code.empty()) {
    return "<|" + std::string(code) + "|>";
  }
  if (id == sp_.eot) return "<|endoftext|>";
  if (id == sp_.sot) return "<|startoftranscript|>";
  if (id == sp_.translate) return "<|translate|>";
  if (id == sp_.transcribe) return "<|transcribe|>";
  if (id == sp_.start_of_lm) return "<|startoflm|>";
  if (id == sp_.start_of_prev) return "<|startofprev|>";
  if (id == sp_.no_speech) return "<|nospeech|>";
  return "<|notimestamps|>";  // the only id left between eot and timestamp_begin
}

std::string WhisperTokenizer::Decode(std::span<const TokenId> ids,
                                     WhisperSpecialRendering specials) const {
  std::string out;
  for (TokenId id : ids) {
    if (IsText(id)) {
      out.append(TokenBytes(id));
    } else if (IsSpecial(id)) {
      if (specials == WhisperSpecialRendering::kAll ||
          (specials == WhisperSpecialRendering::kTimestampsOnly && IsTimestamp(id))) {
        out.append(TokenName(id));
      }
    }
  }
  return out;
}

void WhisperTokenizer::Encode(std::string_view text, std::vector<TokenId>* out) const {
  if (text.empty()) return;
  std::vector<TextPiece> pieces;
  PreTokenizeScratch scratch;
  PreTokenize(PreTokenizerKind::kGpt2, text, &pieces, &scratch);
  for (const TextPiece& p : pieces) EncodePiece(text.substr(p.begin, p.end - p.begin), out);
}

void WhisperTokenizer::EncodePiece(std::string_view piece, std::vector<TokenId>* out) const {
  if (piece.empty()) return;
  // tiktoken emits a piece that is itself a token without merging.
  if (const TokenId whole = Find(piece); whole != kNoToken) {
    out->push_back(whole);
    return;
  }
  struct Part {
    uint32_t begin;
    uint32_t len;  // 0 once merged into the left neighbour
    int prev;
    int next;
  };
  struct Candidate {
    TokenId rank;
    int left;
    uint32_t left_len;
    uint32_t right_len;
  };
  // Lowest rank first, then leftmost: the pair tiktoken's linear scan picks.
  auto later = [](const Candidate& a, const Candidate& b) {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  };
  std::vector<Part> parts(piece.size());
  const int n = static_cast<int>(piece.size());
  for (int i = 0; i < n; ++i) {
    parts[static_cast<size_t>(i)] = {static_cast<uint32_t>(i), 1, i - 1, i + 1 < n ? i + 1 : -1};
  }
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> queue(later);
  auto consider = [&](int left) {
    if (left < 0) return;
    const Part& l = parts[static_cast<size_t>(left)];
    if (l.next < 0) return;
    const Part& r = parts[static_cast<size_t>(l.next)];
    const TokenId rank = Find(piece.substr(l.begin, l.len + r.len));
    if (rank != kNoToken) queue.push({rank, left, l.len, r.len});
  };
  for (int i = 0; i + 1 < n; ++i) consider(i);
  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Part& l = parts[static_cast<size_t>(c.left)];
    if (l.len != c.left_len || l.next < 0) continue;  // stale: the left part changed or ended
    Part& r = parts[static_cast<size_t>(l.next)];
    // A part's start never moves, so equal lengths mean the same bytes.
    if (r.len != c.right_len) continue;
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (l.next >= 0) parts[static_cast<size_t>(l.next)].prev = c.left;
    consider(l.prev);
    consider(c.left);
  }
  for (int i = 0; i >= 0; i = parts[static_cast<size_t>(i)].next) {
    const Part& p = parts[static_cast<size_t>(i)];
    // Every single byte is a token (checked in Create), so every part has one.
    out->push_back(Find(piece.substr(p.begin, p.len)));
  }
}

Result<std::vector<TokenId>> WhisperTokenizer::Prompt(const WhisperPromptOptions& options) const {
  std::vector<TokenId> out;
  if (!options.previous.empty() && options.max_previous > 0) {
    out.push_back(sp_.start_of_prev);
    const size_t keep =
        std::min(options.previous.size(), static_cast<size_t>(options.max_previous));
    for (size_t i = options.previous.size() - keep; i < options.previous.size(); ++i) {
      const TokenId id = options.previous[i];
      if (!IsText(id) && !IsTimestamp(id)) {
        return InvalidArgumentError("whisper prompt: previous token " + std::to_string(id) +
                                    " is not a text or timestamp token");
      }
      out.push_back(id);
    }
  }
  out.push_back(sp_.sot);
  if (sp_.multilingual) {
    ASSIGN_OR_RETURN(TokenId lang,
                     LanguageToken(options.language.empty() ? "en" : options.language));
    out.push_back(lang);
    out.push_back(options.task == WhisperTask::kTranslate ? sp_.translate : sp_.transcribe);
  } else {
    // Whisper's get_tokenizer(multilingual=False) drops language and task: the sequence is <sot>.
    if (!options.language.empty() && options.language != "en") {
      return InvalidArgumentError(
          "whisper prompt: this English-only model cannot take language \"" + options.language +
          "\"");
    }
    if (options.task == WhisperTask::kTranslate) {
      return InvalidArgumentError("whisper prompt: English-only models cannot translate");
    }
  }
  if (!options.timestamps) out.push_back(sp_.no_timestamps);
  return out;
}

}  // namespace hotline::engine
