#include "answer/kb/kb_csv.h"

#include <cstdint>
#include <cstdio>

#include "common/utf8.h"

namespace hotline::answer {

CsvReader::CsvReader(std::string_view text, Limits limits) : text_(text), limits_(limits) {
  // A UTF-8 byte order mark is not part of the first header name.
  if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
}

Result<bool> CsvReader::Next(CsvRecord& out) {
  if (pos_ >= text_.size()) return false;
  const int start_line = line_;
  auto fail = [&](const std::string& what) -> Result<bool> {
    pos_ = text_.size();
    return InvalidArgumentError("line " + std::to_string(line_) + ": " + what);
  };
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;       // inside a quoted field
  bool was_quoted = false;   // the current field was quoted (and closed)
  bool field_started = false;
  for (;;) {
    if (pos_ >= text_.size()) {
      if (quoted) {
        line_ = start_line;
        return fail("quoted field is never closed (a missing '\"')");
      }
      break;
    }
    if (quoted) {
      // Copy the run up to the next quote at once (long multi-line answers are common).
      size_t q = text_.find('"', pos_);
      if (q == std::string_view::npos) q = text_.size();
      if (q > pos_) {
        std::string_view run = text_.substr(pos_, q - pos_);
        for (char ch : run) line_ += ch == '\n';
        field.append(run);
        pos_ = q;
        if (field.size() > limits_.max_field_bytes) {
          return fail("field longer than " + std::to_string(limits_.max_field_bytes) + " bytes");
        }
        continue;
      }
    }
    const char c = text_[pos_++];
    if (quoted) {
      if (c == '"') {
        if (pos_ < text_.size() && text_[pos_] == '"') {
          field.push_back('"');
          ++pos_;
        } else {
          quoted = false;
          was_quoted = true;
        }
      } else {
        if (c == '\n') ++line_;
        field.push_back(c);
      }
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
      was_quoted = field_started = false;
    } else if (c == '\n' || (c == '\r' && pos_ < text_.size() && text_[pos_] == '\n')) {
      if (c == '\r') ++pos_;
      ++line_;
      break;
    } else if (c == '"') {
      if (field_started || was_quoted) return fail("'\"' inside an unquoted field (quote the field and double the quote)");
      quoted = true;
      field_started = true;
    } else {
      if (was_quoted) return fail("text after the closing quote of a field");
      field.push_back(c);
      field_started = true;
    }
    if (field.size() > limits_.max_field_bytes) {
      return fail("field longer than " + std::to_string(limits_.max_field_bytes) + " bytes");
    }
    if (fields.size() >= limits_.max_fields) {
      return fail("more than " + std::to_string(limits_.max_fields) + " fields");
    }
  }
  fields.push_back(std::move(field));
  // Text that is not UTF-8 would be stored, then break every JSON turn event and log line that
  // quotes it: refuse it here, naming the line it is on.
  int line = start_line;
  for (size_t f = 0; f < fields.size(); ++f) {
    const std::string& text = fields[f];
    const size_t bad = FirstInvalidUtf8(text);
    if (bad != std::string::npos) {
      for (size_t i = 0; i < bad; ++i) line += text[i] == '\n';
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[bad]));
      pos_ = text_.size();
      return InvalidArgumentError("line " + std::to_string(line) + ": field " +
                                  std::to_string(f + 1) + " is not valid UTF-8 (byte " + byte +
                                  "); save the file as UTF-8");
    }
    for (char ch : text) line += ch == '\n';
  }
  out.line = start_line;
  out.fields = std::move(fields);
  return true;
}

}  // namespace hotline::answer
