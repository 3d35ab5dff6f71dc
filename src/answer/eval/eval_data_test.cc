#include "answer/eval/eval_data.h"

#include <string>
#include <unistd.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "common/build_paths.h"

namespace hotline::answer {
namespace {

std::string TempFile(const std::string& name, const std::string& content) {
  std::string path = std::string(HOTLINE_BINARY_DIR) + "/eval_data_test_" + std::to_string(::getpid()) + "_" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

TEST(EvalData, CsvWithQuotesAndCrlf) {
  auto r = ParseLabelledCsv(
      "text,category\r\n\"Hello, world\",greet\r\n\"He said \"\"hi\"\"\",greet\r\nbye,leave\r\n",
      "t.csv");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].text, "Hello, world");
  EXPECT_EQ((*r)[1].text, "He said \"hi\"");
  EXPECT_EQ((*r)[2].label, "leave");
  // Columns found by name, in any order.
  auto swapped = ParseLabelledCsv("intent,text\nx,some text\n", "t.csv");
  ASSERT_TRUE(swapped.ok());
  EXPECT_EQ((*swapped)[0].text, "some text");
}

TEST(EvalData, CsvErrorsNameTheLine) {
  auto r = ParseLabelledCsv("text,category\nok,a\n\"unterminated,b\n", "bad.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.csv:3"), std::string::npos) << r.status();
  r = ParseLabelledCsv("text,category\nonly one field\n", "bad.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bad.csv:2"), std::string::npos) << r.status();
  EXPECT_FALSE(ParseLabelledCsv("foo,bar\nx,y\n", "h.csv").ok());
  EXPECT_FALSE(ParseLabelledCsv("", "e.csv").ok());
  EXPECT_FALSE(ParseLabelledCsv("text,category\n", "e.csv").ok());
  EXPECT_FALSE(ParseLabelledCsv("text,category\n\"a\"x,b\n", "q.csv").ok());
  EXPECT_FALSE(ParseLabelledCsv("text,category\n" + std::string(20000, 'a') + ",b\n", "l.csv").ok());
}

TEST(EvalData, JsonWithKeys) {
  std::string js = R"({"train": [["hi there", "greet"], ["bye", "leave"]], "oos": [["x", "oos"]]})";
  auto r = ParseLabelledJson(js, "train", "d.json");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->size(), 2u);
  auto missing = ParseLabelledJson(js, "test", "d.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("keys: oos, train"), std::string::npos)
      << missing.status();
  EXPECT_FALSE(ParseLabelledJson("{\"train\": [[1, 2]]}", "train", "d.json").ok());
  EXPECT_FALSE(ParseLabelledJson("{\"train\": 5}", "train", "d.json").ok());
  EXPECT_FALSE(ParseLabelledJson("{not json", "train", "d.json").ok());
  EXPECT_FALSE(ParseLabelledJson(js, "", "d.json").ok());
}

TEST(EvalData, FilesAndNegatives) {
  std::string csv = TempFile("a.csv", "text,category\nwhere is my card,card\n");
  auto r = LoadLabelledTexts(csv, "");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(LoadLabelledTexts(csv, "train").ok());  // key given for a CSV
  std::string txt = TempFile("n.txt", "what is the weather\n\n  \nplay music\r\n");
  auto n = LoadNegativeTexts(txt, "");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, (std::vector<std::string>{"what is the weather", "play music"}));
  std::string js = TempFile("n.json", R"({"oos_test": [["a", "oos"], "b"]})");
  auto nj = LoadNegativeTexts(js, "oos_test");
  ASSERT_TRUE(nj.ok()) << nj.status();
  EXPECT_EQ(nj->size(), 2u);
  EXPECT_EQ(LoadLabelledTexts("/nonexistent/file.csv", "").status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(LoadNegativeTexts(TempFile("e.txt", "\n\n"), "").ok());
}

TEST(EvalData, RealDataSetsLoad) {
  std::string dir = std::string(HOTLINE_SHARED_DATA_DIR) + "/intent/";
  auto b = LoadLabelledTexts(dir + "banking77/test.csv", "");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->size(), 3080u);
  auto c = LoadNegativeTexts(dir + "clinc150/data_full.json", "oos_test");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->size(), 1000u);
}

}  // namespace
}  // namespace hotline::answer
