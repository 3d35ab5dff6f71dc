#include "asr/turn_end_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

namespace hotline::asr {
namespace {

std::vector<std::string> Questions() {
  return {"can you send me a copy of my invoice",
          "when will i receive my refund",
          "where is my refund",
          "i want a copy of my invoice please",
          "how do i cancel my order",
          "cancel my order",
          "how can i get a refund",
          "can i see a copy of the invoice",
          "will i get my refund",
          "send me the invoice"};
}

TEST(TurnEndModel, LearnsWhereQuestionsEnd) {
  auto m = TurnEndModel::Train(Questions(), {.order = 3, .min_count = 1, .alpha = 1.0});
  ASSERT_TRUE(m.ok()) << m.status().message();
  // "of", "my", "will i" never end a question here; "my invoice", "my refund" often do.
  EXPECT_LT(m->EndProbability("can you send me a copy of"), 0.05);
  EXPECT_LT(m->EndProbability("when will i"), 0.05);
  EXPECT_LT(m->EndProbability("can you send me a copy of my"), 0.05);
  EXPECT_GT(m->EndProbability("can you send me a copy of my invoice"), 0.4);
  EXPECT_GT(m->EndProbability("when will i receive my refund"), 0.5);
  // Unseen words fall back to the prior: unsure, between the two.
  const double unseen = m->EndProbability("zebra");
  EXPECT_NEAR(unseen, m->prior(), 1e-9);
  EXPECT_GT(unseen, 0.05);
  EXPECT_LT(unseen, 0.5);
  // Punctuation and case are normalized like the training text.
  EXPECT_DOUBLE_EQ(m->EndProbability("Where is my REFUND?"),
                   m->EndProbability("where is my refund"));
}

TEST(TurnEndModel, SavesAndLoadsTheSameModel) {
  auto m = TurnEndModel::Train(Questions(), {.order = 2, .min_count = 1, .alpha = 2.0});
  ASSERT_TRUE(m.ok());
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("turn_end_model_test_" + std::to_string(::getpid())))
                               .string();
  ASSERT_TRUE(m->Save(path, "test corpus\nsecond line").ok());
  auto loaded = TurnEndModel::Load(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->contexts(), m->contexts());
  EXPECT_EQ(loaded->order(), 2);
  for (const char* t : {"cancel my order", "a copy of", "when will i", "nothing known"}) {
    EXPECT_DOUBLE_EQ(loaded->EndProbability(t), m->EndProbability(t)) << t;
  }
  EXPECT_EQ(loaded->Serialize("x"), m->Serialize("x"));
}

TEST(TurnEndModel, PrunesRareContexts) {
  auto all = TurnEndModel::Train(Questions(), {.order = 3, .min_count = 1});
  auto pruned = TurnEndModel::Train(Questions(), {.order = 3, .min_count = 2});
  ASSERT_TRUE(all.ok() && pruned.ok());
  EXPECT_LT(pruned->contexts(), all->contexts());
}

TEST(TurnEndModel, RejectsBadInput) {
  EXPECT_FALSE(TurnEndModel::Train({}, {}).ok());
  EXPECT_FALSE(TurnEndModel::Train({"{{Order Number}}"}, {}).ok());
  EXPECT_FALSE(TurnEndModel::Train(Questions(), {.order = 0}).ok());
  EXPECT_FALSE(TurnEndModel::Parse("", "empty").ok());
  EXPECT_FALSE(TurnEndModel::Parse("something else\n", "x").ok());
  const std::string head = "hotline-turn-end-model 1\norder 2\nalpha 2\n";
  EXPECT_FALSE(TurnEndModel::Parse(head + "3\t2\tmy order\n", "x").ok());  // ends > total
  EXPECT_FALSE(TurnEndModel::Parse(head + "1\t2\ta b c\n", "x").ok());     // longer than order
  EXPECT_FALSE(TurnEndModel::Parse(head + "1\tx\tmy\n", "x").ok());        // not a number
  EXPECT_FALSE(TurnEndModel::Parse(head + "1\t2\tmy\n", "x").ok());        // no prior line
  EXPECT_FALSE(TurnEndModel::Parse(head + "1\t9\t\n1\t2\tmy\n1\t2\tmy\n", "x").ok());  // twice
  auto ok = TurnEndModel::Parse(head + "# provenance\n1\t9\t\n1\t2\tmy\n", "x");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->contexts(), 2u);
  auto missing = TurnEndModel::Load("/nonexistent/turn_end.model");
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("train-turns"), std::string::npos);
}

}  // namespace
}  // namespace hotline::asr
