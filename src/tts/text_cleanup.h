// The character- and markup-level stages of TextNormalizer (text_normalizer.h), before words
// are expanded, and the final spacing after. Each takes text and returns new text. Internal to
// hotline_tts; the tests reach them through TextNormalizer.
#pragma once

#include <string>
#include <string_view>

namespace hotline::tts {

// Stage 1: template placeholders left unfilled ("{{Order Number}}") become `replacement`.
std::string ReplacePlaceholders(std::string_view in, const std::string& replacement);

// Stage 2: markdown blocks (headers, bullets, numbered lists, code fences, block quotes, tables,
// rules) lose their markup; list items and headers end with a full stop.
std::string StripMarkdownBlocks(std::string_view in);

// Stage 3: inline markdown (emphasis, inline code; links and images keep their text) and URLs.
std::string StripInlineMarkdown(std::string_view in);

// Stage 4: bytes that are not UTF-8 and control characters go, emoji and other pictographs become
// spaces, typographic quotes, dashes, ellipses and spaces become plain ones.
std::string CleanCharacters(std::string_view in);

// Last: single spaces, none before closing punctuation, no leading punctuation.
std::string CollapseSpaces(std::string_view in);

}  // namespace hotline::tts
