#include "engine/unicode.h"

#include <algorithm>
#include <array>

namespace hotline::engine {
namespace unicode_internal {
extern const uint32_t kCategoryRuns[];
extern const size_t kCategoryRunCount;
}  // namespace unicode_internal

namespace {

// Latin-1 is the hot case of every English prompt: look it up directly.
std::array<UnicodeCategory, 256> BuildLatin1() {
  std::array<UnicodeCategory, 256> t{};
  using unicode_internal::kCategoryRuns;
  size_t run = 0;
  for (uint32_t cp = 0; cp < 256; ++cp) {
    while (run + 1 < unicode_internal::kCategoryRunCount && (kCategoryRuns[run + 1] >> 3) <= cp) {
      ++run;
    }
    t[cp] = static_cast<UnicodeCategory>(kCategoryRuns[run] & 7);
  }
  return t;
}

const std::array<UnicodeCategory, 256>& Latin1() {
  static const std::array<UnicodeCategory, 256> table = BuildLatin1();
  return table;
}

}  // namespace

UnicodeCategory CategoryOf(char32_t cp) {
  if (cp < 256) return Latin1()[cp];
  if (cp > 0x10FFFF) return UnicodeCategory::kOther;
  using unicode_internal::kCategoryRuns;
  const uint32_t* begin = kCategoryRuns;
  const uint32_t* end = kCategoryRuns + unicode_internal::kCategoryRunCount;
  // Last run whose first code point is <= cp. Entries compare by code point because the
  // category sits in the low 3 bits: (cp << 3) | 7 is >= every entry that starts at cp.
  const uint32_t key = (static_cast<uint32_t>(cp) << 3) | 7;
  const uint32_t* it = std::upper_bound(begin, end, key);
  return static_cast<UnicodeCategory>(*(it - 1) & 7);
}

bool IsWhitespace(char32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
  if (cp < 0x85) return false;
  switch (cp) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

char32_t DecodeUtf8(std::string_view text, size_t* pos) {
  const size_t i = *pos;
  const auto b0 = static_cast<uint8_t>(text[i]);
  if (b0 < 0x80) {
    *pos = i + 1;
    return b0;
  }
  const size_t len = Utf8SequenceLength(b0);
  if (len == 1 || i + len > text.size()) {
    *pos = i + 1;
    return kReplacementChar;
  }
  char32_t cp = b0 & (0x7F >> len);
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<uint8_t>(text[i + k]);
    if ((b & 0xC0) != 0x80) {
      *pos = i + 1;
      return kReplacementChar;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr char32_t kMinForLength[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMinForLength[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    *pos = i + 1;
    return kReplacementChar;
  }
  *pos = i + len;
  return cp;
}

size_t CompleteUtf8Prefix(std::string_view bytes) {
  // Only the last three bytes can start an unfinished sequence.
  const size_t n = bytes.size();
  const size_t lo = n > 3 ? n - 3 : 0;
  for (size_t i = n; i > lo; --i) {
    const auto b = static_cast<uint8_t>(bytes[i - 1]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte: keep looking for its lead
    const size_t len = Utf8SequenceLength(b);
    if (len > 1 && i - 1 + len > n) {
      // A lead byte whose sequence is cut off: incomplete only if what follows is continuation
      // bytes (checked above), so hold it back.
      return i - 1;
    }
    return n;
  }
  return n;
}

void AppendUtf8(char32_t cp, std::string* out) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = kReplacementChar;
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

void AppendSanitizedUtf8(std::string_view bytes, std::string* out) {
  size_t pos = 0;
  size_t clean = 0;  // start of the run of valid bytes not yet appended
  while (pos < bytes.size()) {
    if (static_cast<uint8_t>(bytes[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const size_t start = pos;
    const char32_t cp = DecodeUtf8(bytes, &pos);
    if (cp == kReplacementChar && pos == start + 1) {
      out->append(bytes.substr(clean, start - clean));
      AppendUtf8(kReplacementChar, out);
      clean = pos;
    }
  }
  out->append(bytes.substr(clean));
}

std::string SanitizeUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  AppendSanitizedUtf8(bytes, &out);
  return out;
}

}  // namespace hotline::engine
