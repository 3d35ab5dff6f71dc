#include "common/config.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/utf8.h"

namespace hotline {
namespace config_internal {

std::string TypeName(const bool*) { return "boolean (true/false)"; }
std::string TypeName(const std::string*) { return "string"; }
std::string TypeName(const std::vector<std::string>*) { return "list of strings"; }
std::string TypeName(const std::vector<double>*) { return "list of numbers"; }

std::string Where(const std::string& file, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.line < 0) return file + ": ";
  return file + ":" + std::to_string(m.line + 1) + ": ";
}

namespace {
std::string Got(const YAML::Node& node) {
  if (node.IsScalar()) return "got '" + node.Scalar() + "'";
  if (node.IsMap()) return "got a mapping";
  if (node.IsSequence()) return "got a list";
  return "got nothing";
}
}  // namespace

std::string Decode(const YAML::Node& node, bool& out) {
  if (!node.IsScalar()) return Got(node);
  const std::string& s = node.Scalar();
  if (s == "true" || s == "yes" || s == "on") {
    out = true;
  } else if (s == "false" || s == "no" || s == "off") {
    out = false;
  } else {
    return Got(node);
  }
  return "";
}

namespace {
// Configured text is spoken, logged and dumped back to YAML; bytes that are not UTF-8 would be
// rewritten on the way (a dump turns each into U+FFFD), so they are refused here.
std::string NotUtf8(const std::string& text) {
  const size_t bad = FirstInvalidUtf8(text);
  if (bad == std::string::npos) return "";
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[bad]));
  return "text that is not valid UTF-8 (byte " + std::string(byte) + " at offset " +
         std::to_string(bad) + "); save the file as UTF-8";
}
}  // namespace

std::string Decode(const YAML::Node& node, std::string& out) {
  if (!node.IsScalar()) return Got(node);
  if (std::string err = NotUtf8(node.Scalar()); !err.empty()) return "got " + err;
  out = node.Scalar();
  return "";
}

std::string Decode(const YAML::Node& node, std::vector<std::string>& out) {
  if (!node.IsSequence()) return Got(node);
  std::vector<std::string> v;
  for (const auto& item : node) {
    if (!item.IsScalar()) return "an item " + Got(item);
    if (std::string err = NotUtf8(item.Scalar()); !err.empty()) return "an item got " + err;
    v.push_back(item.Scalar());
  }
  out = std::move(v);
  return "";
}

std::string Decode(const YAML::Node& node, std::vector<double>& out) {
  if (!node.IsSequence()) return Got(node);
  std::vector<double> v;
  for (const auto& item : node) {
    double d = 0;
    std::string err = DecodeFloat(item, d);
    if (!err.empty()) return "an item " + err;
    v.push_back(d);
  }
  out = std::move(v);
  return "";
}

std::string DecodeInteger(const YAML::Node& node, long double lo, long double hi,
                          long double& out) {
  if (!node.IsScalar()) return Got(node);
  const std::string& s = node.Scalar();
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE) return Got(node);
  if (v < lo || v > hi) {
    std::ostringstream os;
    os << Got(node) << " (allowed range " << static_cast<long long>(lo) << ".."
       << static_cast<unsigned long long>(hi) << ")";
    return os.str();
  }
  out = static_cast<long double>(v);
  return "";
}

std::string DecodeFloat(const YAML::Node& node, double& out) {
  if (!node.IsScalar()) return Got(node);
  const std::string& s = node.Scalar();
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) return Got(node);
  out = v;
  return "";
}

YAML::Node Encode(bool v) { return YAML::Node(v ? "true" : "false"); }
YAML::Node Encode(const std::string& v) { return YAML::Node(v); }
YAML::Node Encode(const std::vector<std::string>& v) {
  YAML::Node n(YAML::NodeType::Sequence);
  for (const auto& s : v) n.push_back(s);
  return n;
}
YAML::Node Encode(const std::vector<double>& v) {
  YAML::Node n(YAML::NodeType::Sequence);
  for (double d : v) n.push_back(d);
  return n;
}

Result<YAML::Node> OverrideToYaml(std::string_view assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0) {
    return InvalidArgumentError("--set expects key.path=value, got '" + std::string(assignment) +
                                "'");
  }
  std::string path(assignment.substr(0, eq));
  std::string value(assignment.substr(eq + 1));
  YAML::Node leaf;
  try {
    leaf = YAML::Load(value);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError("--set " + std::string(assignment) + ": value is not valid YAML: " +
                                e.msg);
  }
  if (!leaf || leaf.IsNull()) leaf = YAML::Node(value);
  // Build the nesting from the innermost key outwards.
  std::vector<std::string> keys;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (key.empty()) {
      return InvalidArgumentError("--set " + std::string(assignment) + ": empty key in path");
    }
    keys.push_back(key);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  YAML::Node node = leaf;
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) {
    YAML::Node parent(YAML::NodeType::Map);
    parent[*it] = node;
    node = parent;
  }
  return node;
}

}  // namespace config_internal

Result<std::string> ReadConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot open config file " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  constexpr size_t kMaxConfigBytes = 4 << 20;
  if (text.size() > kMaxConfigBytes) {
    return InvalidArgumentError("config file " + path + " is larger than 4 MiB");
  }
  return text;
}

}  // namespace hotline
