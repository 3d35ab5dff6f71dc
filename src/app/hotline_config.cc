#include "app/hotline_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <string_view>

#include "common/build_paths.h"
#include "common/log.h"
#include "common/log_format.h"

namespace hotline {

namespace {

// Keys that moved to a transport-neutral section; still read, with a warning.
struct MovedKey {
  std::string_view section;  // old section
  std::string_view key;      // same key name in the new section
  std::string_view to_section;
};
constexpr MovedKey kMovedKeys[] = {
    {"twilio", "max_calls", "calls"},
    {"twilio", "over_capacity_text", "calls"},
    {"audiosocket", "over_capacity_text", "calls"},
};

// Keys that were removed; a file or --set that still gives one is an error that says why.
// An empty key stands for the whole section.
struct RemovedKey {
  std::string_view section;  // dotted path of the section
  std::string_view key;
  std::string_view why;
};
constexpr RemovedKey kRemovedKeys[] = {
    {"engine", "",
     "the top-level engine section was never read: the embedded engine's settings are "
     "llm.engine.* (the same keys); move them there"},
    {"llm.engine", "prefix_cache_sequences",
     "prompt-prefix reuse is the scheduler's block-level cache, bounded by "
     "llm.engine.kv_cache_bytes; delete the line"},
};

std::string Path(std::string_view section, std::string_view key) {
  return std::string(section) + "." + std::string(key);
}

// Moves each old key of `root` to its new place. Errors when both are given.
Status MoveDeprecatedKeys(YAML::Node root, const std::string& source) {
  if (!root.IsMap()) return Status::Ok();  // the reader reports it
  for (const MovedKey& m : kMovedKeys) {
    YAML::Node old_section = root[std::string(m.section)];
    if (!old_section.IsMap() || !old_section[std::string(m.key)]) continue;
    const std::string old_path = Path(m.section, m.key);
    const std::string new_path = Path(m.to_section, m.key);
    YAML::Node value = old_section[std::string(m.key)];
    YAML::Node to = root[std::string(m.to_section)];
    if (to.IsMap() && to[std::string(m.key)]) {
      return InvalidArgumentError(source + ":" + std::to_string(value.Mark().line + 1) + ": " +
                                  old_path + " and " + new_path + " are both set; " + old_path +
                                  " is the old name of " + new_path + ": keep only " + new_path);
    }
    HLOG_WARN("{}:{}: {} is deprecated: it is now {} (the cap and text are shared by every "
              "transport); read as {}",
              source, value.Mark().line + 1, old_path, new_path, new_path);
    if (!to.IsMap()) {
      if (to && !to.IsNull()) continue;  // not a mapping: the reader names the error
      root[std::string(m.to_section)] = YAML::Node(YAML::NodeType::Map);
      to = root[std::string(m.to_section)];
    }
    to[std::string(m.key)] = value;
    old_section.remove(std::string(m.key));
    // An old section left empty reads as defaults; yaml-cpp keeps it as an empty map.
  }
  return Status::Ok();
}

std::string RemovedPath(const RemovedKey& r) {
  return r.key.empty() ? std::string(r.section) : Path(r.section, r.key);
}

// The line (1-based) of the key at dotted `path` under `root`; 0 when the path is absent.
int FindKeyLine(const YAML::Node& root, std::string_view path) {
  YAML::Node node = root;
  size_t at = 0;
  int line = 0;
  while (at <= path.size()) {
    const size_t dot = std::min(path.find('.', at), path.size());
    const std::string_view name = path.substr(at, dot - at);
    if (!node.IsMap()) return 0;
    bool found = false;
    for (const auto& kv : node) {
      if (kv.first.IsScalar() && kv.first.Scalar() == name) {
        line = kv.first.Mark().line + 1;
        node.reset(kv.second);  // reset: plain assignment would write through to the parent
        found = true;
        break;
      }
    }
    if (!found) return 0;
    at = dot + 1;
  }
  return line;
}

Status RejectRemovedKeys(const YAML::Node& root, const std::string& source) {
  for (const RemovedKey& r : kRemovedKeys) {
    const int line = FindKeyLine(root, RemovedPath(r));
    if (line == 0) continue;
    return InvalidArgumentError(source + ":" + std::to_string(line) + ": " + RemovedPath(r) +
                                " was removed: " + std::string(r.why));
  }
  return Status::Ok();
}

Status RejectRemovedOverride(const std::string& assignment) {
  for (const RemovedKey& r : kRemovedKeys) {
    const std::string path = RemovedPath(r);
    const std::string_view a = assignment;
    if (a.starts_with(path) && a.size() > path.size() &&
        (a[path.size()] == '=' || (r.key.empty() && a[path.size()] == '.'))) {
      return InvalidArgumentError("--set " + assignment + ": " + path + " was removed: " +
                                  std::string(r.why));
    }
  }
  return Status::Ok();
}

// "twilio.max_calls=40" -> "calls.max_calls=40", with a warning.
std::string RenameDeprecatedOverride(const std::string& assignment) {
  for (const MovedKey& m : kMovedKeys) {
    const std::string old_prefix = Path(m.section, m.key) + "=";
    if (assignment.rfind(old_prefix, 0) == 0) {
      const std::string renamed = Path(m.to_section, m.key) + "=" +
                                  assignment.substr(old_prefix.size());
      HLOG_WARN("--set {}: {} is deprecated: it is now {}", assignment, Path(m.section, m.key),
                Path(m.to_section, m.key));
      return renamed;
    }
  }
  return assignment;
}

Status ReadConfigWithMovedKeys(const std::string& path, HotlineConfig& cfg) {
  ASSIGN_OR_RETURN(std::string text, ReadConfigFile(path));
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(path + ":" + std::to_string(e.mark.line + 1) +
                                ": not valid YAML: " + e.msg);
  }
  if (!root || root.IsNull()) return Status::Ok();
  try {
    RETURN_IF_ERROR(RejectRemovedKeys(root, path));
    RETURN_IF_ERROR(MoveDeprecatedKeys(root, path));
    return config_internal::Reader::Read(root, "", path, cfg);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(path + ": " + e.what());
  }
}

}  // namespace

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
  // The demo model's context (hotline train --seq-len 160). The longest of the 27 answers it was
  // trained on (one knowledge-base article per intent) is 40 tokens, 41 with <|im_end|>; 48 keep
  // a margin and leave the question about 50 tokens after the 60-token system prompt.
  c.prompt.max_seq_len = 160;
  c.prompt.reserved_output_tokens = 48;
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
  if (!path.empty()) RETURN_IF_ERROR(ReadConfigWithMovedKeys(path, cfg));
  for (const auto& o : overrides) {
    RETURN_IF_ERROR(RejectRemovedOverride(o));
    RETURN_IF_ERROR(ApplyConfigOverride(RenameDeprecatedOverride(o), cfg));
  }
  if (cfg.llm.backend == "engine" && cfg.llm.engine.engine.model_path.empty()) {
    cfg.llm.engine.engine.model_path = DemoModelPath();
  }
  RETURN_IF_ERROR(ValidateConfig(cfg));
  SetLogFormat(cfg.log.format);
  return cfg;
}

Status LogConfig::Validate() const {
  if (format == "text" || format == "json") return Status::Ok();
  return InvalidArgumentError("format must be text or json, got '" + format + "'");
}

std::string RedactedConfigYaml(const HotlineConfig& cfg) {
  return DumpConfigYaml(cfg, {.redact_secrets = true});
}

}  // namespace hotline
