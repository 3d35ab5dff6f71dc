// Opposite words for the semantic cache's meaning guard (semantic_guard.h), from WordNet's
// antonym pointers (Debian package wordnet-base, /usr/share/wordnet; Princeton's WordNet 3.0
// licence): show/hide, include/exclude, connect/disconnect, new/old, credit/debit, profit/loss,
// ... — the opposites a hand-written list misses. Irregular forms come from WordNet's exception
// lists (hid -> hide, sold -> sell), regular ones by stripping suffixes (shows, showed, showing).
//
// The data files are read once (about 20 MB, tens of milliseconds); a missing folder gives an
// empty table and the guard keeps only its own list. Thread-safe after construction.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/status.h"

namespace hotline::answer {

class Antonyms {
 public:
  // The table for the process: WordNet from /usr/share/wordnet, loaded on first use; empty (with
  // one warning in the log) when it is not installed.
  static const Antonyms& Shared();

  // Reads data.{noun,verb,adj,adv} and {noun,verb,adj}.exc from `dir`. Errors name the file and
  // line of a record that does not parse.
  static Result<Antonyms> LoadWordNet(const std::string& dir);

  // `a` and `b` (lowercase words, any inflection) have opposite senses in WordNet.
  bool Opposite(std::string_view a, std::string_view b) const;

  // Words with at least one antonym.
  size_t size() const { return has_.size(); }

 private:
  // The base forms `w` may be an inflection of, among words that have antonyms.
  std::vector<std::string> Lemmas(std::string_view w) const;

  std::unordered_set<std::string> pairs_;  // "a b" for every antonym pair, both orders
  std::unordered_set<std::string> has_;    // words with an antonym
  std::unordered_map<std::string, std::vector<std::string>> irregular_;  // form -> base forms
};

}  // namespace hotline::answer
