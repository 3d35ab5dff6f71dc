#include "asr/wer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>
#include <utility>

namespace hotline::asr {

double WerCounts::rate() const {
  if (reference_words == 0) return static_cast<double>(insertions);
  return static_cast<double>(errors()) / reference_words;
}

WerCounts& WerCounts::operator+=(const WerCounts& o) {
  substitutions += o.substitutions;
  deletions += o.deletions;
  insertions += o.insertions;
  reference_words += o.reference_words;
  return *this;
}

namespace {

// Whole-word contractions whose expansion is not the regular "n't"/"'re"/... rule.
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kIrregular = {{
    {"can't", "can not"}, {"cannot", "can not"}, {"won't", "will not"}, {"shan't", "shall not"},
    {"ain't", "is not"}, {"let's", "let us"},
}};

// Regular suffixes. "'s" and "'d" are left alone: "it's" is "it is" or "it has", "he'd" is "he
// had" or "he would", and possessives ("customer's") end in "'s" too.
constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kSuffixes = {{
    {"n't", " not"}, {"'re", " are"}, {"'ve", " have"}, {"'ll", " will"}, {"'m", " am"},
}};

std::string ExpandWord(std::string word) {
  for (auto& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& [from, to] : kIrregular) {
    if (word == from) return std::string(to);
  }
  for (const auto& [suffix, expansion] : kSuffixes) {
    if (word.size() > suffix.size() && word.ends_with(suffix)) {
      return word.substr(0, word.size() - suffix.size()) + std::string(expansion);
    }
  }
  return word;
}

}  // namespace

std::string NormalizeForScoring(std::string_view text) {
  std::string out;
  for (auto& w : SplitWords(text)) {
    if (!out.empty()) out += ' ';
    out += ExpandWord(std::move(w));
  }
  return out;
}

std::vector<std::string> SplitWords(std::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
    size_t j = i;
    while (j < text.size() && !(text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r')) ++j;
    if (j > i) words.emplace_back(text.substr(i, j - i));
    i = j;
  }
  return words;
}

WerCounts ComputeWer(const std::vector<std::string>& ref, const std::vector<std::string>& hyp) {
  // Each cell holds the best (errors, S, D, I) for ref[0..i) vs hyp[0..j); ties prefer fewer errors
  // then substitutions, which matches the usual sclite-style counting closely enough for reports.
  struct Cell {
    int cost, s, d, ins;
  };
  std::vector<Cell> prev(hyp.size() + 1), cur(hyp.size() + 1);
  for (size_t j = 0; j <= hyp.size(); ++j) prev[j] = {static_cast<int>(j), 0, 0, static_cast<int>(j)};
  for (size_t i = 1; i <= ref.size(); ++i) {
    cur[0] = {static_cast<int>(i), 0, static_cast<int>(i), 0};
    for (size_t j = 1; j <= hyp.size(); ++j) {
      Cell diag = prev[j - 1];
      if (ref[i - 1] != hyp[j - 1]) {
        ++diag.cost;
        ++diag.s;
      }
      Cell del = prev[j];
      ++del.cost;
      ++del.d;
      Cell ins = cur[j - 1];
      ++ins.cost;
      ++ins.ins;
      Cell best = diag;
      if (del.cost < best.cost) best = del;
      if (ins.cost < best.cost) best = ins;
      cur[j] = best;
    }
    std::swap(prev, cur);
  }
  const Cell& c = prev[hyp.size()];
  WerCounts w;
  w.substitutions = c.s;
  w.deletions = c.d;
  w.insertions = c.ins;
  w.reference_words = static_cast<int>(ref.size());
  return w;
}

WerCounts ComputeWer(std::string_view reference, std::string_view hypothesis) {
  return ComputeWer(SplitWords(reference), SplitWords(hypothesis));
}

}  // namespace hotline::asr
