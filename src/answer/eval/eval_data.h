// Loading labelled question sets for training and evaluating the intent classifier and caches.
//
// Formats (chosen by content, not by file name):
//   - Banking77-style CSV: a header row naming a `text` (or `question` / `utterance` /
//     `instruction`, as Bitext's) column and a `category` (or `intent` / `label`) column, the
//     first of each, RFC 4180 quoting ("a, b" and doubled "" inside quotes), LF or CRLF.
//   - CLINC150-style JSON: an object whose `key` member is an array of [text, label] pairs.
//   - Negatives (questions that must not be answered): a text file with one question per line
//     (blank lines skipped), or a JSON file as above with a key (labels ignored; plain strings
//     are accepted too).
// Inputs are untrusted: files over 256 MiB, fields over 16 KiB, or malformed rows give a Status
// naming the file, the line and what to fix. Nothing is returned partially.
//
// Thread-safety: pure functions; they read the file and allocate the result.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace hotline::answer {

struct LabelledText {
  std::string text;
  std::string label;
};

// Loads a labelled set. `json_key` is required for JSON files and must be empty for CSV files.
Result<std::vector<LabelledText>> LoadLabelledTexts(const std::string& path,
                                                    const std::string& json_key);

// Loads negatives: JSON with `json_key`, or one question per line.
Result<std::vector<std::string>> LoadNegativeTexts(const std::string& path,
                                                   const std::string& json_key);

// Parses CSV text (exposed for tests). `source` names it in error messages.
Result<std::vector<LabelledText>> ParseLabelledCsv(const std::string& text,
                                                   const std::string& source);
// Parses JSON text (exposed for tests).
Result<std::vector<LabelledText>> ParseLabelledJson(const std::string& text,
                                                    const std::string& key,
                                                    const std::string& source,
                                                    bool labels_required = true);

}  // namespace hotline::answer
