// Lines of business Hotline ships (`--domain NAME` of `hotline serve`, `hotline call` and
// `hotline eval spoken`): a knowledge base and the configuration preset that goes with it.
//   retail   assets/kb/bitext_kb.csv    config/hotline.yaml  (the demo line, the default)
//   banking  assets/kb/banking/kb.csv   config/banking.yaml
//   telecom_zh  assets/kb/telecom_zh/kb.csv  config/telecom_zh.yaml  (Mandarin, docs/mandarin.md)
// Any NAME with assets/kb/NAME/kb.csv and config/NAME.yaml is a line. Needs HOTLINE_ASSETS_DIR.
#pragma once

#include <filesystem>
#include <string>

#include "common/build_paths.h"
#include "common/status.h"

namespace hotline::cli {

struct DomainFiles {
  std::string kb_csv;
  std::string config;
};

inline Result<DomainFiles> ResolveDomain(const std::string& name) {
  if (name.empty() || name.size() > 64 ||
      name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") != std::string::npos) {
    return InvalidArgumentError("--domain: a lower-case name such as retail or banking");
  }
  const std::string assets = HOTLINE_ASSETS_DIR;
  DomainFiles f;
  if (name == "retail") {
    f = {assets + "/kb/bitext_kb.csv", assets + "/../config/hotline.yaml"};
  } else {
    f = {assets + "/kb/" + name + "/kb.csv", assets + "/../config/" + name + ".yaml"};
  }
  std::error_code ec;
  if (!std::filesystem::exists(f.kb_csv, ec) || !std::filesystem::exists(f.config, ec)) {
    return NotFoundError("--domain " + name + ": needs " + f.kb_csv + " and " + f.config +
                         " (shipped lines: retail, banking, telecom_zh)");
  }
  return f;
}

}  // namespace hotline::cli
