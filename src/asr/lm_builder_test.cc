#include "asr/lm_builder.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "common/build_paths.h"

namespace hotline::asr {
namespace {

using Words = std::vector<std::string>;

TEST(LmWords, NormalizesLikeACallerSpeaks) {
  EXPECT_EQ(LmWords("How can I cancel purchase 00123?"),
            (Words{"how", "can", "i", "cancel", "purchase", "zero", "zero", "one", "two", "three"}));
  EXPECT_EQ(LmWords("I don't want 2 items, just 24"),
            (Words{"i", "don't", "want", "two", "items", "just", "twenty", "four"}));
  EXPECT_EQ(LmWords("where's my e-mail/invoice"), (Words{"where's", "my", "e", "mail", "invoice"}));
  EXPECT_EQ(LmWords("I can\xE2\x80\x99t log in"), (Words{"i", "can't", "log", "in"}));
  EXPECT_EQ(LmWords("track order {{Order Number}} now"),
            (Words{"track", "order", std::string(kLmBreak), "now"}));
  EXPECT_EQ(LmWords("'quoted'  ...  "), (Words{"quoted"}));
  EXPECT_EQ(NormalizeTranscriptText("Track {{Order Number}}, please!"), "track please");
}

TEST(ParseCsv, QuotesAndMultilineFields) {
  auto rows = ParseCsv("a,b,c\n1,\"two, \"\"2\"\"\nlines\",3\r\nx,,z");
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[1][1], "two, \"2\"\nlines");
  EXPECT_EQ((*rows)[2], (Words{"x", "", "z"}));
  EXPECT_FALSE(ParseCsv("a,\"open").ok());
}

// Reads an ARPA model back and computes back-off probabilities, to check that it is a proper
// distribution.
struct Arpa {
  std::map<std::string, std::pair<double, double>> entries;  // "w1 w2" -> (log10 p, backoff)
  std::vector<std::string> vocab;
  double LogProb(const Words& ngram) const {
    std::string key;
    for (const auto& w : ngram) key += (key.empty() ? "" : " ") + w;
    if (auto it = entries.find(key); it != entries.end()) return it->second.first;
    if (ngram.size() == 1) return -99;
    std::string ctx;
    for (size_t i = 0; i + 1 < ngram.size(); ++i) ctx += (ctx.empty() ? "" : " ") + ngram[i];
    double bo = 0;
    if (auto it = entries.find(ctx); it != entries.end()) bo = it->second.second;
    return bo + LogProb(Words(ngram.begin() + 1, ngram.end()));
  }
};

Arpa ParseArpa(const std::string& text) {
  Arpa a;
  std::istringstream in(text);
  std::string line;
  int order = 0;
  while (std::getline(in, line)) {
    if (line.size() > 2 && line[0] == '\\' && line.find("-grams:") != std::string::npos) {
      order = line[1] - '0';
      continue;
    }
    if (order == 0 || line.empty() || line[0] == '\\') continue;
    std::istringstream f(line);
    double lp;
    f >> lp;
    Words ws;
    for (int i = 0; i < order; ++i) {
      std::string w;
      f >> w;
      ws.push_back(w);
    }
    double bo = 0;
    f >> bo;
    std::string key;
    for (const auto& w : ws) key += (key.empty() ? "" : " ") + w;
    a.entries[key] = {lp, bo};
    if (order == 1 && ws[0] != "<s>") a.vocab.push_back(ws[0]);
  }
  return a;
}

TEST(NgramLmBuilder, WittenBellTrigramIsNormalized) {
  NgramLmBuilder b(3);
  b.AddText("I want to cancel my order");
  b.AddText("I want to track my order");
  b.AddText("cancel my subscription");
  b.AddText("track my refund please");
  auto arpa = b.ToArpa();
  ASSERT_TRUE(arpa.ok()) << arpa.status();
  EXPECT_NE(arpa->find("ngram 3="), std::string::npos);
  Arpa a = ParseArpa(*arpa);
  ASSERT_EQ(a.vocab.size(), 11u);  // 10 words + </s>
  for (const Words& h : {Words{"<s>", "i"}, Words{"want", "to"}, Words{"my", "order"},
                         Words{"cancel", "my"}, Words{"zzz", "my"}, Words{"track", "zzz"}}) {
    double sum = 0;
    for (const auto& w : a.vocab) sum += std::pow(10.0, a.LogProb({h[0], h[1], w}));
    EXPECT_NEAR(sum, 1.0, 1e-4) << h[0] << " " << h[1];
  }
  // Seen continuations beat unseen ones.
  EXPECT_GT(a.LogProb({"to", "cancel", "my"}), a.LogProb({"to", "cancel", "please"}));
  EXPECT_EQ(b.stats().sentences, 4);
  EXPECT_EQ(b.stats().vocabulary, 11);
}

TEST(NgramLmBuilder, DropsWordsOutsideTheDictionary) {
  std::unordered_set<std::string> dict = {"cancel", "my", "order"};
  NgramLmBuilder b(3, &dict);
  b.AddText("cancel my ordr order");
  auto arpa = b.ToArpa();
  ASSERT_TRUE(arpa.ok());
  EXPECT_EQ(b.stats().oov_words, 1);
  ASSERT_EQ(b.stats().top_oov.size(), 1u);
  EXPECT_EQ(b.stats().top_oov[0].first, "ordr");
  EXPECT_EQ(arpa->find("ordr"), std::string::npos);
  EXPECT_EQ(arpa->find("my order"), std::string::npos);  // no n-gram bridges the dropped word
  NgramLmBuilder empty(3, &dict);
  empty.AddText("nothing known here");
  EXPECT_FALSE(empty.ToArpa().ok());
}

TEST(ReadTrainingTexts, BitextInstructions) {
  auto texts = ReadTrainingTexts(std::string(HOTLINE_SHARED_DATA_DIR) +
                                 "/support/bitext/customer_support.csv");
  ASSERT_TRUE(texts.ok()) << texts.status();
  EXPECT_EQ(texts->size(), 4514u);
  EXPECT_FALSE(ReadTrainingTexts(std::string(HOTLINE_SHARED_DATA_DIR) +
                                 "/support/bitext/customer_support.csv", "nope").ok());
  EXPECT_FALSE(ReadTrainingTexts("/nonexistent.txt").ok());
}

TEST(WriteDomainLm, WritesModelAndItsDictionary) {
  const std::string dict = "/tmp/hotline_lm_dict_" + std::to_string(getpid()) + ".dict";
  const std::string out = "/tmp/hotline_lm_out_" + std::to_string(getpid()) + ".lm";
  {
    std::ofstream d(dict);
    d << "track T R AE K\nmy M AY\norder AO R D ER\nbill B IH L\n";
  }
  LmMix alone;  // the texts alone: no broad corpus, no letter-to-sound pronunciations
  alone.broad_corpus.clear();
  alone.lts_min_count = 0;
  alone.domain_repeat = 1;
  auto stats = WriteDomainLm({"track my order", "my bill", "track my parcel"}, dict, out, 3, alone);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->oov_words, 1);  // "parcel" has no pronunciation
  std::stringstream arpa, words;
  arpa << std::ifstream(out).rdbuf();
  words << std::ifstream(out + ".dict").rdbuf();
  EXPECT_NE(arpa.str().find("\\data\\"), std::string::npos);
  EXPECT_NE(words.str().find("order AO R D ER"), std::string::npos);
  EXPECT_EQ(words.str().find("parcel"), std::string::npos);
  EXPECT_FALSE(WriteDomainLm({"x"}, "/nonexistent.dict", out, 3, alone).ok());
  EXPECT_FALSE(WriteDomainLm({"track"}, dict, "/nonexistent-dir/x.lm", 3, alone).ok());
  std::remove(dict.c_str());
  std::remove(out.c_str());
  std::remove((out + ".dict").c_str());
}

TEST(WriteDomainLm, MixesTheBroadCorpusAndPronouncesMissingWords) {
  const std::string dict = "/tmp/hotline_lm_dict2_" + std::to_string(getpid()) + ".dict";
  const std::string broad = "/tmp/hotline_lm_broad_" + std::to_string(getpid()) + ".txt";
  const std::string out = "/tmp/hotline_lm_out2_" + std::to_string(getpid()) + ".lm";
  std::ofstream(dict) << "track T R AE K\nmy M AY\norder AO R D ER\nwhere W EH R\nis IH Z\n";
  std::ofstream(broad) << "where is my parcel\nwhere is my order\n";
  LmMix mix;
  mix.broad_corpus = broad;
  mix.lts_min_count = 3;
  // "parcel" three times (twice in the texts, once in the broad corpus): pronounced by the
  // letter-to-sound rules and kept; "trck" twice: a typo, dropped.
  auto stats = WriteDomainLm({"track my parcel", "track my parcel", "track my order", "trck",
                              "trck"},
                             dict, out, 3, mix);
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->spelled_words, std::vector<std::string>{"parcel"});
  std::stringstream arpa, words;
  arpa << std::ifstream(out).rdbuf();
  words << std::ifstream(out + ".dict").rdbuf();
  EXPECT_NE(words.str().find("parcel P AA R S"), std::string::npos) << words.str();
  EXPECT_EQ(words.str().find("trck"), std::string::npos);
  // The broad corpus' phrasing is in the model: "where is" as a bigram.
  EXPECT_NE(arpa.str().find("where is"), std::string::npos);
  mix.broad_corpus = "/nonexistent/broad.txt";
  auto missing = WriteDomainLm({"track my order"}, dict, out, 3, mix);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(std::string(missing.status().message()).find("broad"), std::string::npos);
  for (const std::string& p : {dict, broad, out, out + ".dict"}) std::remove(p.c_str());
}

}  // namespace
}  // namespace hotline::asr
