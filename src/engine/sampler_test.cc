#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <vector>

namespace hotline::engine {
namespace {

TEST(Sampler, GreedyPicksArgmaxAndIgnoresNaN) {
  SamplingConfig c;
  c.temperature = 0;
  Sampler s(c);
  std::vector<float> l = {0.1f, 3.f, std::numeric_limits<float>::quiet_NaN(), 2.9f};
  EXPECT_EQ(s.Sample(l, {}), 1);
}

TEST(Sampler, GreedyFastPathMatchesThePenalizedPathsRules) {
  // Greedy without a penalty reads the logits in place; with a penalty (and an empty window, so
  // nothing is penalized) it takes the general path. Both give the first maximum and treat
  // +inf, -inf and NaN as -inf.
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  SamplingConfig fast;
  fast.temperature = 0;
  SamplingConfig general = fast;
  general.repetition_penalty = 1.5f;
  for (const std::vector<float>& l : std::vector<std::vector<float>>{
           {-1.f, inf, 2.f, nan, 2.f, -inf},  // +inf ignored; first of the two 2s
           {-3.f, nan, nan},                  // only token 0 is finite
           {nan, -inf, inf},                  // nothing finite: token 0
       }) {
    Sampler a(fast), b(general);
    EXPECT_EQ(a.Sample(l, {}), b.Sample(l, {})) << l.size();
  }
  Sampler a(fast);
  EXPECT_EQ(a.Sample(std::vector<float>{-1.f, inf, 2.f, nan, 2.f, -inf}, {}), 2);
  EXPECT_EQ(a.Sample(std::vector<float>{-3.f, nan, nan}, {}), 0);
  EXPECT_EQ(a.Sample(std::vector<float>{nan, -inf, inf}, {}), 0);
}

TEST(Sampler, RepetitionPenaltyDemotesRecentTokens) {
  SamplingConfig c;
  c.repetition_penalty = 2.0f;
  Sampler s(c);
  std::vector<float> l = {1.f, 3.f, 2.f, -1.f};
  std::vector<int32_t> recent = {1, 1};  // 3 -> 1.5 (once, not twice)
  EXPECT_EQ(s.Sample(l, recent), 2);
  // Outside the window it does not apply.
  c.repeat_last_n = 1;
  Sampler s2(c);
  std::vector<int32_t> old = {1, 0};
  EXPECT_EQ(s2.Sample(l, old), 1);
}

TEST(Sampler, SeededSamplingIsReproducibleAndFollowsTheDistribution) {
  SamplingConfig c;
  c.temperature = 1.0f;
  c.top_k = 0;
  c.top_p = 1.0f;
  c.seed = 42;
  std::vector<float> l = {std::log(0.5f), std::log(0.3f), std::log(0.2f)};
  Sampler a(c), b(c);
  std::map<int, int> counts;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const int32_t x = a.Sample(l, {});
    EXPECT_EQ(x, b.Sample(l, {}));
    ++counts[x];
  }
  EXPECT_NEAR(counts[0] / double(n), 0.5, 0.02);
  EXPECT_NEAR(counts[1] / double(n), 0.3, 0.02);
  EXPECT_NEAR(counts[2] / double(n), 0.2, 0.02);
}

TEST(Sampler, TopKAndTopPRestrictTheCandidates) {
  std::vector<float> l = {std::log(0.4f), std::log(0.3f), std::log(0.2f), std::log(0.1f)};
  SamplingConfig c;
  c.temperature = 1.0f;
  c.top_p = 1.0f;
  c.top_k = 2;
  Sampler k(c);
  for (int i = 0; i < 2000; ++i) EXPECT_LT(k.Sample(l, {}), 2);
  c.top_k = 0;
  c.top_p = 0.65f;  // 0.4 + 0.3 reaches it
  Sampler p(c);
  for (int i = 0; i < 2000; ++i) EXPECT_LT(p.Sample(l, {}), 2);
  // Low temperature sharpens towards the argmax.
  c.top_p = 1.0f;
  c.temperature = 0.05f;
  Sampler t(c);
  int zero = 0;
  for (int i = 0; i < 2000; ++i) zero += t.Sample(l, {}) == 0;
  EXPECT_GT(zero, 1990);
}

TEST(Sampler, ConfigValidation) {
  SamplingConfig c;
  EXPECT_TRUE(c.Validate().ok());
  c.beam_width = 2;
  EXPECT_FALSE(c.Validate().ok());
  c = {};
  c.top_p = 0;
  EXPECT_FALSE(c.Validate().ok());
  c = {};
  c.temperature = -1;
  EXPECT_FALSE(c.Validate().ok());
  c = {};
  c.max_tokens = 0;
  EXPECT_FALSE(c.Validate().ok());
}

}  // namespace
}  // namespace hotline::engine
