#include "app/hotline_config.h"

#include <yaml-cpp/yaml.h>

namespace hotline {

std::string DemoModelPath() {
  return std::string(HOTLINE_ASSETS_DIR) + "/models/demo-agent.q8_0.gguf";
}

llm::LlmConfig DemoLlmConfig() {
  llm::LlmConfig c;
  c.backend = "engine";
  return c;
}

answer::AnswererConfig DemoAnswererConfig() {
  answer::AnswererConfig c;
  // The demo model's context (hotline train --seq-len 160). Its longest answer on the held-out
  // questions is 34 tokens plus <|im_end|>; 40 leave the question about 55 tokens after the
  // 60-token system prompt.
  c.prompt.max_seq_len = 160;
  c.prompt.reserved_output_tokens = 40;
  c.prompt.max_passages = 0;
  c.prompt.max_history_messages = 0;
  return c;
}

Status HotlineConfig::Validate() const {
  static const char* kLevels[] = {"trace", "debug", "info", "warn", "error", "off"};
  for (const char* l : kLevels) {
    if (log_level == l) return Status::Ok();
  }
  return InvalidArgumentError("log_level must be one of trace|debug|info|warn|error|off, got '" +
                              log_level + "'");
}

Result<HotlineConfig> LoadHotlineConfig(const std::string& path,
                                        const std::vector<std::string>& overrides) {
  HotlineConfig cfg;
  if (!path.empty()) RETURN_IF_ERROR(LoadConfigFile(path, cfg));
  for (const auto& o : overrides) RETURN_IF_ERROR(ApplyConfigOverride(o, cfg));
  if (cfg.llm.backend == "engine" && cfg.llm.engine.engine.model_path.empty()) {
    cfg.llm.engine.engine.model_path = DemoModelPath();
  }
  RETURN_IF_ERROR(ValidateConfig(cfg));
  return cfg;
}

namespace {

bool IsSecretKey(const std::string& key) {
  return key == "token" || key == "password" || key == "secret" || key == "api_key";
}

// "redis://user:pass@host:6379" -> "redis://<redacted>@host:6379".
std::string RedactUrlUserinfo(const std::string& v) {
  const size_t scheme = v.find("://");
  if (scheme == std::string::npos) return v;
  const size_t at = v.find('@', scheme + 3);
  const size_t slash = v.find('/', scheme + 3);
  if (at == std::string::npos || (slash != std::string::npos && slash < at)) return v;
  return v.substr(0, scheme + 3) + "<redacted>" + v.substr(at);
}

void Redact(YAML::Node node) {
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      const std::string key = it->first.as<std::string>();
      if (IsSecretKey(key) && it->second.IsScalar() && !it->second.as<std::string>().empty()) {
        it->second = "<redacted>";
      } else {
        Redact(it->second);
      }
    }
  } else if (node.IsSequence()) {
    for (auto child : node) Redact(child);
  } else if (node.IsScalar()) {
    const std::string v = node.as<std::string>();
    const std::string r = RedactUrlUserinfo(v);
    if (r != v) node = r;
  }
}

}  // namespace

std::string RedactedConfigYaml(const HotlineConfig& cfg) {
  YAML::Node root = YAML::Load(DumpConfigYaml(cfg));
  Redact(root);
  YAML::Emitter e;
  e << root;
  return std::string(e.c_str()) + "\n";
}

}  // namespace hotline
