#include "answer/eval/eval_data.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace hotline::answer {
namespace {

constexpr size_t kMaxFileBytes = 256u << 20;
constexpr size_t kMaxFieldBytes = 16u << 10;
constexpr size_t kMaxRows = 5'000'000;

Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError(path + ": cannot open file (check the path)");
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0) return DataLossError(path + ": cannot read file size");
  if (static_cast<size_t>(size) > kMaxFileBytes) {
    return InvalidArgumentError(path + ": file is " + std::to_string(size) +
                                " bytes; the limit is 256 MiB");
  }
  in.seekg(0, std::ios::beg);
  std::string text(static_cast<size_t>(size), '\0');
  if (size > 0 && !in.read(text.data(), size)) return DataLossError(path + ": read failed");
  return text;
}

bool LooksLikeJson(const std::string& text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{' || c == '[';
  }
  return false;
}

std::string Lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
  }
  return s;
}

// Splits CSV into rows of fields, tracking the line each row starts on.
Status SplitCsv(const std::string& text, const std::string& source,
                std::vector<std::pair<size_t, std::vector<std::string>>>* rows) {
  size_t line = 1;
  size_t i = 0;
  const size_t n = text.size();
  if (n >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;  // UTF-8 byte order mark
  while (i < n) {
    size_t row_line = line;
    std::vector<std::string> fields;
    std::string field;
    bool row_done = false;
    while (!row_done) {
      field.clear();
      if (i < n && text[i] == '"') {
        ++i;
        bool closed = false;
        while (i < n) {
          char c = text[i];
          if (c == '"') {
            if (i + 1 < n && text[i + 1] == '"') {
              field.push_back('"');
              i += 2;
              continue;
            }
            ++i;
            closed = true;
            break;
          }
          if (c == '\n') ++line;
          field.push_back(c);
          ++i;
          if (field.size() > kMaxFieldBytes) {
            return InvalidArgumentError(source + ":" + std::to_string(row_line) +
                                        ": field longer than 16 KiB (unterminated quote?)");
          }
        }
        if (!closed) {
          return InvalidArgumentError(source + ":" + std::to_string(row_line) +
                                      ": quoted field is not closed (add the closing '\"')");
        }
        if (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          return InvalidArgumentError(source + ":" + std::to_string(line) +
                                      ": unexpected character after a closing quote (quotes "
                                      "inside a field must be doubled)");
        }
      } else {
        while (i < n && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          field.push_back(text[i++]);
          if (field.size() > kMaxFieldBytes) {
            return InvalidArgumentError(source + ":" + std::to_string(row_line) +
                                        ": field longer than 16 KiB");
          }
        }
      }
      fields.push_back(field);
      if (i < n && text[i] == ',') {
        ++i;
        continue;
      }
      if (i < n && text[i] == '\r') ++i;
      if (i < n && text[i] == '\n') {
        ++i;
        ++line;
      }
      row_done = true;
    }
    bool blank = fields.size() == 1 && fields[0].empty();
    if (!blank) rows->emplace_back(row_line, std::move(fields));
    if (rows->size() > kMaxRows) {
      return InvalidArgumentError(source + ": more than 5,000,000 rows");
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<LabelledText>> ParseLabelledCsv(const std::string& text,
                                                   const std::string& source) {
  std::vector<std::pair<size_t, std::vector<std::string>>> rows;
  RETURN_IF_ERROR(SplitCsv(text, source, &rows));
  if (rows.empty()) return InvalidArgumentError(source + ": empty file (expected a header row)");
  const std::vector<std::string>& header = rows[0].second;
  int text_col = -1, label_col = -1;
  for (size_t c = 0; c < header.size(); ++c) {
    std::string h = Lower(header[c]);
    // The first of each: Bitext's rows carry an `intent` and, after it, a coarser `category`.
    const bool is_text = h == "text" || h == "question" || h == "utterance" || h == "instruction";
    const bool is_label = h == "category" || h == "intent" || h == "label";
    if (is_text && text_col < 0) text_col = static_cast<int>(c);
    if (is_label && label_col < 0) label_col = static_cast<int>(c);
  }
  if (text_col < 0 || label_col < 0) {
    return InvalidArgumentError(source +
                                ":1: header must name a 'text' (or 'question'/"
                                "'utterance'/'instruction') column and a 'category' (or "
                                "'intent'/'label') column");
  }
  std::vector<LabelledText> out;
  out.reserve(rows.size() - 1);
  const size_t need = static_cast<size_t>(std::max(text_col, label_col)) + 1;
  for (size_t r = 1; r < rows.size(); ++r) {
    auto& [line, fields] = rows[r];
    if (fields.size() < need) {
      return InvalidArgumentError(source + ":" + std::to_string(line) + ": expected " +
                                  std::to_string(header.size()) + " fields, found " +
                                  std::to_string(fields.size()));
    }
    std::string& t = fields[static_cast<size_t>(text_col)];
    std::string& l = fields[static_cast<size_t>(label_col)];
    if (t.empty() || l.empty()) {
      return InvalidArgumentError(source + ":" + std::to_string(line) +
                                  ": empty text or category");
    }
    out.push_back({std::move(t), std::move(l)});
  }
  if (out.empty()) return InvalidArgumentError(source + ": no data rows after the header");
  return out;
}

Result<std::vector<LabelledText>> ParseLabelledJson(const std::string& text, const std::string& key,
                                                    const std::string& source,
                                                    bool labels_required) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return InvalidArgumentError(source + ": not valid JSON at byte " + std::to_string(e.byte) +
                                ": " + e.what());
  }
  if (key.empty()) {
    return InvalidArgumentError(source + ": a JSON file needs a key (e.g. --train-key train)");
  }
  if (!doc.is_object() || !doc.contains(key)) {
    std::string keys;
    if (doc.is_object()) {
      for (auto it = doc.begin(); it != doc.end(); ++it) keys += (keys.empty() ? "" : ", ") + it.key();
    }
    return NotFoundError(source + ": no key '" + key + "' in the JSON object" +
                         (keys.empty() ? "" : " (keys: " + keys + ")"));
  }
  const nlohmann::json& items = doc[key];
  if (!items.is_array()) return InvalidArgumentError(source + ": '" + key + "' is not an array");
  if (items.size() > kMaxRows) return InvalidArgumentError(source + ": more than 5,000,000 items");
  std::vector<LabelledText> out;
  out.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const nlohmann::json& it = items[i];
    LabelledText lt;
    if (it.is_string() && !labels_required) {
      lt.text = it.get<std::string>();
    } else if (it.is_array() && it.size() >= 2 && it[0].is_string() && it[1].is_string()) {
      lt.text = it[0].get<std::string>();
      lt.label = it[1].get<std::string>();
    } else {
      return InvalidArgumentError(source + ": " + key + "[" + std::to_string(i) +
                                  "] must be a [text, label] pair of strings");
    }
    if (lt.text.empty() || lt.text.size() > kMaxFieldBytes) {
      return InvalidArgumentError(source + ": " + key + "[" + std::to_string(i) +
                                  "]: text is empty or longer than 16 KiB");
    }
    out.push_back(std::move(lt));
  }
  if (out.empty()) return InvalidArgumentError(source + ": '" + key + "' is empty");
  return out;
}

Result<std::vector<LabelledText>> LoadLabelledTexts(const std::string& path,
                                                    const std::string& json_key) {
  ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  if (LooksLikeJson(text)) return ParseLabelledJson(text, json_key, path);
  if (!json_key.empty()) {
    return InvalidArgumentError(path + ": a key was given but the file is not JSON");
  }
  return ParseLabelledCsv(text, path);
}

Result<std::vector<std::string>> LoadNegativeTexts(const std::string& path,
                                                   const std::string& json_key) {
  ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  std::vector<std::string> out;
  if (LooksLikeJson(text)) {
    ASSIGN_OR_RETURN(auto items, ParseLabelledJson(text, json_key, path, false));
    for (auto& it : items) out.push_back(std::move(it.text));
    return out;
  }
  if (!json_key.empty()) {
    return InvalidArgumentError(path + ": a key was given but the file is not JSON");
  }
  std::istringstream in(text);
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (line.size() > kMaxFieldBytes) {
      return InvalidArgumentError(path + ":" + std::to_string(line_no) +
                                  ": line longer than 16 KiB");
    }
    out.push_back(line);
    if (out.size() > kMaxRows) return InvalidArgumentError(path + ": more than 5,000,000 lines");
  }
  if (out.empty()) return InvalidArgumentError(path + ": no questions (one per line expected)");
  return out;
}

}  // namespace hotline::answer
