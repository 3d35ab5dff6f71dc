#include "train/adamw.h"

#include <gtest/gtest.h>

#include <cmath>

namespace hotline::train {
namespace {

TEST(AdamW, ScheduleWarmsUpThenFollowsTheCosine) {
  AdamWConfig c;
  c.lr = 1.0f;
  c.min_lr_ratio = 0.1f;
  c.warmup_steps = 10;
  c.total_steps = 110;
  EXPECT_FLOAT_EQ(ScheduledLr(c, 0), 0.1f);
  EXPECT_FLOAT_EQ(ScheduledLr(c, 9), 1.0f);
  EXPECT_FLOAT_EQ(ScheduledLr(c, 10), 1.0f);
  EXPECT_NEAR(ScheduledLr(c, 60), 0.55f, 1e-6);  // half way: mean of peak and floor
  EXPECT_FLOAT_EQ(ScheduledLr(c, 110), 0.1f);
  EXPECT_FLOAT_EQ(ScheduledLr(c, 500), 0.1f);
  for (int s = 11; s < 110; ++s) EXPECT_LE(ScheduledLr(c, s), ScheduledLr(c, s - 1));
}

TEST(AdamW, MinimizesAQuadraticAndDecaysOnlyMaskedWeights) {
  AdamWConfig c;
  c.lr = 0.05f;
  c.warmup_steps = 0;
  c.total_steps = 400;
  c.weight_decay = 0.0f;
  AdamW opt(c, {0, 0});
  std::vector<float> p = {3.0f, -2.0f}, g(2);
  for (int s = 0; s < 400; ++s) {
    g[0] = 2 * (p[0] - 1.0f);
    g[1] = 2 * (p[1] + 0.5f);
    opt.Step(p, g, s);
  }
  EXPECT_NEAR(p[0], 1.0f, 1e-2);
  EXPECT_NEAR(p[1], -0.5f, 1e-2);

  // With zero gradients only weight decay moves the parameters, and only the masked one.
  c.weight_decay = 0.5f;
  c.lr = 0.1f;
  AdamW decay(c, {1, 0});
  std::vector<float> q = {1.0f, 1.0f}, zero(2, 0.0f);
  decay.Step(q, zero, 0);
  EXPECT_FLOAT_EQ(q[0], 1.0f - 0.1f * 0.5f);
  EXPECT_FLOAT_EQ(q[1], 1.0f);
}

TEST(AdamW, ClipsTheGlobalNorm) {
  AdamWConfig c;
  c.clip_norm = 1.0f;
  AdamW opt(c, {0, 0});
  std::vector<float> p = {0, 0}, g = {3.0f, 4.0f};
  EXPECT_DOUBLE_EQ(opt.Step(p, g, 0), 5.0);
  EXPECT_FLOAT_EQ(g[0], 0.6f);
  EXPECT_FLOAT_EQ(g[1], 0.8f);
}

TEST(AdamW, ValidateNamesBadSettings) {
  AdamWConfig c;
  EXPECT_TRUE(c.Validate().ok());
  c.lr = 0;
  EXPECT_FALSE(c.Validate().ok());
  c = {};
  c.beta2 = 1.0f;
  EXPECT_FALSE(c.Validate().ok());
}

}  // namespace
}  // namespace hotline::train
