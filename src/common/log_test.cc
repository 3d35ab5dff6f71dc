#include "common/log.h"

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

}  // namespace
}  // namespace hotline
