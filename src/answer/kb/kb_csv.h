// CsvReader: RFC 4180 CSV records with line numbers, for knowledge-base imports.
//
// Fields are separated by commas; a field may be quoted ("...") and then contain commas, line
// breaks and doubled quotes (""). Records end at LF or CRLF outside quotes. Malformed input is an
// error naming the line: a quote inside an unquoted field, text after a closing quote, an
// unterminated quoted field, a field/record past the configured limits, or a field that is not
// valid UTF-8 (the error names the line of the offending byte and the field).
//
// Thread-safety: one reader per thread. The reader views `text`, which must outlive it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace hotline::answer {

struct CsvRecord {
  int line = 0;  // 1-based line where the record starts
  std::vector<std::string> fields;
};

class CsvReader {
 public:
  struct Limits {
    size_t max_field_bytes = 64 * 1024;
    size_t max_fields = 64;
  };
  explicit CsvReader(std::string_view text) : CsvReader(text, Limits{}) {}
  CsvReader(std::string_view text, Limits limits);

  // Reads the next record into `out`. Returns false at the end of input (out untouched); an
  // error when the record is malformed (the reader then stays at the end).
  Result<bool> Next(CsvRecord& out);

 private:
  std::string_view text_;
  Limits limits_;
  size_t pos_ = 0;
  int line_ = 1;
};

}  // namespace hotline::answer
