// Configuration: plain structs with in-class defaults, mapped onto one YAML file.
//
// Each config struct describes its fields once, with a visitor:
//
//   struct KvCacheConfig {
//     int block_tokens = 16;  // tokens per block: smaller wastes less, larger indexes faster
//     template <class V> void Visit(V& v) {
//       v.Field("block_tokens", block_tokens, "Tokens per KV block");
//       // nested structs: v.Section("name", member);
//     }
//     Status Validate() const;  // optional; says what to fix
//   };
//
// From that one description the loader reads YAML (unknown keys and wrong types are errors that
// name the key path and the file line), applies `--set a.b.c=value` overrides, runs every
// section's Validate() with its path as context, and dumps the effective config as YAML.
// Field types: bool, integers, float/double, std::string, std::vector<std::string>,
// std::vector<double>.
//
// Thread-safety: configs are values; load once at start-up, then share const.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/status.h"

namespace hotline {
namespace config_internal {

std::string TypeName(const bool*);
std::string TypeName(const std::string*);
std::string TypeName(const std::vector<std::string>*);
std::string TypeName(const std::vector<double>*);
template <typename T>
std::string TypeName(const T*) {
  if constexpr (std::is_floating_point_v<T>) return "number";
  else return "integer";
}

std::string Where(const std::string& file, const YAML::Node& node);

// Parses one YAML scalar/sequence into a field. Returns a message on failure (empty = ok).
std::string Decode(const YAML::Node& node, bool& out);
std::string Decode(const YAML::Node& node, std::string& out);
std::string Decode(const YAML::Node& node, std::vector<std::string>& out);
std::string Decode(const YAML::Node& node, std::vector<double>& out);
std::string DecodeInteger(const YAML::Node& node, long double lo, long double hi, long double& out);
std::string DecodeFloat(const YAML::Node& node, double& out);

template <typename T>
std::string Decode(const YAML::Node& node, T& out) {
  static_assert(std::is_arithmetic_v<T>, "unsupported config field type");
  if constexpr (std::is_floating_point_v<T>) {
    double d = 0;
    std::string err = DecodeFloat(node, d);
    if (err.empty()) out = static_cast<T>(d);
    return err;
  } else {
    long double v = 0;
    std::string err = DecodeInteger(node, static_cast<long double>(std::numeric_limits<T>::min()),
                                    static_cast<long double>(std::numeric_limits<T>::max()), v);
    if (err.empty()) out = static_cast<T>(v);
    return err;
  }
}

// A value as YAML text, the way `config show` writes it: strings plain when that reads back as
// the same string and double-quoted (with escapes) otherwise, numbers in their shortest form that
// reads back exactly. ValueYaml writes lists in flow style ([a, "b c"]); the writer puts non-empty
// lists in block style, one "- item" per line, each item through ScalarYaml.
std::string ScalarYaml(std::string_view s);
std::string NumberYaml(double v);
inline std::string ValueYaml(bool v) { return v ? "true" : "false"; }
inline std::string ValueYaml(const std::string& v) { return ScalarYaml(v); }
std::string ValueYaml(const std::vector<std::string>& v);
std::string ValueYaml(const std::vector<double>& v);
template <typename T>
std::string ValueYaml(const T& v) {
  static_assert(std::is_arithmetic_v<T>, "unsupported config field type");
  if constexpr (std::is_floating_point_v<T>) return NumberYaml(static_cast<double>(v));
  else return std::to_string(v);
}

// Keys whose values are secrets ("token", "password", "*_token", "*_secret", ...), and URLs with
// user information ("redis://user:pass@host" -> "redis://<redacted>@host").
bool IsSecretKey(std::string_view key);
std::string RedactUrlUserinfo(const std::string& v);

template <typename T>
concept HasValidate = requires(const T& t) {
  { t.Validate() } -> std::same_as<Status>;
};

inline std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

// Reads a YAML map into a struct, collecting the first error.
class Reader {
 public:
  Reader(const YAML::Node& node, std::string path, const std::string& file)
      : node_(node), path_(std::move(path)), file_(file) {}

  template <typename T>
  void Field(std::string_view key, T& field, std::string_view /*help*/) {
    seen_.insert(std::string(key));
    if (!error_.ok()) return;
    YAML::Node child = node_[std::string(key)];
    if (!child) return;
    std::string err = Decode(child, field);
    if (!err.empty()) {
      error_ = InvalidArgumentError(Where(file_, child) + Join(path_, key) + ": expected " +
                                    TypeName(&field) + ", " + err);
    }
  }

  template <typename T>
  void Section(std::string_view key, T& section) {
    seen_.insert(std::string(key));
    if (!error_.ok()) return;
    YAML::Node child = node_[std::string(key)];
    if (!child || child.IsNull()) return;
    error_ = Read(child, Join(path_, key), file_, section);
  }

  template <typename T>
  static Status Read(const YAML::Node& node, const std::string& path, const std::string& file,
                     T& cfg) {
    if (!node.IsMap()) {
      return InvalidArgumentError(Where(file, node) + (path.empty() ? "top level" : path) +
                                  ": expected a mapping of keys to values");
    }
    Reader r(node, path, file);
    cfg.Visit(r);
    if (!r.error_.ok()) return r.error_;
    for (const auto& kv : node) {
      std::string key = kv.first.as<std::string>();
      if (!r.seen_.count(key)) {
        return InvalidArgumentError(Where(file, kv.first) + "unknown key '" + Join(path, key) +
                                    "' (check the spelling; see docs/configuration.md)");
      }
    }
    return Status::Ok();
  }

 private:
  const YAML::Node& node_;
  std::string path_;
  const std::string& file_;
  std::set<std::string> seen_;
  Status error_;
};

// Lists every field's ValueYaml in visiting order (the same order for every value of a type).
class ValueLister {
 public:
  explicit ValueLister(std::vector<std::string>& out) : out_(out) {}
  template <typename T>
  void Field(std::string_view, const T& field, std::string_view) {
    out_.push_back(ValueYaml(field));
  }
  template <typename T>
  void Section(std::string_view, const T& section) {
    const_cast<T&>(section).Visit(*this);
  }

 private:
  std::vector<std::string>& out_;
};

// Writes a struct as block-style YAML text, two spaces per level. With `redact`, secret keys'
// non-empty values become <redacted> and URLs lose their user information; with `defaults` (the
// ValueLister list of a default-constructed struct), only fields that differ from it are written,
// and only sections holding such a field.
class TextWriter {
 public:
  TextWriter(std::string& out, int indent, bool redact, const std::vector<std::string>* defaults,
             size_t* next_default)
      : out_(out), indent_(indent), redact_(redact), defaults_(defaults), next_(next_default) {}

  template <typename T>
  void Field(std::string_view key, const T& field, std::string_view /*help*/) {
    if (defaults_ != nullptr) {
      const size_t i = (*next_)++;
      if (i < defaults_->size() && (*defaults_)[i] == ValueYaml(field)) return;
    }
    out_.append(static_cast<size_t>(indent_), ' ').append(key).append(":");
    if constexpr (std::is_same_v<T, std::string>) {
      out_.append(" ").append(ScalarYaml(Shown(key, field))).append("\n");
    } else if constexpr (std::is_same_v<T, std::vector<std::string>> ||
                         std::is_same_v<T, std::vector<double>>) {
      out_.append(field.empty() ? " []\n" : "\n");
      for (const auto& item : field) {
        out_.append(static_cast<size_t>(indent_) + 2, ' ').append("- ").append(Item(item));
        out_.append("\n");
      }
    } else {
      out_.append(" ").append(ValueYaml(field)).append("\n");
    }
  }

  template <typename T>
  void Section(std::string_view key, const T& section) {
    std::string body;
    TextWriter w(body, indent_ + 2, redact_, defaults_, next_);
    const_cast<T&>(section).Visit(w);
    if (body.empty() && defaults_ != nullptr) return;  // nothing changed here: left out
    out_.append(static_cast<size_t>(indent_), ' ').append(key).append(":");
    out_.append(body.empty() ? " {}\n" : "\n").append(body);
  }

 private:
  std::string Item(const std::string& v) const {
    return ScalarYaml(redact_ ? RedactUrlUserinfo(v) : v);
  }
  std::string Item(double v) const { return NumberYaml(v); }
  std::string Shown(std::string_view key, const std::string& v) const {
    if (!redact_) return v;
    if (IsSecretKey(key) && !v.empty()) return "<redacted>";
    return RedactUrlUserinfo(v);
  }

  std::string& out_;
  int indent_;
  bool redact_;
  const std::vector<std::string>* defaults_;
  size_t* next_;
};

// Calls Validate() on every section, deepest first, prefixing errors with the section's path.
class Validator {
 public:
  explicit Validator(std::string path) : path_(std::move(path)) {}
  template <typename T>
  void Field(std::string_view, const T&, std::string_view) {}
  template <typename T>
  void Section(std::string_view key, const T& section) {
    if (!error_.ok()) return;
    error_ = Run(Join(path_, key), section);
  }
  template <typename T>
  static Status Run(const std::string& path, const T& cfg) {
    Validator v(path);
    const_cast<T&>(cfg).Visit(v);
    RETURN_IF_ERROR(v.error_);
    if constexpr (HasValidate<T>) {
      Status s = cfg.Validate();
      if (!s.ok()) return path.empty() ? s : s.WithContext(path);
    }
    return Status::Ok();
  }

 private:
  std::string path_;
  Status error_;
};

// Lists "path  type  default  help" lines for the configuration reference.
class Describer {
 public:
  Describer(std::string path, std::vector<std::string>& lines) : path_(std::move(path)), lines_(lines) {}
  template <typename T>
  void Field(std::string_view key, const T& field, std::string_view help) {
    lines_.push_back(Join(path_, key) + "\t" + TypeName(&field) + "\t" + ValueYaml(field) +
                     "\t" + std::string(help));
  }
  template <typename T>
  void Section(std::string_view key, const T& section) {
    Describer d(Join(path_, key), lines_);
    const_cast<T&>(section).Visit(d);
  }

 private:
  std::string path_;
  std::vector<std::string>& lines_;
};

// Parses "a.b.c=value" into a YAML document {a: {b: {c: value}}}.
Result<YAML::Node> OverrideToYaml(std::string_view assignment);

}  // namespace config_internal

// Reads YAML text into `cfg` (keys absent from the text keep their defaults). `source` names the
// text in error messages (a file path, or "--set").
template <typename T>
Status ParseConfigYaml(std::string_view yaml_text, const std::string& source, T& cfg) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(source + ":" + std::to_string(e.mark.line + 1) +
                                ": not valid YAML: " + e.msg);
  }
  if (!root || root.IsNull()) return Status::Ok();  // empty file: all defaults
  try {
    return config_internal::Reader::Read(root, "", source, cfg);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(source + ": " + e.what());
  }
}

// Reads a YAML file into `cfg`.
Result<std::string> ReadConfigFile(const std::string& path);
template <typename T>
Status LoadConfigFile(const std::string& path, T& cfg) {
  ASSIGN_OR_RETURN(std::string text, ReadConfigFile(path));
  return ParseConfigYaml(text, path, cfg);
}

// Applies one command-line override "engine.max_batch_size=16".
template <typename T>
Status ApplyConfigOverride(std::string_view assignment, T& cfg) {
  ASSIGN_OR_RETURN(YAML::Node node, config_internal::OverrideToYaml(assignment));
  try {
    return config_internal::Reader::Read(node, "", "--set " + std::string(assignment), cfg);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError("--set " + std::string(assignment) + ": " + e.what());
  }
}

// Runs Validate() of every section (and of the root).
template <typename T>
Status ValidateConfig(const T& cfg) {
  return config_internal::Validator::Run("", cfg);
}

// How DumpConfigYaml writes: every key (the default), or only the keys whose values differ from
// a default-constructed T; secrets as they are, or redacted (for logs and the admin API).
struct DumpOptions {
  bool only_changed = false;
  bool redact_secrets = false;
};

// The effective configuration as YAML text; ParseConfigYaml reads it back to the same values.
template <typename T>
std::string DumpConfigYaml(const T& cfg, const DumpOptions& options = {}) {
  // A default-constructed T is the same every time: its values are listed once.
  static const std::vector<std::string> defaults = [] {
    std::vector<std::string> values;
    config_internal::ValueLister lister(values);
    T fresh{};
    fresh.Visit(lister);
    return values;
  }();
  std::string out;
  size_t next = 0;
  config_internal::TextWriter w(out, 0, options.redact_secrets,
                                options.only_changed ? &defaults : nullptr, &next);
  const_cast<T&>(cfg).Visit(w);
  return out.empty() ? "{}\n" : out;
}

// One line per field: "path<TAB>type<TAB>default<TAB>help".
template <typename T>
std::vector<std::string> DescribeConfig(const T& cfg) {
  std::vector<std::string> lines;
  config_internal::Describer d("", lines);
  const_cast<T&>(cfg).Visit(d);
  return lines;
}

}  // namespace hotline
