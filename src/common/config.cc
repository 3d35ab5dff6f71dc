#include "common/config.h"

#include <cerrno>
#include <charconv>
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

namespace {

bool IsAsciiAlnum(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Code points YAML 1.1 readers take as line breaks or a byte-order mark (NEL, LS, PS, BOM): a
// plain or quoted scalar holding one raw would not read back the same.
bool HasYamlBreakCodePoint(std::string_view s) {
  for (size_t i = 0; i + 1 < s.size(); ++i) {
    const auto c0 = static_cast<unsigned char>(s[i]);
    const auto c1 = static_cast<unsigned char>(s[i + 1]);
    if (c0 == 0xC2 && c1 == 0x85) return true;  // U+0085
    if (i + 2 < s.size()) {
      const auto c2 = static_cast<unsigned char>(s[i + 2]);
      if (c0 == 0xE2 && c1 == 0x80 && (c2 == 0xA8 || c2 == 0xA9)) return true;  // U+2028/9
      if (c0 == 0xEF && c1 == 0xBB && c2 == 0xBF) return true;                  // U+FEFF
    }
  }
  return false;
}

// Whether `s` may be written as a plain scalar: it starts with a letter, digit, '_', '/', '<' or
// a non-ASCII character, holds only those and a few punctuation marks that are not YAML syntax
// where they stand, has no ": " or " #", does not end in a space or ':', and does not read as a
// null, a boolean or a number (such strings are quoted so that other YAML tools keep them
// strings too).
bool PlainSafe(std::string_view s) {
  if (s.empty()) return false;
  const auto first = static_cast<unsigned char>(s.front());
  if (!(IsAsciiAlnum(first) || first == '_' || first == '/' || first == '<' || first >= 0x80)) {
    return false;
  }
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (IsAsciiAlnum(c) || c >= 0x80) continue;
    switch (c) {
      case ' ':
        if (i + 1 == s.size() || s[i + 1] == '#' || s[i + 1] == ' ') return false;
        continue;
      case ':':
        if (i + 1 == s.size() || s[i + 1] == ' ') return false;
        continue;
      case '_': case '.': case '/': case '@': case '+': case '-': case '=': case ',': case '(':
      case ')': case '\'': case '!': case '?': case '%': case ';': case '<': case '>':
        continue;
      default:
        return false;
    }
  }
  if (first >= 0x80) return !HasYamlBreakCodePoint(s);
  if (s.size() <= 5) {
    std::string lower(s);
    for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    for (const char* word : {"null", "true", "false", "yes", "no", "on", "off", "y", "n"}) {
      if (lower == word) return false;
    }
  }
  // What strtod reads whole ("12", "1e5", "inf", "nan", "0x1F") starts with a digit, i or n.
  if ((first >= '0' && first <= '9') || first == 'i' || first == 'I' || first == 'n' ||
      first == 'N') {
    const std::string text(s);
    char* end = nullptr;
    (void)std::strtod(text.c_str(), &end);
    if (end == text.c_str() + text.size()) return false;
  }
  return !HasYamlBreakCodePoint(s);
}

std::string DoubleQuotedYaml(std::string_view s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\t': out += "\\t"; continue;
      case '\r': out += "\\r"; continue;
      default: break;
    }
    if (c < 0x20 || c == 0x7F) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\x%02X", c);
      out += esc;
      continue;
    }
    // NEL, LS, PS and BOM as escapes (see HasYamlBreakCodePoint); \u, because some readers
    // decode \N to a lone byte 0x85, which is not UTF-8.
    const std::string_view rest = s.substr(i);
    if (rest.starts_with("\xC2\x85")) { out += "\\u0085"; ++i; continue; }
    if (rest.starts_with("\xE2\x80\xA8")) { out += "\\u2028"; i += 2; continue; }
    if (rest.starts_with("\xE2\x80\xA9")) { out += "\\u2029"; i += 2; continue; }
    if (rest.starts_with("\xEF\xBB\xBF")) { out += "\\uFEFF"; i += 2; continue; }
    out += static_cast<char>(c);
  }
  out += '"';
  return out;
}

}  // namespace

std::string ScalarYaml(std::string_view s) {
  return PlainSafe(s) ? std::string(s) : DoubleQuotedYaml(s);
}

std::string NumberYaml(double v) {
  if (std::isnan(v)) return ".nan";
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back exactly
  return std::string(buf, r.ptr);
}

std::string ValueYaml(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ", ";
    // Flow context: ',', brackets and braces end a plain item there, so such items are quoted.
    const bool flow_plain = v[i].find_first_of(",[]{}") == std::string::npos && PlainSafe(v[i]);
    out += flow_plain ? v[i] : DoubleQuotedYaml(v[i]);
  }
  return out + "]";
}

std::string ValueYaml(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i > 0 ? ", " : "") + NumberYaml(v[i]);
  return out + "]";
}

bool IsSecretKey(std::string_view key) {
  if (key == "token" || key == "password" || key == "secret" || key == "api_key") return true;
  // twilio.auth_token, calls.softphone_token, store.redis.password, ...
  for (std::string_view suffix : {"_token", "_password", "_secret"}) {
    if (key.size() > suffix.size() && key.ends_with(suffix)) return true;
  }
  return false;
}

std::string RedactUrlUserinfo(const std::string& v) {
  const size_t scheme = v.find("://");
  if (scheme == std::string::npos) return v;
  const size_t at = v.find('@', scheme + 3);
  const size_t slash = v.find('/', scheme + 3);
  if (at == std::string::npos || (slash != std::string::npos && slash < at)) return v;
  return v.substr(0, scheme + 3) + "<redacted>" + v.substr(at);
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
