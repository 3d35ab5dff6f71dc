#include "common/utf8.h"

#include <cstdint>
#include <string>

namespace hotline {

size_t Utf8SequenceLength(std::string_view text, size_t i) {
  char32_t cp;
  return DecodeUtf8(text, i, &cp);
}

size_t DecodeUtf8(std::string_view text, size_t i, char32_t* out) {
  const auto c = static_cast<unsigned char>(text[i]);
  size_t n;
  char32_t cp;
  if (c < 0x80) {
    *out = c;
    return 1;
  }
  if ((c & 0xe0) == 0xc0) {
    n = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto d = static_cast<unsigned char>(text[i + k]);
    if ((d & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3f);
  }
  // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
      (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) {
    return 0;
  }
  *out = cp;
  return n;
}

void AppendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xc0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xe0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  } else {
    out.push_back(static_cast<char>(0xf0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3f)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3f)));
  }
}

namespace {

// Calls on_han for each Han character until it returns false.
template <class F>
void ForEachHan(std::string_view text, F on_han) {
  for (size_t i = 0; i < text.size();) {
    // Han characters are 3 or 4 bytes with a lead byte of at least 0xe3: skip the rest quickly.
    if (static_cast<unsigned char>(text[i]) < 0xe3) {
      ++i;
      continue;
    }
    char32_t cp = 0;
    const size_t n = DecodeUtf8(text, i, &cp);
    if (n == 0) {
      ++i;
      continue;
    }
    if (IsHan(cp) && !on_han()) return;
    i += n;
  }
}

}  // namespace

size_t CountHan(std::string_view text) {
  size_t n = 0;
  ForEachHan(text, [&n] { return ++n, true; });
  return n;
}

bool ContainsHan(std::string_view text) {
  bool found = false;
  ForEachHan(text, [&found] { return found = true, false; });
  return found;
}

size_t FirstInvalidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string::npos;
}

}  // namespace hotline
