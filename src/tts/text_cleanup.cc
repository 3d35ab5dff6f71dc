// Stages 1-4 of TextNormalizer::Normalize and its final spacing (text_cleanup.h).
#include "tts/text_cleanup.h"

#include <cctype>
#include <cstdint>
#include <cstring>
#include <vector>

namespace hotline::tts {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool EndsWithTerminal(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return !s.empty() && std::strchr(".!?:;,", s.back()) != nullptr;
}

}  // namespace

// ---- Stage 1: placeholders ---------------------------------------------------------------

std::string ReplacePlaceholders(std::string_view in, const std::string& replacement) {
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    if (in.compare(i, 2, "{{") == 0) {
      size_t close = in.find("}}", i + 2);
      if (close != std::string_view::npos && close - i <= 120) {
        out += replacement;
        i = close + 2;
        continue;
      }
    }
    out += in[i++];
  }
  return out;
}

// ---- Stage 2: markdown blocks ----------------------------------------------------------------

std::string StripMarkdownBlocks(std::string_view in) {
  std::vector<std::string> lines;
  std::vector<bool> needs_stop;  // list items and headers end with a full stop
  size_t start = 0;
  while (start <= in.size()) {
    size_t nl = in.find('\n', start);
    std::string_view line = in.substr(start, nl == std::string_view::npos ? in.npos : nl - start);
    start = (nl == std::string_view::npos) ? in.size() + 1 : nl + 1;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
      line.remove_suffix(1);
    }
    size_t lead = line.find_first_not_of(" \t");
    if (lead == std::string_view::npos) {
      lines.emplace_back();
      needs_stop.push_back(false);
      continue;
    }
    line.remove_prefix(lead);
    bool stop = false;
    if (line.starts_with("```") || line.starts_with("~~~")) continue;  // code fence
    // Horizontal rule: three or more of -, * or _ and nothing else.
    if (line.size() >= 3 && line.find_first_not_of(std::string(1, line[0]) + " ") == line.npos &&
        std::strchr("-*_", line[0]) != nullptr) {
      continue;
    }
    if (line[0] == '#') {
      size_t hashes = line.find_first_not_of('#');
      if (hashes != line.npos && hashes <= 6 && line[hashes] == ' ') {
        line.remove_prefix(hashes + 1);
        stop = true;
      }
    }
    while (!line.empty() && line[0] == '>') {
      line.remove_prefix(1);
      while (!line.empty() && line[0] == ' ') line.remove_prefix(1);
    }
    if (line.size() >= 2 && std::strchr("-*+", line[0]) != nullptr && line[1] == ' ') {
      line.remove_prefix(2);
      stop = true;
    } else {
      size_t d = 0;
      while (d < line.size() && d < 3 && IsDigit(line[d])) ++d;
      if (d > 0 && d + 1 < line.size() && (line[d] == '.' || line[d] == ')') && line[d + 1] == ' ') {
        line.remove_prefix(d + 2);
        stop = true;
      }
    }
    std::string text(line);
    if (!text.empty() && text[0] == '|') {  // table row
      if (text.find_first_not_of("|-: ") == std::string::npos) continue;  // separator row
      std::string cells;
      size_t pos = 0;
      while (pos < text.size()) {
        size_t bar = text.find('|', pos);
        std::string cell = text.substr(pos, bar == std::string::npos ? std::string::npos : bar - pos);
        size_t a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
        if (a != std::string::npos) {
          if (!cells.empty()) cells += ", ";
          cells += cell.substr(a, b - a + 1);
        }
        if (bar == std::string::npos) break;
        pos = bar + 1;
      }
      text = cells;
      stop = true;
    }
    lines.push_back(std::move(text));
    needs_stop.push_back(stop);
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    bool more = false;
    for (size_t j = i + 1; j < lines.size(); ++j) more |= !lines[j].empty();
    std::string line = lines[i];
    if ((needs_stop[i] || more) && !EndsWithTerminal(line)) line += '.';
    if (!out.empty()) out += ' ';
    out += line;
  }
  return out;
}

// ---- Stage 3: inline markdown, URLs ---------------------------------------------------------

std::string StripInlineMarkdown(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    // [text](url) and ![alt](url) keep their text.
    if (c == '[' || (c == '!' && i + 1 < in.size() && in[i + 1] == '[')) {
      size_t open = (c == '!') ? i + 1 : i;
      size_t close = in.find(']', open);
      if (close != in.npos && close + 1 < in.size() && in[close + 1] == '(' && close - open < 300) {
        size_t paren = in.find(')', close + 2);
        if (paren != in.npos) {
          out += StripInlineMarkdown(in.substr(open + 1, close - open - 1));
          i = paren;
          continue;
        }
      }
    }
    if (c == '`' || c == '*' || c == '~') continue;  // code spans, emphasis, strike-through
    if (c == '_') {
      // Emphasis underscores sit at word edges; snake_case keeps its (spoken as space) underscore.
      bool inside = i > 0 && i + 1 < in.size() && std::isalnum(static_cast<unsigned char>(in[i - 1])) &&
                    std::isalnum(static_cast<unsigned char>(in[i + 1]));
      if (inside) out += ' ';
      continue;
    }
    out += c;
  }
  return out;
}

// ---- Stage 4: UTF-8, emoji, typography ------------------------------------------------------

namespace {
bool IsPictograph(uint32_t cp) {
  return (cp >= 0x1F000 && cp <= 0x1FAFF) || (cp >= 0x2600 && cp <= 0x27BF) ||
         (cp >= 0x2B00 && cp <= 0x2BFF) || (cp >= 0x2190 && cp <= 0x21FF) ||
         (cp >= 0x2300 && cp <= 0x23FF) || (cp >= 0x25A0 && cp <= 0x25FF) ||
         (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0x200D || cp == 0x20E3 ||
         (cp >= 0xE0000 && cp <= 0xE007F) || cp == 0x00A9 || cp == 0x00AE || cp == 0x2122;
}
}  // namespace

// Decodes UTF-8 (dropping invalid bytes), removes pictographs and maps typography to ASCII.
std::string CleanCharacters(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    auto b = static_cast<unsigned char>(in[i]);
    if (b < 0x80) {
      out += (b < 0x20 && b != '\n') ? ' ' : static_cast<char>(b);
      ++i;
      continue;
    }
    int len = (b >= 0xF0 && b <= 0xF4) ? 4 : (b >= 0xE0) ? 3 : (b >= 0xC2 && b <= 0xDF) ? 2 : 0;
    if (len == 0 || i + static_cast<size_t>(len) > in.size()) {
      ++i;  // invalid lead byte or truncated sequence
      continue;
    }
    uint32_t cp = (len == 2) ? (b & 0x1F) : (len == 3) ? (b & 0x0F) : (b & 0x07);
    bool ok = true;
    for (int k = 1; k < len; ++k) {
      auto cb = static_cast<unsigned char>(in[i + k]);
      if ((cb & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (cb & 0x3F);
    }
    bool overlong = (len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF));
    if (!ok || overlong || (cp >= 0xD800 && cp <= 0xDFFF)) {
      ++i;
      continue;
    }
    std::string_view seq = in.substr(i, static_cast<size_t>(len));
    i += static_cast<size_t>(len);
    if (IsPictograph(cp)) {
      out += ' ';
      continue;
    }
    switch (cp) {
      case 0x2018: case 0x2019: case 0x201B: out += '\''; break;
      case 0x201C: case 0x201D: case 0x201F: out += '"'; break;
      case 0x2013: case 0x2014: out += ", "; break;  // dashes are pauses
      case 0x2026: out += "..."; break;
      case 0x00A0: case 0x2009: case 0x202F: case 0x200B: out += ' '; break;
      case 0x20AC: out += "\xE2\x82\xAC"; break;  // keep €
      case 0x2022: case 0x00B7: out += ' '; break;  // bullets
      default: out += seq;
    }
  }
  return out;
}

// ---- Last: spaces ----------------------------------------------------------------------------

std::string CollapseSpaces(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    bool space = std::isspace(static_cast<unsigned char>(c));
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
      continue;
    }
    // No space before closing punctuation (left behind by removed URLs, emoji, placeholders).
    if (std::strchr(",.;:!?", c) != nullptr && !out.empty() && out.back() == ' ') out.pop_back();
    // Avoid ", ," and ",." sequences.
    if (std::strchr(",.;:!?", c) != nullptr && !out.empty() && out.back() == ',') out.pop_back();
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  size_t lead = 0;
  while (lead < out.size() && std::strchr(" ,.;:", out[lead]) != nullptr) ++lead;
  return out.substr(lead);
}

}  // namespace hotline::tts
