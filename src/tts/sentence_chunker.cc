#include "tts/sentence_chunker.h"

#include <array>
#include <cctype>
#include <cstring>

namespace hotline::tts {
namespace {

constexpr size_t npos = std::string::npos;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsUpperAscii(char c) { return c >= 'A' && c <= 'Z'; }

// 3-byte UTF-8 punctuation.
bool Is3(std::string_view s, size_t i, const char* mark) {
  return i + 3 <= s.size() && std::memcmp(s.data() + i, mark, 3) == 0;
}
bool IsCjkSentenceEnd(std::string_view s, size_t i) {
  return Is3(s, i, "\xE3\x80\x82") || Is3(s, i, "\xEF\xBC\x81") || Is3(s, i, "\xEF\xBC\x9F") ||
         Is3(s, i, "\xE2\x80\xA6");  // 。！？ and …
}
bool IsCjkClause(std::string_view s, size_t i) {
  return Is3(s, i, "\xEF\xBC\x8C") || Is3(s, i, "\xE3\x80\x81") || Is3(s, i, "\xEF\xBC\x9B") ||
         Is3(s, i, "\xEF\xBC\x9A") || Is3(s, i, "\xE2\x80\x94");  // ，、；：—
}
// A CJK ideograph or kana (U+3040..U+9FFF, 3-byte UTF-8 E3..E9): counts as a word.
bool IsCjkChar(std::string_view s, size_t i) {
  auto b = static_cast<unsigned char>(s[i]);
  return b >= 0xE3 && b <= 0xE9 && i + 3 <= s.size();
}

// Never end a sentence: titles and abbreviations that precede more of the same sentence.
bool IsNonTerminalAbbreviation(std::string_view w) {
  static const std::array<const char*, 36> kWords = {
      "Mr",  "Mrs", "Ms",  "Dr",  "Prof", "St",  "Mt",  "No",  "vs",     "Gen", "Capt", "Rev",
      "Sgt", "Lt",  "Col", "e.g", "i.e",  "approx", "cf", "incl", "Fig", "ext", "Apt",  "Ste",
      "Jan", "Feb", "Mar", "Apr", "Jun",  "Jul", "Aug", "Sep", "Sept",  "Oct", "Nov",  "Dec"};
  for (const char* k : kWords) {
    if (w == k) return true;
  }
  return false;
}

// "J", "U.S", "a.m": letters separated by dots.
bool IsInitials(std::string_view w) {
  if (w.empty()) return false;
  for (size_t i = 0; i < w.size(); ++i) {
    bool letter = std::isalpha(static_cast<unsigned char>(w[i]));
    if (i % 2 == 0 ? !letter : w[i] != '.') return false;
  }
  return true;
}

}  // namespace

Status SentenceChunkerConfig::Validate() const {
  if (first_chunk_min_words < 1) return InvalidArgumentError("first_chunk_min_words must be >= 1");
  if (first_chunk_max_words < first_chunk_min_words) {
    return InvalidArgumentError("first_chunk_max_words must be >= first_chunk_min_words");
  }
  if (max_chunk_chars < 16 || max_chunk_chars > 100000) {
    return InvalidArgumentError("max_chunk_chars must be in [16, 100000]");
  }
  return Status::Ok();
}

size_t SentenceChunker::FindBoundary(bool eof) const {
  std::string_view s = pending_;
  int words = 0;
  int cjk_chars = 0;
  bool in_word = false;
  size_t last_clause = npos;  // end of the last clause boundary seen
  size_t last_space = npos;   // start of the last run of spaces after a word
  const size_t max_chars = static_cast<size_t>(config_.max_chunk_chars);

  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (i >= max_chars) {  // overlong: split at the best place seen so far
      if (last_clause != npos) return last_clause;
      if (last_space != npos) return last_space;
      size_t cut = i;
      while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 lead
      return cut > 0 ? cut : i;
    }
    if (IsSpace(c)) {
      if (in_word) {
        last_space = i;
        if (first_ && words >= config_.first_chunk_max_words) return i;
      }
      in_word = false;
      if (c == '\n' && words > 0) return i;  // line breaks end list items and paragraphs
      continue;
    }
    if (IsCjkSentenceEnd(s, i)) return i + 3;
    if (IsCjkClause(s, i)) {
      last_clause = i + 3;
      if (first_ && words >= config_.first_chunk_min_words) return i + 3;
      in_word = false;
      i += 2;
      continue;
    }
    if (IsCjkChar(s, i)) {
      // An ideograph is a syllable; a Chinese word averages about two of them, so every second
      // one counts (the first chunk then never ends inside a short word or a spoken number).
      if (++cjk_chars % 2 == 1) ++words;
      if (first_ && words > config_.first_chunk_max_words) return i;
      in_word = false;
      i += 2;
      continue;
    }
    if (!in_word) {
      ++words;
      in_word = true;
    }
    if (c == '!' || c == '?' || c == '.') {
      size_t j = i;
      while (j < s.size() && std::strchr(".!?", s[j]) != nullptr) ++j;
      size_t run = j - i;
      while (j < s.size() && std::strchr("\"')]}*", s[j]) != nullptr) ++j;
      if (j >= s.size()) {
        if (eof) return s.size();
        return npos;  // the next character decides
      }
      if (!IsSpace(s[j])) {  // "3.5", "e.g.x", "example.com"
        i = j - 1;
        continue;
      }
      if (c != '.' || (run > 1 && s[i + run - 1] != '.')) return j;  // "!", "?", "?!"
      // A full stop or ellipsis: look at the next word.
      size_t k = j;
      while (k < s.size() && IsSpace(s[k])) ++k;
      if (k >= s.size() && !eof) return npos;
      char next = k < s.size() ? s[k] : '\0';
      size_t w0 = i;
      while (w0 > 0 && !IsSpace(s[w0 - 1])) --w0;
      std::string_view word = s.substr(w0, i - w0);
      while (!word.empty() && std::strchr("\"'([{", word.front()) != nullptr) word.remove_prefix(1);
      bool boundary;
      if (run == 1 && IsNonTerminalAbbreviation(word)) {
        boundary = false;
      } else if (run == 1 && word.size() == 1 && IsUpperAscii(word[0])) {
        boundary = false;  // an initial
      } else {
        boundary = !IsLower(next);  // also covers "etc.", "a.m.", "U.S." and "..."
        if (run == 1 && IsInitials(word) && word.size() > 1 && IsUpperAscii(next)) boundary = true;
      }
      if (boundary) return j;
      i = j - 1;
      continue;
    }
    if (c == ',' || c == ';' || c == ':') {
      if (i + 1 < s.size() && IsSpace(s[i + 1])) {
        last_clause = i + 1;
        if (first_ && words >= config_.first_chunk_min_words) return i + 1;
      }
    }
  }
  if (eof) return s.size();
  return npos;
}

void SentenceChunker::Drain(bool eof, std::vector<std::string>& out) {
  while (true) {
    size_t start = 0;
    while (start < pending_.size() && IsSpace(pending_[start])) ++start;
    pending_.erase(0, start);
    if (pending_.empty()) return;
    size_t end = FindBoundary(eof);
    if (end == npos) return;
    std::string chunk = pending_.substr(0, end);
    pending_.erase(0, end);
    while (!chunk.empty() && IsSpace(chunk.back())) chunk.pop_back();
    if (!chunk.empty()) {
      out.push_back(std::move(chunk));
      first_ = false;
    }
  }
}

std::vector<std::string> SentenceChunker::Push(std::string_view text) {
  std::vector<std::string> out;
  pending_.append(text);
  Drain(false, out);
  return out;
}

std::vector<std::string> SentenceChunker::Flush() {
  std::vector<std::string> out;
  Drain(true, out);
  Reset();
  return out;
}

void SentenceChunker::Reset() {
  pending_.clear();
  first_ = true;
}

}  // namespace hotline::tts
