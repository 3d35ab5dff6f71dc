#include "engine/model_presets.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "common/build_paths.h"
#include "engine/chat_template.h"

namespace hotline::engine {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(ModelPresets, EveryPresetIsComplete) {
  std::set<std::string_view> names;
  for (const ModelPreset& p : ModelPresets()) {
    EXPECT_TRUE(names.insert(p.name).second) << p.name;
    EXPECT_TRUE(p.architecture == "llama" || p.architecture == "qwen2") << p.name;
    EXPECT_EQ(p.url.rfind("https://huggingface.co/", 0), 0u) << p.name;
    EXPECT_EQ(p.url.substr(p.url.size() - p.file_name.size()), p.file_name) << p.name;
    EXPECT_TRUE(ParseChatFormat(p.chat_format).ok()) << p.name;
    EXPECT_FALSE(p.stop_tokens.empty()) << p.name;
    EXPECT_TRUE(p.sha256.empty() || p.sha256.size() == 64) << p.name;
    EXPECT_EQ(p.prompt_tokens, 600) << p.name;
    EXPECT_EQ(p.answer_tokens, 60) << p.name;
    // The ready configuration exists and points at the preset's file and chat format.
    const std::string config =
        ReadFile(std::string(HOTLINE_SOURCE_DIR) + "/" + std::string(p.config_file));
    ASSERT_FALSE(config.empty()) << p.config_file;
    EXPECT_NE(config.find("model_path: models/" + std::string(p.file_name)), std::string::npos)
        << p.name;
    EXPECT_NE(config.find("chat_template: " + std::string(p.chat_format)), std::string::npos)
        << p.name;
    EXPECT_NE(config.find("hotline model pull " + std::string(p.name)), std::string::npos)
        << p.name;
  }
  for (std::string_view want : {"qwen2.5-0.5b", "qwen2.5-1.5b", "qwen2.5-3b", "llama3.2-1b",
                                "llama3.2-3b", "smollm2-360m", "smollm2-1.7b"}) {
    EXPECT_NE(FindModelPreset(want), nullptr) << want;
  }
  EXPECT_NE(FindModelPreset("Qwen2.5-0.5B"), nullptr);
  EXPECT_EQ(FindModelPreset("gpt-5"), nullptr);
}

}  // namespace
}  // namespace hotline::engine
