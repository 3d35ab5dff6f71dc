#include "engine/stop_matcher.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace hotline::engine {
namespace {

StopMatcher Make(std::vector<std::string> stops) {
  auto m = StopMatcher::Create(std::move(stops));
  EXPECT_TRUE(m.ok()) << m.status();
  return std::move(m).value();
}

TEST(StopMatcher, CutsAtAStopStringSplitOverChunks) {
  StopMatcher m = Make({"\nUser:"});
  std::string out;
  bool stopped = false;
  for (char c : std::string("Hello there.\nUser: more")) {
    auto o = m.Push(std::string(1, c));
    out += o.text;
    if (o.stopped) {
      stopped = true;
      break;
    }
  }
  EXPECT_TRUE(stopped);
  EXPECT_EQ(out, "Hello there.");
  EXPECT_EQ(m.matched(), "\nUser:");
  EXPECT_TRUE(m.Push("anything").text.empty());
  EXPECT_EQ(m.Flush(), "");
}

TEST(StopMatcher, HoldsBackOnlyWhatMayStartAStopString) {
  StopMatcher m = Make({"\nUser:"});
  auto o = m.Push("abc\nUs");
  EXPECT_EQ(o.text, "abc");
  EXPECT_FALSE(o.stopped);
  EXPECT_EQ(m.Push("e").text, "");
  EXPECT_EQ(m.Push("d to it").text, "\nUsed to it");
  EXPECT_EQ(m.Push("\n").text, "");
  EXPECT_EQ(m.Flush(), "\n");
}

TEST(StopMatcher, EarliestMatchWinsAmongSeveral) {
  StopMatcher m = Make({"cd", "abc"});
  auto o = m.Push("xabcd");
  EXPECT_TRUE(o.stopped);
  EXPECT_EQ(o.text, "x");
  EXPECT_EQ(m.matched(), "abc");
}

TEST(StopMatcher, OverlappingPrefixes) {
  StopMatcher m = Make({"aab"});
  std::string out;
  for (char c : std::string("aaab")) out += m.Push(std::string(1, c)).text;
  EXPECT_TRUE(m.stopped());
  EXPECT_EQ(out, "a");
}

TEST(StopMatcher, NoStopsPassesEverythingThrough) {
  StopMatcher m = Make({});
  EXPECT_EQ(m.Push("abc").text, "abc");
  EXPECT_EQ(m.Flush(), "");
}

TEST(StopMatcher, RejectsBadStopStrings) {
  EXPECT_FALSE(StopMatcher::Create({""}).ok());
  EXPECT_FALSE(StopMatcher::Create({std::string(StopMatcher::kMaxStopBytes + 1, 'x')}).ok());
  EXPECT_FALSE(StopMatcher::Create(std::vector<std::string>(StopMatcher::kMaxStops + 1, "x")).ok());
}

TEST(StopMatcher, AnyChunkingGivesTheReferenceCut) {
  // Reference: the text up to the earliest occurrence of any stop string.
  std::mt19937 rng(42);
  const std::vector<std::string> stops = {"ab", "bba", "cab"};
  for (int iter = 0; iter < 2000; ++iter) {
    std::string text;
    const int n = std::uniform_int_distribution<int>(0, 12)(rng);
    for (int i = 0; i < n; ++i) text.push_back("abcx"[std::uniform_int_distribution<int>(0, 3)(rng)]);
    size_t cut = std::string::npos;
    for (const auto& s : stops) cut = std::min(cut, text.find(s));
    const std::string want = cut == std::string::npos ? text : text.substr(0, cut);

    StopMatcher m = Make(stops);
    std::string got;
    size_t pos = 0;
    while (pos < text.size() && !m.stopped()) {
      const size_t len = std::uniform_int_distribution<size_t>(1, 4)(rng);
      got += m.Push(std::string_view(text).substr(pos, len)).text;
      pos += len;
    }
    got += m.Flush();
    EXPECT_EQ(got, want) << "text " << text;
    EXPECT_EQ(m.stopped(), cut != std::string::npos) << "text " << text;
  }
}

}  // namespace
}  // namespace hotline::engine
