#include "answer/cache/antonyms.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "answer/cache/semantic_guard.h"

namespace hotline::answer {
namespace {

// A WordNet folder in miniature: two verb synsets that are each other's antonyms, written with
// the real record layout (byte offsets as synset ids, lexical pointers "!").
class MiniWordNet : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hotline_wordnet_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    // The second record starts right after the first; both offsets are 8 digits.
    const std::string header = "  1 This is a miniature of WordNet's data files.\n";
    std::string first = "OFFSET_A 30 v 02 show 0 display 0 001 ! OFFSET_B v 0101 | make visible\n";
    const size_t a = header.size();
    const size_t b = a + first.size();
    auto pad = [](size_t v) {
      std::string s = std::to_string(v);
      return std::string(8 - s.size(), '0') + s;
    };
    auto put = [](std::string& s, const std::string& key, const std::string& v) {
      s.replace(s.find(key), key.size(), v);
    };
    put(first, "OFFSET_A", pad(a));
    put(first, "OFFSET_B", pad(b));
    std::string second = "OFFSET_B 30 v 01 hide 0 001 ! OFFSET_A v 0101 | keep out of sight\n";
    put(second, "OFFSET_A", pad(a));
    put(second, "OFFSET_B", pad(b));
    Write("data.verb", header + first + second);
    for (const char* f : {"data.noun", "data.adj", "data.adv", "noun.exc", "adj.exc"}) Write(f, "");
    Write("verb.exc", "hid hide\nhidden hide\nshown show\n");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
  }
  std::filesystem::path dir_;
};

TEST_F(MiniWordNet, AntonymsWithTheirInflections) {
  auto t = Antonyms::LoadWordNet(dir_.string());
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->size(), 2u);
  EXPECT_TRUE(t->Opposite("show", "hide"));
  EXPECT_TRUE(t->Opposite("hide", "show"));
  EXPECT_TRUE(t->Opposite("hid", "shows"));      // irregular (verb.exc), regular -s
  EXPECT_TRUE(t->Opposite("showing", "hidden"));  // -ing, irregular participle
  EXPECT_TRUE(t->Opposite("showed", "hiding"));   // -ed, -ing with the e restored
  EXPECT_FALSE(t->Opposite("display", "hide"));   // a synonym without its own pointer
  EXPECT_FALSE(t->Opposite("show", "show"));
  EXPECT_FALSE(t->Opposite("show", "tell"));
}

TEST_F(MiniWordNet, ARecordThatDoesNotParseIsNamed) {
  Write("data.adj", "00000000 00 a 02 good 0 ! bad\n");
  auto t = Antonyms::LoadWordNet(dir_.string());
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("data.adj:1"), std::string::npos) << t.status();
  std::filesystem::remove(dir_ / "data.adj");
  auto missing = Antonyms::LoadWordNet(dir_.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("data.adj"), std::string::npos);
}

// The installed WordNet (Debian wordnet-base, installed by scripts/setup) through the guard.
TEST(Antonyms, TheGuardKnowsWordNetsOppositesPrefixesAndParticles) {
  if (Antonyms::Shared().size() == 0) GTEST_SKIP() << "WordNet (wordnet-base) not installed";
  EXPECT_GT(Antonyms::Shared().size(), 3000u);
  EXPECT_EQ(MeaningFlip("how do i show my balance", "how do i hide my balance"), "action");
  EXPECT_EQ(MeaningFlip("include my partner in the policy", "exclude my partner in the policy"),
            "action");
  EXPECT_EQ(MeaningFlip("is my new card here", "is my old card here"), "action");
  // A negating prefix, and opposite particles after the same verb.
  EXPECT_EQ(MeaningFlip("i need to uninstall the app", "i need to install the app"), "action");
  EXPECT_EQ(MeaningFlip("how do i opt in to emails", "how do i opt out of emails"), "action");
  EXPECT_EQ(MeaningFlip("sign in to online banking", "sign out of online banking"), "action");
  // Rewordings are not flips.
  EXPECT_EQ(MeaningFlip("how do i show my balance", "how can i show my balance"), "");
  EXPECT_EQ(MeaningFlip("i want to sign in to the app", "i would like to sign in to the app"), "");
  EXPECT_EQ(MeaningFlip("a problem in my account", "a problem with my account"), "");
  EXPECT_EQ(MeaningFlip("i need to stall the payment", "i need to install the app"), "");
}

}  // namespace
}  // namespace hotline::answer
