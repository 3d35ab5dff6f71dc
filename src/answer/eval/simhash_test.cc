#include "answer/eval/simhash.h"

#include <gtest/gtest.h>

#include "answer/understand/normalize.h"

namespace hotline::answer {
namespace {

TEST(SimHash, CloseTextsAreClose) {
  uint64_t a = SimHash64(NormalizeText("how do i reset my online banking password"));
  uint64_t b = SimHash64(NormalizeText("how do i reset my online banking password please"));
  uint64_t c = SimHash64(NormalizeText("what is the exchange rate for euros today"));
  EXPECT_EQ(a, SimHash64(NormalizeText("How do I reset my online banking password?")));
  EXPECT_LT(HammingDistance(a, b), HammingDistance(a, c));
  EXPECT_EQ(SimHash64(""), 0u);
}

TEST(SimHash, IndexFindsNearestWithinDistance) {
  SimHashIndex idx;
  uint64_t p0 = SimHash64("where is my card");
  uint64_t p1 = SimHash64("what is my balance");
  idx.Add(p0);
  idx.Add(p1);
  auto m = idx.Nearest(p1, 0);
  EXPECT_TRUE(m.found);
  EXPECT_EQ(m.id, 1u);
  m = idx.Nearest(p1, 0, /*skip=*/1);
  EXPECT_EQ(m.found, HammingDistance(p0, p1) == 0);
  // Eight flipped bits: found within 8, not within 7 (unless the other print is closer).
  m = idx.Nearest(p1 ^ 0xFFull, 8);
  EXPECT_TRUE(m.found);
  EXPECT_LE(m.distance, 8);
  if (HammingDistance(p0, p1 ^ 0xFFull) > 7) {
    EXPECT_FALSE(idx.Nearest(p1 ^ 0xFFull, 7).found);
  }
}

TEST(SimHash, CalibrationRespectsTarget) {
  std::vector<std::string> texts = {"a b c", "a b c d", "x y z", "x y z w", "p q", "p q r"};
  std::vector<std::string> labels = {"1", "1", "2", "2", "3", "3"};
  std::vector<uint64_t> prints;
  for (const auto& t : texts) prints.push_back(SimHash64(t));
  int d = CalibrateSimHashDistance(prints, texts, labels, 0.0);
  // At the chosen distance no neighbour hit is wrong.
  for (size_t i = 0; i < texts.size() && d >= 0; ++i) {
    int best = 65;
    size_t bj = 0;
    for (size_t j = 0; j < texts.size(); ++j) {
      if (j != i && HammingDistance(prints[i], prints[j]) < best) {
        best = HammingDistance(prints[i], prints[j]);
        bj = j;
      }
    }
    if (best <= d) {
      EXPECT_EQ(labels[bj], labels[i]);
    }
  }
}

}  // namespace
}  // namespace hotline::answer
