#include "asr/turn_end_model.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "asr/lm_builder.h"

namespace hotline::asr {
namespace {

constexpr int64_t kMaxModelBytes = 64ll << 20;
constexpr char kMagic[] = "hotline-turn-end-model 1";

std::string JoinTail(std::span<const std::string> words, size_t end, size_t k) {
  std::string key;
  for (size_t i = end - k; i < end; ++i) {
    if (!key.empty()) key += ' ';
    key += words[i];
  }
  return key;
}

bool ParseU32(std::string_view s, uint32_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

Result<TurnEndModel> TurnEndModel::Train(const std::vector<std::string>& questions,
                                         const TurnEndModelOptions& options) {
  if (options.order < 1 || options.order > 6) {
    return InvalidArgumentError("turn-end model order must be in [1, 6], got " +
                                std::to_string(options.order));
  }
  if (options.min_count < 1 || !(options.alpha > 0)) {
    return InvalidArgumentError("turn-end model min_count must be >= 1 and alpha > 0");
  }
  std::unordered_map<std::string, Counts> counts;
  int64_t used = 0;
  for (const std::string& q : questions) {
    const std::vector<std::string> words = LmWords(q);
    // A question of only breaks (placeholders, foreign script) says nothing.
    if (std::none_of(words.begin(), words.end(), [](const auto& w) { return w != kLmBreak; })) {
      continue;
    }
    ++used;
    for (size_t end = 1; end <= words.size(); ++end) {
      const bool last = end == words.size();
      Counts& all = counts[""];
      ++all.total;
      all.ends += last;
      for (size_t k = 1; k <= static_cast<size_t>(options.order) && k <= end; ++k) {
        Counts& c = counts[JoinTail(words, end, k)];
        ++c.total;
        c.ends += last;
      }
    }
  }
  if (used == 0) return InvalidArgumentError("no usable training questions for the turn-end model");
  TurnEndModel m;
  m.order_ = options.order;
  m.alpha_ = options.alpha;
  m.questions_ = used;
  for (auto& [key, c] : counts) {
    if (key.empty() || c.total >= static_cast<uint32_t>(options.min_count))
      m.table_.emplace(key, c);
  }
  return m;
}

double TurnEndModel::prior() const {
  auto it = table_.find("");
  if (it == table_.end() || it->second.total == 0) return 0.1;
  return (it->second.ends + 0.5) / (it->second.total + 1.0);
}

double TurnEndModel::EndProbabilityOfWords(std::span<const std::string> words) const {
  double p = prior();
  for (size_t k = 1; k <= static_cast<size_t>(order_) && k <= words.size(); ++k) {
    auto it = table_.find(JoinTail(words, words.size(), k));
    if (it == table_.end()) break;  // a longer context was never kept if this one was not
    p = (it->second.ends + alpha_ * p) / (it->second.total + alpha_);
  }
  // Keep it strictly inside (0, 1): the detector takes its logit.
  return std::clamp(p, 1e-4, 1 - 1e-4);
}

double TurnEndModel::EndProbability(std::string_view text) const {
  std::vector<std::string> words = LmWords(text);
  std::erase(words, std::string(kLmBreak));
  return EndProbabilityOfWords(words);
}

std::string TurnEndModel::Serialize(const std::string& provenance) const {
  std::ostringstream out;
  out << kMagic << '\n';
  std::istringstream prov(provenance);
  for (std::string line; std::getline(prov, line);) out << "# " << line << '\n';
  out << "order " << order_ << '\n' << "alpha " << alpha_ << '\n';
  std::vector<const std::pair<const std::string, Counts>*> rows;
  rows.reserve(table_.size());
  for (const auto& kv : table_) rows.push_back(&kv);
  // Sorted, so the same training gives the same file (the empty context first).
  std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->first < b->first; });
  for (auto* r : rows) out << r->second.ends << '\t' << r->second.total << '\t' << r->first << '\n';
  return out.str();
}

Status TurnEndModel::Save(const std::string& path, const std::string& provenance) const {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return UnavailableError("cannot write the turn-end model to '" + path + "'");
  const std::string text = Serialize(provenance);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out) return DataLossError("short write of the turn-end model to '" + path + "'");
  return Status::Ok();
}

Result<TurnEndModel> TurnEndModel::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return NotFoundError("cannot open the turn-end model '" + path +
                         "' (build one with `hotline asr train-turns`)");
  }
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0 || size > kMaxModelBytes) {
    return ResourceExhaustedError("turn-end model '" + path + "' is missing or over 64 MiB");
  }
  in.seekg(0);
  std::string text(static_cast<size_t>(size), '\0');
  if (!in.read(text.data(), size)) return DataLossError("cannot read '" + path + "'");
  return Parse(text, path);
}

Result<TurnEndModel> TurnEndModel::Parse(std::string_view text, const std::string& source) {
  TurnEndModel m;
  bool have_magic = false, have_prior = false;
  size_t line_no = 0;
  size_t pos = 0;
  auto bad = [&](const std::string& what) {
    return DataLossError("turn-end model '" + source + "' line " + std::to_string(line_no) + ": " +
                         what + " (rebuild it with `hotline asr train-turns`)");
  };
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!have_magic) {
      if (line != kMagic)
        return bad("not a turn-end model (first line must be '" + std::string(kMagic) + "')");
      have_magic = true;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    if (line.starts_with("order ")) {
      uint32_t v = 0;
      if (!ParseU32(line.substr(6), v) || v < 1 || v > 6) return bad("order must be 1..6");
      m.order_ = static_cast<int>(v);
      continue;
    }
    if (line.starts_with("alpha ")) {
      try {
        m.alpha_ = std::stod(std::string(line.substr(6)));
      } catch (...) {
        return bad("alpha is not a number");
      }
      if (!(m.alpha_ > 0 && m.alpha_ < 1e6)) return bad("alpha must be in (0, 1e6)");
      continue;
    }
    const size_t t1 = line.find('\t');
    const size_t t2 = t1 == std::string_view::npos ? t1 : line.find('\t', t1 + 1);
    if (t2 == std::string_view::npos) return bad("expected '<ends>\\t<total>\\t<words>'");
    Counts c;
    if (!ParseU32(line.substr(0, t1), c.ends) ||
        !ParseU32(line.substr(t1 + 1, t2 - t1 - 1), c.total) || c.ends > c.total || c.total == 0) {
      return bad("counts must be integers with 0 <= ends <= total, total > 0");
    }
    std::string key(line.substr(t2 + 1));
    if (key.size() > 256) return bad("context longer than 256 bytes");
    if (std::count(key.begin(), key.end(), ' ') >= m.order_)
      return bad("context longer than the order");
    if (key.empty()) {
      have_prior = true;
      m.questions_ = c.ends;
    }
    if (!m.table_.emplace(std::move(key), c).second) return bad("context listed twice");
  }
  if (!have_magic) return DataLossError("turn-end model '" + source + "' is empty");
  if (!have_prior)
    return DataLossError("turn-end model '" + source + "' has no all-positions line");
  return m;
}

}  // namespace hotline::asr
