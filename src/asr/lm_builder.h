// Domain language models for the embedded recognizer: from the knowledge base's questions and
// intent examples to an n-gram model in ARPA format that pocketsphinx loads.
//
// Text → words (LmWords): lower case; apostrophes kept inside words ("don't"); hyphens, slashes
// and other punctuation split words; numbers spoken the way callers say them (up to two digits as
// a number, "24" → "twenty four"; longer digit strings digit by digit, as order and account
// numbers are read); template placeholders ("{{Order Number}}") become a context break (no n-gram
// spans them), as do words missing from the pronunciation dictionary that WriteDomainLm could not
// pronounce by letter-to-sound rules either (typos): the recognizer can only output words it can
// pronounce, and an n-gram bridging a dropped word would teach it word pairs nobody says.
//
// Model: interpolated Witten-Bell smoothing, written in ARPA back-off form (the back-off weight of
// a context h is T(h) / (c(h) + T(h)), T = distinct followers), unigrams interpolated with a
// uniform distribution over the vocabulary. Witten-Bell suits small, repetitive corpora (a few
// thousand questions) where Kneser-Ney's count-of-counts discounts are poorly estimated.
//
// Thread-safety: a builder is used from one thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/status.h"

namespace hotline::asr {

// Marks a context break in LmWords() output.
inline constexpr std::string_view kLmBreak = "|";

// Normalizes `text` into words for the language model (see the file comment). Breaks are
// returned as kLmBreak; no dictionary check is made here.
std::vector<std::string> LmWords(std::string_view text);

// Normalizes `text` the same way and joins the words with single spaces, dropping breaks: the
// form reference transcripts are compared in.
std::string NormalizeTranscriptText(std::string_view text);

// The words of a pocketsphinx dictionary ("word PH ON ES" per line; "word(2)" variants fold into
// "word"). Bounded: refuses files over 64 MiB.
Result<std::unordered_set<std::string>> LoadDictionaryWords(const std::string& path);

// Writes the entries (all pronunciation variants) of `dictionary_path` whose word is in `words`
// to `out_path`: a dictionary for a switched domain model, which pocketsphinx loads in
// milliseconds instead of seconds and which saves ~45 MB per decoder. Returns the entries
// written.
Result<int64_t> WriteDictionarySubset(const std::string& dictionary_path,
                                      const std::unordered_set<std::string>& words,
                                      const std::string& out_path);

// Training texts from a file: for a .csv file with a header, the column named `csv_column`
// (RFC 4180 quoting, fields may span lines); otherwise one text per non-empty line.
// Bounded: refuses files over 256 MiB.
Result<std::vector<std::string>> ReadTrainingTexts(const std::string& path,
                                                   const std::string& csv_column = "instruction");

// Parses RFC 4180 CSV text (header row included) into rows of fields.
Result<std::vector<std::vector<std::string>>> ParseCsv(std::string_view text);

struct LmBuildStats {
  int64_t sentences = 0;
  int64_t words = 0;       // in-vocabulary words counted
  int64_t oov_words = 0;   // dropped: not in the dictionary
  int64_t vocabulary = 0;  // distinct words, with </s>
  std::vector<int64_t> ngrams;  // per order
  std::vector<std::pair<std::string, int64_t>> top_oov;  // most frequent dropped words
  std::vector<std::string> spelled_words;  // pronounced by letter-to-sound rules (WriteDomainLm)
};

class NgramLmBuilder {
 public:
  // `order` in [1, 5]. `dictionary`: words the recognizer can pronounce (nullptr: keep all);
  // must outlive the builder.
  explicit NgramLmBuilder(int order = 3,
                          const std::unordered_set<std::string>* dictionary = nullptr);

  // Adds one sentence/question.
  void AddText(std::string_view text);

  // The model in ARPA text format. FailedPrecondition when no word was added.
  Result<std::string> ToArpa();

  const LmBuildStats& stats() const { return stats_; }
  // Words of the model (without <s> and </s>).
  std::unordered_set<std::string> vocabulary() const;

 private:
  using Key = std::vector<int32_t>;
  struct Context {
    int64_t count = 0;     // c(h): n-grams starting with h
    int64_t followers = 0;  // T(h): distinct words after h
  };
  int32_t Id(const std::string& word);
  void CountRun(const std::vector<int32_t>& run);
  double Prob(const Key& ngram) const;  // interpolated probability of the last word
  double BackoffLog10(const Key& context) const;

  int order_;
  const std::unordered_set<std::string>* dictionary_;
  std::unordered_map<std::string, int32_t> ids_;
  std::vector<std::string> words_;
  std::vector<std::map<Key, int64_t>> counts_;    // [n-1]: n-gram counts
  std::vector<std::map<Key, Context>> contexts_;  // [n-1]: contexts of n-grams (length n-1)
  std::unordered_map<std::string, int64_t> oov_;
  int64_t unigram_total_ = 0;
  LmBuildStats stats_;
};

// The broad customer-service corpus shipped with Hotline (assets/asr/customer_service.txt): the
// train splits of Banking77, CLINC150 (in scope and out of scope) and Bitext, and the shipped
// knowledge bases' answers, one text per line (assets/asr/README.md).
std::string DefaultBroadCorpus();

// What a domain model is built from besides the deployment's texts.
struct LmMix {
  // Everyday customer-service questions (one per line) counted into every domain model, so that
  // the recognizer hears callers who word things their own way, not only the knowledge base's
  // phrasing (docs/speech-in.md). "" = the deployment's texts alone.
  std::string broad_corpus = DefaultBroadCorpus();
  // Each deployment text is counted this many times against once per broad line: the mix's
  // weight of the deployment's own wording. Tuned on a dev split (docs/speech-in.md).
  int domain_repeat = 3;
  // Words missing from the dictionary that occur at least this often (0: none) get a
  // pronunciation from flite's letter-to-sound rules (letter_to_sound.h) instead of being
  // dropped; rarer ones are taken for typos and dropped (Bitext repeats some typos twice).
  int lts_min_count = 3;
};

// Builds an `order`-gram model of `texts` (and mix.broad_corpus) over the words of the
// pronunciation dictionary at `dictionary_path` plus the words letter-to-sound rules pronounce,
// and writes it to `out_path` (ARPA, replaced atomically) with its own dictionary at
// `out_path + ".dict"` (what switched mode decodes with). Used by `hotline asr build-lm` and by
// services that build their domain model from the knowledge base at start-up. A broad corpus
// that cannot be read is an error naming it.
Result<LmBuildStats> WriteDomainLm(const std::vector<std::string>& texts,
                                   const std::string& dictionary_path, const std::string& out_path,
                                   int order = 3, const LmMix& mix = LmMix());

}  // namespace hotline::asr
