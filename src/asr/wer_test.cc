#include "asr/wer.h"

#include <gtest/gtest.h>

namespace hotline::asr {
namespace {

TEST(Wer, CountsEachKindOfError) {
  WerCounts w = ComputeWer("go forward ten meters", "go forward ten meters");
  EXPECT_EQ(w.errors(), 0);
  EXPECT_EQ(w.reference_words, 4);
  w = ComputeWer("go forward ten meters", "go four ward ten");  // S + I... or S S D
  EXPECT_EQ(w.errors(), 3);
  w = ComputeWer("cancel my order", "cancel order");
  EXPECT_EQ(w.deletions, 1);
  EXPECT_EQ(w.errors(), 1);
  w = ComputeWer("cancel my order", "please cancel my order");
  EXPECT_EQ(w.insertions, 1);
  EXPECT_DOUBLE_EQ(w.rate(), 1.0 / 3);
  w = ComputeWer("track my refund", "track my refunds");
  EXPECT_EQ(w.substitutions, 1);
}

TEST(Wer, EmptySides) {
  EXPECT_EQ(ComputeWer("", "").rate(), 0.0);
  EXPECT_EQ(ComputeWer("a b", "").deletions, 2);
  EXPECT_EQ(ComputeWer("", "a b").rate(), 2.0);
  EXPECT_EQ(SplitWords("  a\tb \n c ").size(), 3u);
}

TEST(Wer, ScoringNormalizationExpandsContractionsOnly) {
  EXPECT_EQ(NormalizeForScoring("I'm waiting  don't  CAN'T won't we've you'll they're"),
            "i am waiting do not can not will not we have you will they are");
  // Ambiguous or possessive forms stay as they are.
  EXPECT_EQ(NormalizeForScoring("it's the customer's he'd"), "it's the customer's he'd");
  EXPECT_EQ(NormalizeForScoring(""), "");
  // Written either way, the same spoken words score no error.
  EXPECT_EQ(ComputeWer(NormalizeForScoring("i'm waiting for a rebate"),
                       NormalizeForScoring("i am waiting for a rebate"))
                .errors(),
            0);
}

}  // namespace
}  // namespace hotline::asr
