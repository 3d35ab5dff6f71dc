#include "train/trainer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "train/bpe_trainer.h"
#include "train/export.h"
#include "train/loss_plot.h"

namespace hotline::train {
namespace {

// A toy task with a learnable rule: the answer repeats the prompt's tokens in reverse.
std::vector<EncodedExample> ToyExamples(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<EncodedExample> out;
  for (int i = 0; i < n; ++i) {
    EncodedExample e;
    const int len = 3 + int(rng() % 4);
    for (int j = 0; j < len; ++j) e.tokens.push_back(2 + int32_t(rng() % 10));
    e.tokens.push_back(1);
    e.prompt_tokens = int(e.tokens.size());
    for (int j = len - 1; j >= 0; --j) e.tokens.push_back(e.tokens[size_t(j)]);
    e.tokens.push_back(0);
    out.push_back(std::move(e));
  }
  return out;
}

Checkpoint Fresh(uint64_t seed) {
  Checkpoint c;
  c.shape.n_vocab = 12;
  c.shape.dim = 32;
  c.shape.n_layer = 2;
  c.shape.n_head = 4;
  c.shape.n_head_kv = 2;
  c.shape.n_ff = 64;
  c.shape.seq_len = 16;
  c.params = InitParams(c.shape, seed);
  c.seed = seed;
  BpeTrainOptions bo;
  bo.vocab_size = 259;  // the checkpoint's GGUF needs a vocabulary of the model's size
  auto v = TrainBpe({}, bo);
  c.vocab = *v;
  c.vocab.tokens.resize(12);
  c.vocab.token_types.resize(12);
  c.vocab.eos_id = 0;
  c.vocab.eot_id = 1;
  return c;
}

TrainerOptions Options(int steps) {
  TrainerOptions o;
  o.steps = steps;
  o.batch = 8;
  o.log_every = 10;
  o.eval_every = 0;
  o.adam.lr = 1e-2f;
  o.adam.warmup_steps = 10;
  o.adam.total_steps = steps;
  return o;
}

TEST(Trainer, LossFallsOnALearnableTask) {
  engine::ComputePool pool(2);
  auto t = Trainer::Create(Fresh(1), Options(150), pool);
  ASSERT_TRUE(t.ok()) << t.status();
  const auto train = ToyExamples(200, 2), test = ToyExamples(40, 3);
  std::vector<std::string> lines;
  ASSERT_TRUE((*t)->Run(train, test, [&](const std::string& l) { lines.push_back(l); }).ok());
  const auto& ev = (*t)->state().eval_loss;
  ASSERT_EQ(ev.size(), 2u);  // before and after
  EXPECT_LT(ev.back().loss, 0.8 * ev.front().loss);
  EXPECT_EQ((*t)->state().train_loss.size(), 15u);
  EXPECT_GT((*t)->stats().tokens, 0);
  const std::string svg = LossCurveSvg((*t)->state().train_loss, ev, "toy");
  EXPECT_NE(svg.find("<svg"), std::string::npos);
  EXPECT_NE(svg.find("held-out loss"), std::string::npos);
}

TEST(Trainer, ResumingFromACheckpointGivesTheUninterruptedRun) {
  const auto train = ToyExamples(100, 4);
  const std::string path = ::testing::TempDir() + "/trainer_test.ckpt.gguf";
  auto quiet = [](const std::string&) {};
  engine::ComputePool pool(2);

  auto full = Trainer::Create(Fresh(5), Options(30), pool);
  ASSERT_TRUE(full.ok());
  ASSERT_TRUE((*full)->Run(train, {}, quiet).ok());

  TrainerOptions first = Options(30);
  first.steps = 30;
  first.checkpoint_path = path;
  first.checkpoint_every = 12;
  // Stop after 12 steps: run a trainer whose run ends there, then resume from its checkpoint.
  {
    TrainerOptions o = first;
    o.steps = 12;
    o.adam.total_steps = 30;  // same schedule as the full run
    auto part = Trainer::Create(Fresh(5), o, pool);
    ASSERT_TRUE(part.ok());
    ASSERT_TRUE((*part)->Run(train, {}, quiet).ok());
  }
  auto ckpt = LoadCheckpoint(path);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status();
  EXPECT_EQ(ckpt->step, 12);
  auto resumed = Trainer::Create(std::move(*ckpt), Options(30), pool);
  ASSERT_TRUE(resumed.ok());
  ASSERT_TRUE((*resumed)->Run(train, {}, quiet).ok());
  EXPECT_EQ((*resumed)->state().params, (*full)->state().params);
  std::remove(path.c_str());
}

TEST(Trainer, CheckpointRejectsAFileThatIsNotOne) {
  const std::string path = ::testing::TempDir() + "/not_a_checkpoint.gguf";
  FILE* f = std::fopen(path.c_str(), "wb");
  std::fputs("GGUF but not really", f);
  std::fclose(f);
  EXPECT_FALSE(LoadCheckpoint(path).ok());
  std::remove(path.c_str());
  EXPECT_FALSE(LoadCheckpoint(path).ok());
}

}  // namespace
}  // namespace hotline::train
