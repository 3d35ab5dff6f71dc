#include "answer/generate/postprocess.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "answer/kb/kb_bitext.h"
#include "common/utf8.h"

namespace hotline::answer {

namespace {

// Chinese (full-width) sentence ends and clause marks. No space follows any of them.
constexpr std::string_view kChineseEnds[] = {"\u3002", "\uff01", "\uff1f"};   // 。！？
constexpr std::string_view kChineseClauses[] = {"\uff0c", "\uff1b", "\uff1a"};  // ，；：

template <size_t N>
bool EndsWithAny(std::string_view text, const std::string_view (&marks)[N]) {
  for (std::string_view mark : marks) {
    if (text.ends_with(mark)) return true;
  }
  return false;
}

// A line or sentence that needs no '.' added: a Chinese sentence end, or ： (as ':' needs none).
bool EndsChinese(std::string_view text) {
  return EndsWithAny(text, kChineseEnds) || text.ends_with(kChineseClauses[2]);
}

// The next piece of speech joins `text` with a space unless a Chinese mark ends it.
bool JoinsWithSpace(std::string_view text) {
  return !text.empty() && !EndsWithAny(text, kChineseEnds) && !EndsWithAny(text, kChineseClauses);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Removes line-level markdown: fences (and the code inside), headings, quotes, list markers,
// table rules. Each remaining line ends with a sentence mark so list items become sentences.
std::string StripBlocks(std::string_view text) {
  std::string out;
  bool in_fence = false;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = Trim(text.substr(pos, nl - pos));
    pos = nl + 1;
    if (line.substr(0, 3) == "```" || line.substr(0, 3) == "~~~") {
      in_fence = !in_fence;
      continue;
    }
    if (in_fence || line.empty()) continue;
    while (!line.empty() && (line.front() == '#' || line.front() == '>')) line = Trim(line.substr(1));
    if (line.size() >= 2 && (line[0] == '-' || line[0] == '*' || line[0] == '+') && line[1] == ' ') {
      line = Trim(line.substr(2));
    } else {
      size_t d = 0;
      while (d < line.size() && std::isdigit(static_cast<unsigned char>(line[d]))) ++d;
      if (d > 0 && d < 3 && d + 1 < line.size() && (line[d] == '.' || line[d] == ')') && line[d + 1] == ' ') {
        line = Trim(line.substr(d + 2));
      }
    }
    if (line.find_first_not_of("-|=:* ") == std::string_view::npos) continue;  // rules, tables
    out.append(line);
    const char last = out.back();
    if (last != '.' && last != '!' && last != '?' && last != ':' && !EndsChinese(out)) {
      out.push_back('.');
    }
    out.push_back(' ');
  }
  return out;
}

// Inline markdown: links, emphasis, inline code; drops bare URLs.
std::string StripInline(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (c == '[') {  // [text](url) -> text; a bare [Slot] is left for placeholder filling
      size_t close = s.find(']', i);
      if (close != std::string_view::npos && close + 1 < s.size() && s[close + 1] == '(') {
        size_t paren = s.find(')', close);
        if (paren != std::string_view::npos) {
          out.append(s.substr(i + 1, close - i - 1));
          i = paren + 1;
          continue;
        }
      }
    }
    if (s.substr(i, 7) == "http://" || s.substr(i, 8) == "https://" || s.substr(i, 4) == "www.") {
      while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
      continue;
    }
    if (c == '*' || c == '`' || (c == '_' && (i + 1 < s.size() && s[i + 1] == '_'))) {
      ++i;
      continue;
    }
    if (c == '_' && (i == 0 || std::isspace(static_cast<unsigned char>(s[i - 1])) ||
                     i + 1 == s.size() || std::isspace(static_cast<unsigned char>(s[i + 1])) ||
                     std::ispunct(static_cast<unsigned char>(s[i + 1])))) {
      ++i;  // _emphasis_ markers, not snake_case inside words
      continue;
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

std::vector<std::string> Sentences(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    size_t end = 0;  // one past the sentence's last byte, when one ends here
    if ((c == '.' || c == '!' || c == '?') && (i + 1 == s.size() || s[i + 1] == ' ')) {
      // "$42.17" and "e.g." do not end sentences: a period followed by a space does.
      end = i + 1;
    }
    // Chinese sentences end at 。！？ with no space after them.
    for (std::string_view mark : kChineseEnds) {
      if (s.substr(i, mark.size()) == mark) end = i + mark.size();
    }
    if (end) {
      std::string_view sentence = Trim(s.substr(start, end - start));
      if (!sentence.empty()) out.emplace_back(sentence);
      start = end;
      i = end - 1;
    }
  }
  std::string_view rest = Trim(s.substr(std::min(start, s.size())));
  if (!rest.empty()) out.emplace_back(std::string(rest) + (EndsChinese(rest) ? "" : "."));
  return out;
}

// Fills placeholders; returns false when one cannot be filled.
bool FillPlaceholders(std::string& sentence, const std::map<std::string, std::string>& slots) {
  std::string out;
  for (size_t i = 0; i < sentence.size();) {
    size_t open_len = 0, close_len = 0;
    char close_char = 0;
    if (sentence.compare(i, 2, "{{") == 0) open_len = close_len = 2, close_char = '}';
    else if (sentence[i] == '{') open_len = close_len = 1, close_char = '}';
    else if (sentence[i] == '[') open_len = close_len = 1, close_char = ']';
    if (!open_len) {
      out.push_back(sentence[i++]);
      continue;
    }
    const size_t end = sentence.find(close_char, i + open_len);
    if (end == std::string::npos || end - i > 64) {
      out.push_back(sentence[i++]);
      continue;
    }
    const std::string name = PlaceholderSlot(sentence.substr(i + open_len, end - i - open_len));
    auto it = slots.find(name);
    if (it == slots.end()) return false;
    out.append(it->second);
    i = end + close_len;
  }
  sentence = std::move(out);
  return true;
}

bool IsStockOpener(const std::string& sentence) {
  const std::string low = Lower(sentence);
  for (std::string_view p : {"certainly", "sure", "of course", "absolutely", "great question",
                             "good question", "thanks for asking", "thank you for your question",
                             "i'd be happy to help", "i would be happy to help", "happy to help",
                             "no problem", "okay", "ok"}) {
    if (low.compare(0, p.size(), p) == 0) {
      const std::string_view rest = std::string_view(low).substr(p.size());
      // Only the opener itself ("Certainly!"), not a sentence that merely starts the same way.
      if (rest.find_first_not_of("!.,;: ") == std::string_view::npos) return true;
    }
  }
  return false;
}

// "Sure, your bill is ..." -> "Your bill is ..." (the opener is a clause of its own); nothing
// left when the whole sentence is an opener ("Certainly!").
std::string WithoutOpener(std::string s) {
  if (IsStockOpener(s)) return {};
  const size_t comma = s.find(", ");
  if (comma != std::string::npos && IsStockOpener(s.substr(0, comma))) {
    s = s.substr(comma + 2);
    if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  }
  return s;
}

}  // namespace

Status SpeechConfig::Validate() const {
  if (max_sentences < 1) return InvalidArgumentError("max_sentences must be at least 1");
  if (max_chars < 20) return InvalidArgumentError("max_chars must be at least 20");
  if (first_clause_min_words < 0 || first_clause_min_words > 100) {
    return InvalidArgumentError("first_clause_min_words must be in [0, 100] (0 = off)");
  }
  return Status::Ok();
}

std::string PostprocessForSpeech(std::string_view llm_text,
                                 const std::map<std::string, std::string>& slots,
                                 const SpeechConfig& config) {
  SpeechStream stream(config, slots);
  stream.Push(llm_text);
  stream.Finish();
  return stream.spoken();
}

namespace {
constexpr size_t kMaxStreamBytes = 64 * 1024;
}  // namespace

SpeechStream::SpeechStream(SpeechConfig config, std::map<std::string, std::string> slots)
    : config_(config), slots_(std::move(slots)) {}

std::vector<std::string> SpeechStream::Push(std::string_view delta) {
  std::vector<std::string> out;
  if (full_ || raw_.size() >= kMaxStreamBytes) return out;
  raw_.append(delta.substr(0, kMaxStreamBytes - raw_.size()));
  Drain(false, out);
  return out;
}

std::vector<std::string> SpeechStream::Finish() {
  std::vector<std::string> out;
  Drain(true, out);
  return out;
}

void SpeechStream::Drain(bool eof, std::vector<std::string>& out) {
  if (full_) return;
  // Text before the last line break is final; on the last line a sentence is final once more
  // text follows its end (StripBlocks closes the unfinished line, which makes its last
  // "sentence" provisional).
  const std::vector<std::string> sentences = Sentences(StripInline(StripBlocks(raw_)));
  size_t final_count = sentences.size();
  if (!eof && !raw_.empty() && raw_.back() != '\n' && final_count > 0) --final_count;
  for (size_t i = consumed_; i < final_count && !full_; ++i) Accept(sentences[i], out);
  consumed_ = std::max(consumed_, final_count);
  if (!eof && consumed_ == 0 && kept_ == 0 && early_.empty() && !full_ && !sentences.empty()) {
    EarlyClause(sentences[0], out);
  }
}

void SpeechStream::EarlyClause(const std::string& provisional, std::vector<std::string>& out) {
  if (config_.first_clause_min_words <= 0) return;
  const std::string s = WithoutOpener(provisional);
  // A boundary with text after it: everything before it is final. The first one with enough
  // words before it is the clause. English: ", " "; " ": "; Chinese: ，；： (no space after
  // them), where each Han character counts as a word.
  int words = 0;
  bool in_word = false;  // inside a word of a spaced script
  for (size_t i = 0, len = 1; i < s.size(); i += len) {
    char32_t cp = 0;
    len = DecodeUtf8(s, i, &cp);
    if (len == 0) {  // not UTF-8 here: one byte, part of a word
      len = 1;
      cp = 0xfffd;
    }
    const auto starts_word = [](unsigned char c) { return c >= 0x80 || std::isalnum(c); };
    size_t mark = 0;  // bytes of a boundary mark with text after it, at i
    if ((cp == ',' || cp == ';' || cp == ':') && i + 2 < s.size() && s[i + 1] == ' ') mark = 1;
    // Chinese marks: words after them (not only the full stop the splitter gives an unfinished
    // sentence).
    if ((cp == 0xff0c || cp == 0xff1b || cp == 0xff1a) && i + len < s.size() &&
        starts_word(static_cast<unsigned char>(s[i + len]))) {
      mark = len;
    }
    if (mark == 0) {
      if (IsHan(cp)) {  // a word of its own
        words += in_word ? 2 : 1;
        in_word = false;
      } else if (cp == ' ') {
        if (in_word) ++words;
        in_word = false;
      } else if (cp >= 0x80 || std::isalnum(static_cast<unsigned char>(cp))) {
        in_word = true;
      }
      continue;
    }
    if (in_word) ++words;
    in_word = false;
    if (words < config_.first_clause_min_words) continue;
    std::string clause = s.substr(0, i + mark);
    // Plain words only: markup or a placeholder could still change or drop the sentence.
    if (clause.find_first_of("*_`#[]{}<>|~\\") != std::string::npos) return;
    if (clause.size() > static_cast<size_t>(config_.max_chars)) return;
    early_ = clause;
    spoken_ = clause;
    out.push_back(std::move(clause));
    return;
  }
}

void SpeechStream::Accept(std::string s, std::vector<std::string>& out) {
  if (kept_ == 0) {
    s = WithoutOpener(std::move(s));
    if (s.empty()) return;
  }
  if (!early_.empty() && kept_ == 0) {
    // The first clause went out already: the rest of its sentence, once (a sentence that no
    // longer starts with it, which the rules above cannot make, would be spoken whole).
    if (s.compare(0, early_.size(), early_) == 0) {
      std::string rest(Trim(std::string_view(s).substr(early_.size())));
      ++kept_;
      if (kept_ >= config_.max_sentences) full_ = true;
      if (!FillPlaceholders(rest, slots_) || Trim(rest).size() < 2) return;
      if (!rest.empty() && rest.back() == ':') rest.back() = '.';
      if (spoken_.size() + rest.size() + 1 > static_cast<size_t>(config_.max_chars)) {
        full_ = true;
        return;
      }
      spoken_ += (JoinsWithSpace(early_) ? " " : "") + rest;
      out.push_back(std::move(rest));
      return;
    }
  }
  if (!FillPlaceholders(s, slots_)) return;
  if (!s.empty() && s.back() == ':') s.back() = '.';
  if (Trim(s).size() < 2) return;
  const size_t max_chars = static_cast<size_t>(config_.max_chars);
  const size_t extra = spoken_.empty() ? s.size() : s.size() + 1;  // at most one space
  if (spoken_.size() + extra > max_chars) {
    if (spoken_.empty()) {  // one long sentence: cut at a word boundary, or between characters
      size_t cut = s.rfind(' ', max_chars - 1);
      if (cut == std::string::npos) {
        cut = max_chars - 1;
        while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80) --cut;
      }
      spoken_ = s.substr(0, cut) + ".";
      out.push_back(spoken_);
    }
    full_ = true;
    return;
  }
  if (JoinsWithSpace(spoken_)) spoken_.push_back(' ');
  spoken_ += s;
  out.push_back(std::move(s));
  if (++kept_ >= config_.max_sentences) full_ = true;
}

std::vector<std::string> SplitSentences(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    size_t end = 0;  // one past the sentence's last byte, when one ends here
    if ((c == '.' || c == '!' || c == '?') &&
        (i + 1 == text.size() || std::isspace(static_cast<unsigned char>(text[i + 1])))) {
      end = i + 1;
    }
    // Chinese sentences end at 。！？ with no space after them.
    for (std::string_view mark : {"\u3002", "\uff01", "\uff1f"}) {
      if (text.substr(i, mark.size()) == mark) end = i + mark.size();
    }
    if (end) {
      std::string_view sentence = Trim(text.substr(start, end - start));
      if (!sentence.empty()) out.emplace_back(sentence);
      start = end;
      i = end - 1;
    }
  }
  std::string_view rest = Trim(text.substr(std::min(start, text.size())));
  if (!rest.empty()) out.emplace_back(rest);
  return out;
}

}  // namespace hotline::answer
