#include "app/hotline_config.h"

namespace hotline {

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
  RETURN_IF_ERROR(ValidateConfig(cfg));
  return cfg;
}

}  // namespace hotline
