#include "answer/cache/antonyms.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "common/log.h"

namespace hotline::answer {
namespace {

constexpr const char* kWordNetDir = "/usr/share/wordnet";
constexpr size_t kMaxFileBytes = 64 << 20;

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot open " + path);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (data.size() > kMaxFileBytes) return InvalidArgumentError(path + " is over 64 MiB");
  return data;
}

std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

// A WordNet lemma as the guard sees words: lowercase, an adjective's marker ("(a)", "(p)") cut.
// Multi-word lemmas ("sign_in") are left out: the guard compares single words.
std::string Lemma(std::string_view w) {
  if (const size_t paren = w.find('('); paren != std::string_view::npos) w = w.substr(0, paren);
  if (w.find('_') != std::string_view::npos || w.empty()) return {};
  std::string out(w);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ParseHex(std::string_view s, int& out) {
  out = 0;
  if (s.empty() || s.size() > 4) return false;
  for (char c : s) {
    out *= 16;
    if (c >= '0' && c <= '9') {
      out += c - '0';
    } else if (c >= 'a' && c <= 'f') {
      out += c - 'a' + 10;
    } else {
      return false;
    }
  }
  return true;
}

// The words of the synset record starting at byte `offset` of `data` (a data.* file).
bool SynsetWords(const std::string& data, size_t offset, std::vector<std::string_view>& words) {
  words.clear();
  if (offset >= data.size()) return false;
  const size_t end = data.find('\n', offset);
  const std::vector<std::string_view> f =
      Fields(std::string_view(data).substr(offset, end == std::string::npos ? std::string::npos
                                                                            : end - offset));
  int count = 0;
  if (f.size() < 4 || !ParseHex(f[3], count) || f.size() < 4 + 2 * size_t(count)) return false;
  for (int i = 0; i < count; ++i) words.push_back(f[4 + 2 * size_t(i)]);
  return true;
}

}  // namespace

const Antonyms& Antonyms::Shared() {
  static const Antonyms* shared = [] {
    Result<Antonyms> loaded = LoadWordNet(kWordNetDir);
    if (!loaded.ok()) {
      HLOG_WARN("WordNet not loaded ({}); the semantic cache's meaning guard knows only its own "
                "list of opposite words (install the Debian package wordnet-base)",
                loaded.status().message());
      return new Antonyms();
    }
    return new Antonyms(std::move(*loaded));
  }();
  return *shared;
}

Result<Antonyms> Antonyms::LoadWordNet(const std::string& dir) {
  Antonyms table;
  std::vector<std::string_view> targets;
  // Antonyms never cross a part of speech; the pointer's own letter is checked anyway, since the
  // target offset is only meaningful in this file.
  for (auto [pos, letters] : {std::pair{"noun", "n"}, std::pair{"verb", "v"},
                              std::pair{"adj", "as"}, std::pair{"adv", "r"}}) {
    const std::string path = dir + "/data." + pos;
    ASSIGN_OR_RETURN(std::string data, ReadFile(path));
    size_t start = 0;
    int line_no = 0;
    while (start < data.size()) {
      size_t end = data.find('\n', start);
      if (end == std::string::npos) end = data.size();
      const std::string_view line(data.data() + start, end - start);
      ++line_no;
      start = end + 1;
      if (line.empty() || line[0] == ' ' || line.find(" ! ") == std::string_view::npos) continue;
      const std::vector<std::string_view> f = Fields(line);
      auto bad = [&] {
        return DataLossError(path + ":" + std::to_string(line_no) + ": not a WordNet record");
      };
      int count = 0;
      if (f.size() < 4 || !ParseHex(f[3], count)) return bad();
      size_t k = 4 + 2 * size_t(count);
      if (f.size() <= k) return bad();
      const int pointers = std::atoi(std::string(f[k]).c_str());
      ++k;
      if (pointers < 0 || f.size() < k + 4 * size_t(pointers)) return bad();
      for (int p = 0; p < pointers; ++p, k += 4) {
        if (f[k] != "!") continue;
        if (f[k + 2].size() != 1 || std::string_view(letters).find(f[k + 2][0]) ==
                                         std::string_view::npos) {
          continue;
        }
        int source = 0, target = 0;
        if (f[k + 3].size() != 4 || !ParseHex(f[k + 3].substr(0, 2), source) ||
            !ParseHex(f[k + 3].substr(2), target) || source < 1 || source > count) {
          return bad();
        }
        const size_t offset = static_cast<size_t>(std::strtoull(std::string(f[k + 1]).c_str(),
                                                                nullptr, 10));
        if (!SynsetWords(data, offset, targets) || target < 1 ||
            target > static_cast<int>(targets.size())) {
          return bad();
        }
        const std::string a = Lemma(f[4 + 2 * size_t(source - 1)]);
        const std::string b = Lemma(targets[size_t(target - 1)]);
        if (a.empty() || b.empty() || a == b) continue;
        table.pairs_.insert(a + " " + b);
        table.pairs_.insert(b + " " + a);
        table.has_.insert(a);
        table.has_.insert(b);
      }
    }
  }
  for (const char* pos : {"noun", "verb", "adj"}) {
    const std::string path = dir + "/" + pos + ".exc";
    ASSIGN_OR_RETURN(std::string data, ReadFile(path));
    std::istringstream in(data);
    std::string line;
    while (std::getline(in, line)) {
      const std::vector<std::string_view> f = Fields(line);
      if (f.size() < 2) continue;
      for (size_t i = 1; i < f.size(); ++i) {
        std::string base = Lemma(f[i]);
        if (!base.empty() && table.has_.count(base)) {
          table.irregular_[std::string(f[0])].push_back(std::move(base));
        }
      }
    }
  }
  return table;
}

std::vector<std::string> Antonyms::Lemmas(std::string_view w) const {
  std::vector<std::string> out;
  auto add = [&](std::string s) {
    if (has_.count(s) && std::find(out.begin(), out.end(), s) == out.end()) {
      out.push_back(std::move(s));
    }
  };
  add(std::string(w));
  if (auto it = irregular_.find(std::string(w)); it != irregular_.end()) {
    for (const std::string& base : it->second) add(base);
  }
  auto ends = [&](std::string_view suffix) {
    return w.size() > suffix.size() + 2 && w.substr(w.size() - suffix.size()) == suffix;
  };
  auto stem = [&](size_t cut) { return std::string(w.substr(0, w.size() - cut)); };
  if (ends("s")) add(stem(1));
  if (ends("es")) add(stem(2));
  if (ends("ies")) add(stem(3) + "y");
  for (std::string_view suffix : {"ed", "ing"}) {
    if (!ends(suffix)) continue;
    const std::string base = stem(suffix.size());
    add(base);
    add(base + "e");  // excluded -> exclude
    if (base.size() >= 2 && base[base.size() - 1] == base[base.size() - 2]) {
      add(base.substr(0, base.size() - 1));  // stopped -> stop
    }
  }
  if (ends("ied")) add(stem(3) + "y");
  if (ends("er")) add(stem(2));  // comparatives: lower -> low
  if (ends("est")) add(stem(3));
  return out;
}

bool Antonyms::Opposite(std::string_view a, std::string_view b) const {
  if (has_.empty() || a == b) return false;
  const std::vector<std::string> la = Lemmas(a);
  if (la.empty()) return false;
  const std::vector<std::string> lb = Lemmas(b);
  for (const std::string& x : la) {
    for (const std::string& y : lb) {
      if (pairs_.count(x + " " + y)) return true;
    }
  }
  return false;
}

}  // namespace hotline::answer
