#include "engine/pretokenize.h"

#include "engine/unicode.h"

namespace hotline::engine {
namespace {

enum : uint8_t {
  kLetter = 1,
  kDigit = 2,  // \p{N}
  kSpace = 4,  // \s
  kNewline = 8,  // \r or \n
};

uint8_t ClassOf(char32_t cp) {
  uint8_t f = 0;
  if (IsWhitespace(cp)) {
    f |= kSpace;
    if (cp == '\r' || cp == '\n') f |= kNewline;
    return f;
  }
  switch (CategoryOf(cp)) {
    case UnicodeCategory::kLetter:
      return kLetter;
    case UnicodeCategory::kNumber:
      return kDigit;
    default:
      return 0;
  }
}

// The state of one split: character classes plus helpers that read past the end safely.
class Splitter {
 public:
  Splitter(std::string_view text, PreTokenizeScratch* s, std::vector<TextPiece>* out)
      : text_(text), cls_(s->cls), off_(s->offset), out_(out) {
    cls_.clear();
    off_.clear();
    size_t pos = 0;
    while (pos < text.size()) {
      off_.push_back(static_cast<uint32_t>(pos));
      cls_.push_back(ClassOf(DecodeUtf8(text, &pos)));
    }
    n_ = cls_.size();
    off_.push_back(static_cast<uint32_t>(text.size()));
  }

  size_t size() const { return n_; }
  bool Letter(size_t i) const { return i < n_ && (cls_[i] & kLetter); }
  bool Digit(size_t i) const { return i < n_ && (cls_[i] & kDigit); }
  bool Space(size_t i) const { return i < n_ && (cls_[i] & kSpace); }
  bool Newline(size_t i) const { return i < n_ && (cls_[i] & kNewline); }
  // [^\s\p{L}\p{N}]
  bool Other(size_t i) const { return i < n_ && cls_[i] == 0; }
  // The character at i when it is ASCII, else 0.
  char Ascii(size_t i) const {
    if (i >= n_) return 0;
    const char c = text_[off_[i]];
    return static_cast<unsigned char>(c) < 0x80 ? c : 0;
  }

  bool IsLongS(size_t i) const {
    return i < n_ && off_[i + 1] - off_[i] == 2 && text_.substr(off_[i], 2) == "\xC5\xBF";
  }

  size_t LettersFrom(size_t i) const {
    while (Letter(i)) ++i;
    return i;
  }
  size_t OthersFrom(size_t i) const {
    while (Other(i)) ++i;
    return i;
  }
  size_t SpacesFrom(size_t i) const {
    while (Space(i)) ++i;
    return i;
  }

  // Length of a contraction ('s 't 're 've 'm 'll 'd) at i, or 0.
  size_t Contraction(size_t i, bool ignore_case) const {
    if (Ascii(i) != '\'') return 0;
    auto lower = [&](size_t k) -> char {
      char c = Ascii(k);
      if (ignore_case && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      // Case-insensitive matching folds U+017F LATIN SMALL LETTER LONG S to 's' (as the
      // reference regex engines do); it is the only non-ASCII character folding into
      // s/t/r/e/v/m/l/d.
      if (ignore_case && c == 0 && IsLongS(k)) c = 's';
      return c;
    };
    const char c1 = lower(i + 1);
    if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return 2;
    const char c2 = lower(i + 2);
    if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return 3;
    return 0;
  }

  // \s+(?!\S) | \s+ starting at a whitespace character i: end of the match.
  size_t TrailingSpaces(size_t i) const {
    const size_t r = SpacesFrom(i);
    if (r == n_ || r - i == 1) return r;
    return r - 1;  // leave the last space to prefix the next word
  }

  void Emit(size_t begin, size_t end) { out_->push_back({off_[begin], off_[end]}); }

 private:
  std::string_view text_;
  std::vector<uint8_t>& cls_;
  std::vector<uint32_t>& off_;
  std::vector<TextPiece>* out_;
  size_t n_ = 0;
};

void SplitGpt2(Splitter& s) {
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    size_t end;
    const bool space = s.Ascii(i) == ' ';
    if (size_t c = s.Contraction(i, /*ignore_case=*/false); c > 0) {
      end = i + c;
    } else if (s.Letter(i) || (space && s.Letter(i + 1))) {
      end = s.LettersFrom(i + (space ? 1 : 0));
    } else if (s.Digit(i) || (space && s.Digit(i + 1))) {
      size_t k = i + (space ? 1 : 0);
      while (s.Digit(k)) ++k;
      end = k;
    } else if (s.Other(i) || (space && s.Other(i + 1))) {
      end = s.OthersFrom(i + (space ? 1 : 0));
    } else {
      end = s.TrailingSpaces(i);
    }
    s.Emit(i, end);
    i = end;
  }
}

void SplitLlama3(Splitter& s, size_t max_digits) {
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    size_t end;
    if (size_t c = s.Contraction(i, /*ignore_case=*/true); c > 0) {
      end = i + c;
    } else if (s.Letter(i)) {
      // [^\r\n\p{L}\p{N}]?\p{L}+ with the optional character absent
      end = s.LettersFrom(i);
    } else if (!s.Newline(i) && !s.Digit(i) && s.Letter(i + 1)) {
      // ... with one leading non-letter, non-digit, non-newline character (space, punctuation)
      end = s.LettersFrom(i + 1);
    } else if (s.Digit(i)) {
      size_t k = i;
      while (k < i + max_digits && s.Digit(k)) ++k;
      end = k;
    } else if (s.Other(i) || (s.Ascii(i) == ' ' && s.Other(i + 1))) {
      // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
      size_t k = s.OthersFrom(i + (s.Other(i) ? 0 : 1));
      while (s.Newline(k)) ++k;
      end = k;
    } else {
      // Whitespace. `\s*[\r\n]+`: up to the last newline of the run, if it has one.
      const size_t r = s.SpacesFrom(i);
      size_t last_newline = r;
      for (size_t k = r; k > i; --k) {
        if (s.Newline(k - 1)) {
          last_newline = k - 1;
          break;
        }
      }
      end = last_newline < r ? last_newline + 1 : s.TrailingSpaces(i);
    }
    s.Emit(i, end);
    i = end;
  }
}

}  // namespace

void PreTokenize(PreTokenizerKind kind, std::string_view text, std::vector<TextPiece>* out,
                 PreTokenizeScratch* scratch) {
  Splitter s(text, scratch, out);
  switch (kind) {
    case PreTokenizerKind::kNone:
      if (!text.empty()) s.Emit(0, s.size());
      return;
    case PreTokenizerKind::kGpt2:
      SplitGpt2(s);
      return;
    case PreTokenizerKind::kLlama3:
      SplitLlama3(s, 3);
      return;
    case PreTokenizerKind::kQwen2:
      SplitLlama3(s, 1);
      return;
  }
}

}  // namespace hotline::engine
