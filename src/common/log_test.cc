#include "common/log.h"
#include "common/log_format.h"

#include <gtest/gtest.h>

#include <regex>
#include <vector>

namespace hotline {
namespace {

TEST(Log, RedactorAppliesToEveryMessage) {
  std::vector<std::string> lines;
  SetLogSinkForTest([&](std::string_view l) { lines.emplace_back(l); });
  SetLogRedactor([](std::string_view text) {
    return std::regex_replace(std::string(text), std::regex("[0-9]{4,}"), "[digits]");
  });
  HLOG_INFO("caller said card {}", "4111111111111111");
  HLOG_DEBUG("pin is {}", 1234);
  SetLogRedactor(nullptr);
  HLOG_INFO("after {}", 5678);
  SetLogSinkForTest(nullptr);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("caller said card [digits]"), std::string::npos);
  EXPECT_EQ(lines[0].find("4111"), std::string::npos);
  EXPECT_NE(lines[1].find("pin is [digits]"), std::string::npos);
  EXPECT_NE(lines[2].find("after 5678"), std::string::npos);
}

TEST(Log, NoControlCharacterReachesALine) {
  std::vector<std::string> lines;
  SetLogSinkForTest([&](std::string_view l) { lines.emplace_back(l); });
  HLOG_WARN("call {}: closing", "CA1\nerror forged line\r\x1b[2J\x7f");
  SetLogSinkForTest(nullptr);
  ASSERT_EQ(lines.size(), 1u);
  std::string line = lines[0];
  ASSERT_EQ(line.back(), '\n');  // the formatter's own end of line
  line.pop_back();
  EXPECT_EQ(line, "warning call CA1\\nerror forged line\\r\\x1b[2J\\x7f: closing");
}

TEST(Log, LogEscapeBoundsAndEscapes) {
  EXPECT_EQ(LogEscape("plain id-42"), "plain id-42");
  EXPECT_EQ(LogEscape("a\\b\tc\x01"), "a\\\\b\\tc\\x01");
  EXPECT_EQ(LogEscape(std::string(300, 'x'), 8), "xxxxxxxx...");
  EXPECT_EQ(LogEscape("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 passes
}

TEST(Log, JsonFormatWritesOneValidObjectPerLine) {
  std::vector<std::string> lines;
  SetLogSinkForTest([&](std::string_view l) { lines.emplace_back(l); });
  ASSERT_TRUE(SetLogFormat("json"));
  HLOG_INFO("said \"{}\" at {}", "hi\\there\nnext", "\xff\xfe end \xc3\xa9");
  ASSERT_TRUE(SetLogFormat("text"));
  EXPECT_FALSE(SetLogFormat("xml"));
  SetLogSinkForTest(nullptr);
  ASSERT_EQ(lines.size(), 1u);
  std::string line = lines[0];
  line.pop_back();
  EXPECT_EQ(line.front(), '{') << line;
  EXPECT_EQ(line.back(), '}') << line;
  EXPECT_NE(line.find(R"("level":"info")"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("msg":"said \"hi\\there\u000anext\" at \ufffd\ufffd end )"),
            std::string::npos)
      << line;
  for (char c : line) EXPECT_GE(static_cast<unsigned char>(c), 0x20u) << line;
}

}  // namespace
}  // namespace hotline
