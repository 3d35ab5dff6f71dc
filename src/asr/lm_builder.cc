#include "asr/lm_builder.h"

#include "asr/letter_to_sound.h"
#include "common/build_paths.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

namespace hotline::asr {
namespace {

constexpr int64_t kMaxDictionaryBytes = 64ll << 20;
constexpr int64_t kMaxTextBytes = 256ll << 20;
constexpr int32_t kBos = 0;
constexpr int32_t kEos = 1;

const char* const kOnes[] = {"zero",    "one",     "two",       "three",    "four",
                             "five",    "six",     "seven",     "eight",    "nine",
                             "ten",     "eleven",  "twelve",    "thirteen", "fourteen",
                             "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"};
const char* const kTens[] = {"",      "",      "twenty",  "thirty", "forty",
                             "fifty", "sixty", "seventy", "eighty", "ninety"};

void SpeakNumber(std::string_view digits, std::vector<std::string>& out) {
  if (digits.size() <= 2) {
    int v = std::stoi(std::string(digits));
    if (v < 20) {
      out.emplace_back(kOnes[v]);
    } else {
      out.emplace_back(kTens[v / 10]);
      if (v % 10) out.emplace_back(kOnes[v % 10]);
    }
    return;
  }
  for (char d : digits) out.emplace_back(kOnes[d - '0']);
}

Result<std::string> ReadBounded(const std::string& path, int64_t max_bytes, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot open " + std::string(what) + " '" + path + "'");
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0) return DataLossError("cannot size " + std::string(what) + " '" + path + "'");
  if (size > max_bytes) {
    return ResourceExhaustedError(std::string(what) + " '" + path + "' is " +
                                  std::to_string(size) + " bytes; the limit is " +
                                  std::to_string(max_bytes));
  }
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), size)) return DataLossError("cannot read '" + path + "'");
  return text;
}

std::string Log10(double p) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6f", std::log10(p));
  return buf;
}

}  // namespace

std::vector<std::string> LmWords(std::string_view text) {
  std::vector<std::string> out;
  std::string word;
  auto flush = [&] {
    // Trim apostrophes at the edges ("'cause" stays rare; quotes go).
    size_t b = 0, e = word.size();
    while (b < e && word[b] == '\'') ++b;
    while (e > b && word[e - 1] == '\'') --e;
    if (e > b) out.push_back(word.substr(b, e - b));
    word.clear();
  };
  size_t i = 0;
  while (i < text.size()) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (text.substr(i, 2) == "{{") {
      size_t close = text.find("}}", i + 2);
      flush();
      out.emplace_back(kLmBreak);
      i = close == std::string_view::npos ? text.size() : close + 2;
      continue;
    }
    if (std::isdigit(c)) {
      flush();
      size_t j = i;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
      SpeakNumber(text.substr(i, j - i), out);
      i = j;
      continue;
    }
    if (std::isalpha(c)) {
      word += static_cast<char>(std::tolower(c));
    } else if (c == '\'' && !word.empty()) {
      word += '\'';
    } else if (c == 0xE2 && text.substr(i, 3) == "\xE2\x80\x99") {  // ’
      if (!word.empty()) word += '\'';
      i += 3;
      continue;
    } else if (c >= 0x80) {
      // Other non-ASCII (accents, emoji): the US English dictionary cannot say them.
      flush();
      out.emplace_back(kLmBreak);
      while (i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80) ++i;
    } else {
      flush();
    }
    ++i;
  }
  flush();
  return out;
}

std::string NormalizeTranscriptText(std::string_view text) {
  std::string out;
  for (const auto& w : LmWords(text)) {
    if (w == kLmBreak) continue;
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

Result<std::unordered_set<std::string>> LoadDictionaryWords(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadBounded(path, kMaxDictionaryBytes, "dictionary"));
  std::unordered_set<std::string> words;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t end = line.find_first_of(" \t");
    if (end == 0 || line.empty()) continue;
    std::string w = line.substr(0, end);
    if (size_t p = w.find('('); p != std::string::npos && p > 0) w.resize(p);
    words.insert(std::move(w));
  }
  if (words.empty()) return DataLossError("dictionary '" + path + "' has no entries");
  return words;
}

Result<int64_t> WriteDictionarySubset(const std::string& dictionary_path,
                                      const std::unordered_set<std::string>& words,
                                      const std::string& out_path) {
  ASSIGN_OR_RETURN(std::string text, ReadBounded(dictionary_path, kMaxDictionaryBytes, "dictionary"));
  std::istringstream in(text);
  std::string line, out;
  int64_t entries = 0;
  while (std::getline(in, line)) {
    size_t end = line.find_first_of(" \t");
    if (end == 0 || end == std::string::npos) continue;
    std::string w = line.substr(0, end);
    if (size_t p = w.find('('); p != std::string::npos && p > 0) w.resize(p);
    if (!words.count(w)) continue;
    out += line;
    out += '\n';
    ++entries;
  }
  const std::string tmp = out_path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << out;
    if (!f.good()) return UnavailableError("cannot write '" + tmp + "' (check the folder and free space)");
  }
  if (std::rename(tmp.c_str(), out_path.c_str()) != 0) {
    return UnavailableError("cannot rename '" + tmp + "' to '" + out_path + "'");
  }
  return entries;
}

Result<std::vector<std::vector<std::string>>> ParseCsv(std::string_view text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, field_started = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      field_started = false;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      row.push_back(std::move(field));
      field.clear();
      field_started = false;
      rows.push_back(std::move(row));
      row.clear();
    } else {
      field += c;
      field_started = true;
    }
  }
  if (quoted) return DataLossError("CSV ends inside a quoted field (truncated file?)");
  if (field_started || !row.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<std::vector<std::string>> ReadTrainingTexts(const std::string& path,
                                                   const std::string& csv_column) {
  ASSIGN_OR_RETURN(std::string text, ReadBounded(path, kMaxTextBytes, "training text"));
  std::vector<std::string> texts;
  const bool csv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
  if (!csv) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      if (line.find_first_not_of(" \t\r") != std::string::npos) texts.push_back(line);
    }
    return texts;
  }
  ASSIGN_OR_RETURN(auto rows, ParseCsv(text));
  if (rows.empty()) return DataLossError("'" + path + "' is empty");
  auto it = std::find(rows[0].begin(), rows[0].end(), csv_column);
  if (it == rows[0].end()) {
    return InvalidArgumentError("'" + path + "' has no column '" + csv_column +
                                "' in its header (choose one with --column)");
  }
  size_t col = static_cast<size_t>(it - rows[0].begin());
  for (size_t r = 1; r < rows.size(); ++r) {
    if (col < rows[r].size() && !rows[r][col].empty()) texts.push_back(std::move(rows[r][col]));
  }
  return texts;
}

NgramLmBuilder::NgramLmBuilder(int order, const std::unordered_set<std::string>* dictionary)
    : order_(std::clamp(order, 1, 5)), dictionary_(dictionary) {
  counts_.resize(static_cast<size_t>(order_));
  contexts_.resize(static_cast<size_t>(order_));
  Id("<s>");
  Id("</s>");
}

std::unordered_set<std::string> NgramLmBuilder::vocabulary() const {
  std::unordered_set<std::string> v;
  for (size_t i = 2; i < words_.size(); ++i) v.insert(words_[i]);
  return v;
}

int32_t NgramLmBuilder::Id(const std::string& word) {
  auto [it, inserted] = ids_.try_emplace(word, static_cast<int32_t>(words_.size()));
  if (inserted) words_.push_back(word);
  return it->second;
}

void NgramLmBuilder::AddText(std::string_view text) {
  std::vector<std::string> words = LmWords(text);
  if (words.empty()) return;
  ++stats_.sentences;
  // Runs between breaks; only the first run starts with <s>, only the last ends with </s>.
  std::vector<int32_t> run = {kBos};
  for (const auto& w : words) {
    bool keep = w != kLmBreak;
    if (keep && dictionary_ != nullptr && !dictionary_->count(w)) {
      ++oov_[w];
      ++stats_.oov_words;
      keep = false;
    }
    if (!keep) {
      CountRun(run);
      run.clear();
      continue;
    }
    ++stats_.words;
    run.push_back(Id(w));
  }
  run.push_back(kEos);
  CountRun(run);
}

void NgramLmBuilder::CountRun(const std::vector<int32_t>& run) {
  for (size_t end = 0; end < run.size(); ++end) {
    if (run[end] == kBos) continue;  // <s> is never predicted
    for (int n = 1; n <= order_ && static_cast<size_t>(n) <= end + 1; ++n) {
      Key key(run.begin() + static_cast<std::ptrdiff_t>(end + 1 - n),
              run.begin() + static_cast<std::ptrdiff_t>(end + 1));
      ++counts_[n - 1][key];
      if (n == 1) ++unigram_total_;
    }
  }
}

double NgramLmBuilder::Prob(const Key& ngram) const {
  const size_t n = ngram.size();
  if (n == 1) {
    auto it = counts_[0].find(ngram);
    double c = it == counts_[0].end() ? 0.0 : static_cast<double>(it->second);
    const double v = static_cast<double>(counts_[0].size());
    return (c + 1.0) / (static_cast<double>(unigram_total_) + v);
  }
  const double lower = Prob(Key(ngram.begin() + 1, ngram.end()));
  auto ctx = contexts_[n - 1].find(Key(ngram.begin(), ngram.end() - 1));
  if (ctx == contexts_[n - 1].end()) return lower;
  auto it = counts_[n - 1].find(ngram);
  const double c = it == counts_[n - 1].end() ? 0.0 : static_cast<double>(it->second);
  const double t = static_cast<double>(ctx->second.followers);
  return (c + t * lower) / (static_cast<double>(ctx->second.count) + t);
}

double NgramLmBuilder::BackoffLog10(const Key& context) const {
  const size_t n = context.size() + 1;
  if (n > static_cast<size_t>(order_)) return 0.0;
  auto ctx = contexts_[n - 1].find(context);
  if (ctx == contexts_[n - 1].end()) return 0.0;
  const double t = static_cast<double>(ctx->second.followers);
  return std::log10(t / (static_cast<double>(ctx->second.count) + t));
}

Result<std::string> NgramLmBuilder::ToArpa() {
  if (stats_.words == 0) {
    return FailedPreconditionError("no words to build a language model from (empty texts, or "
                                   "every word missing from the dictionary)");
  }
  for (int n = 2; n <= order_; ++n) {
    contexts_[n - 1].clear();
    for (const auto& [key, c] : counts_[n - 1]) {
      Context& ctx = contexts_[n - 1][Key(key.begin(), key.end() - 1)];
      ctx.count += c;
      ++ctx.followers;
    }
  }
  stats_.vocabulary = static_cast<int64_t>(counts_[0].size());
  stats_.ngrams.assign(static_cast<size_t>(order_), 0);
  stats_.ngrams[0] = static_cast<int64_t>(counts_[0].size()) + 1;  // + <s>
  for (int n = 2; n <= order_; ++n) stats_.ngrams[n - 1] = static_cast<int64_t>(counts_[n - 1].size());
  stats_.top_oov.assign(oov_.begin(), oov_.end());
  std::sort(stats_.top_oov.begin(), stats_.top_oov.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  if (stats_.top_oov.size() > 20) stats_.top_oov.resize(20);

  auto name = [&](const Key& key) {
    std::string s;
    for (int32_t id : key) {
      if (!s.empty()) s += ' ';
      s += words_[static_cast<size_t>(id)];
    }
    return s;
  };
  char buf[32];
  auto backoff = [&](const Key& key) {
    std::snprintf(buf, sizeof(buf), "%.6f", BackoffLog10(key));
    return std::string(buf);
  };

  std::string out = "\\data\\\n";
  for (int n = 1; n <= order_; ++n) {
    out += "ngram " + std::to_string(n) + "=" + std::to_string(stats_.ngrams[n - 1]) + "\n";
  }
  for (int n = 1; n <= order_; ++n) {
    out += "\n\\" + std::to_string(n) + "-grams:\n";
    const bool highest = n == order_;
    if (n == 1) {
      out += "-99.000000\t<s>";
      if (!highest) out += "\t" + backoff({kBos});
      out += "\n";
    }
    for (const auto& [key, c] : counts_[n - 1]) {
      out += Log10(Prob(key)) + "\t" + name(key);
      if (!highest) out += "\t" + backoff(key);
      out += "\n";
    }
  }
  out += "\n\\end\\\n";
  return out;
}

std::string DefaultBroadCorpus() {
  return std::string(HOTLINE_ASSETS_DIR) + "/asr/customer_service.txt";
}

Result<LmBuildStats> WriteDomainLm(const std::vector<std::string>& texts,
                                   const std::string& dictionary_path, const std::string& out_path,
                                   int order, const LmMix& mix) {
  if (order < 1 || order > 5) return InvalidArgumentError("n-gram order must be 1..5");
  if (mix.domain_repeat < 1 || mix.domain_repeat > 100) {
    return InvalidArgumentError("domain_repeat must be in [1, 100]");
  }
  std::vector<std::string> broad;
  if (!mix.broad_corpus.empty()) {
    auto read = ReadTrainingTexts(mix.broad_corpus, "");
    if (!read.ok()) {
      return read.status().WithContext(
          "broad customer-service corpus (rebuild it with scripts/build_broad_corpus.py)");
    }
    broad = std::move(*read);
  }
  ASSIGN_OR_RETURN(auto dict, LoadDictionaryWords(dictionary_path));
  // Words the dictionary lacks get a pronunciation from letter-to-sound rules when they occur
  // often enough to be words rather than typos.
  std::map<std::string, std::string> spelled;  // word -> phones
  if (mix.lts_min_count > 0) {
    std::unordered_map<std::string, int> missing;
    const std::vector<std::string>* sets[] = {&texts, &broad};
    for (const std::vector<std::string>* set : sets) {
      for (const auto& t : *set) {
        for (const auto& w : LmWords(t)) {
          if (w != kLmBreak && !dict.count(w)) ++missing[w];
        }
      }
    }
    for (const auto& [w, n] : missing) {
      if (n < mix.lts_min_count) continue;
      auto phones = PronounceWord(w);
      if (phones.ok()) spelled.emplace(w, std::move(*phones));
    }
    for (const auto& [w, phones] : spelled) dict.insert(w);
  }
  NgramLmBuilder builder(order, &dict);
  for (int k = 0; k < mix.domain_repeat; ++k) {
    for (const auto& t : texts) builder.AddText(t);
  }
  for (const auto& t : broad) builder.AddText(t);
  ASSIGN_OR_RETURN(std::string arpa, builder.ToArpa());
  const std::string tmp = out_path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << arpa;
    out.flush();
    if (!out.good()) {
      return UnavailableError("cannot write '" + tmp + "' (check the folder and free space)");
    }
  }
  if (std::rename(tmp.c_str(), out_path.c_str()) != 0) {
    return UnavailableError("cannot rename '" + tmp + "' to '" + out_path + "'");
  }
  RETURN_IF_ERROR(
      WriteDictionarySubset(dictionary_path, builder.vocabulary(), out_path + ".dict").status());
  LmBuildStats stats = builder.stats();
  if (!spelled.empty()) {
    std::ofstream out(out_path + ".dict", std::ios::binary | std::ios::app);
    for (const auto& [w, phones] : spelled) out << w << ' ' << phones << '\n';
    out.flush();
    if (!out.good()) return UnavailableError("cannot append to '" + out_path + ".dict'");
    for (const auto& [w, phones] : spelled) stats.spelled_words.push_back(w);
  }
  return stats;
}

}  // namespace hotline::asr
