#include "app/cli.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <iostream>

namespace hotline::cli {

Result<Args> Args::Parse(std::span<const std::string> argv,
                         const std::vector<std::string>& value_options) {
  Args a;
  bool only_positional = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& s = argv[i];
    if (only_positional || s.size() < 2 || s[0] != '-' ||
        (s[1] >= '0' && s[1] <= '9')) {  // "-3" is a value, not an option
      a.positional_.push_back(s);
      continue;
    }
    if (s == "--") {
      only_positional = true;
      continue;
    }
    std::string name = s, value;
    bool has_inline = false;
    if (auto eq = s.find('='); s.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = s.substr(0, eq);
      value = s.substr(eq + 1);
      has_inline = true;
    }
    bool takes_value =
        std::find(value_options.begin(), value_options.end(), name) != value_options.end();
    if (takes_value && !has_inline) {
      if (i + 1 >= argv.size()) return InvalidArgumentError("option " + name + " needs a value");
      value = argv[++i];
    } else if (!takes_value && has_inline) {
      return InvalidArgumentError("option " + name + " does not take a value");
    }
    a.options_.emplace(name, value);
  }
  return a;
}

bool Args::Has(const std::string& name) {
  used_[name] = true;
  return options_.count(name) > 0;
}

std::optional<std::string> Args::Get(const std::string& name) {
  used_[name] = true;
  auto it = options_.find(name);
  if (it == options_.end()) return std::nullopt;
  return it->second;
}

std::string Args::GetOr(const std::string& name, const std::string& fallback) {
  auto v = Get(name);
  return v ? *v : fallback;
}

Result<long long> Args::GetInt(const std::string& name, long long fallback, long long lo,
                               long long hi) {
  auto v = Get(name);
  if (!v) return fallback;
  long long out = 0;
  auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || p != v->data() + v->size()) {
    return InvalidArgumentError(name + " expects an integer, got '" + *v + "'");
  }
  if (out < lo || out > hi) {
    return InvalidArgumentError(name + " must be in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "], got " + *v);
  }
  return out;
}

Result<double> Args::GetDouble(const std::string& name, double fallback, double lo, double hi) {
  auto v = Get(name);
  if (!v) return fallback;
  char* end = nullptr;
  double out = std::strtod(v->c_str(), &end);
  if (v->empty() || end != v->c_str() + v->size()) {
    return InvalidArgumentError(name + " expects a number, got '" + *v + "'");
  }
  if (!(out >= lo && out <= hi)) {
    return InvalidArgumentError(name + " must be in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "], got " + *v);
  }
  return out;
}

std::vector<std::string> Args::GetAll(const std::string& name) {
  used_[name] = true;
  std::vector<std::string> out;
  auto [b, e] = options_.equal_range(name);
  for (auto it = b; it != e; ++it) out.push_back(it->second);
  return out;
}

Status Args::Finish() const {
  for (const auto& [name, value] : options_) {
    if (!used_.count(name)) return InvalidArgumentError("unknown option " + name);
  }
  return Status::Ok();
}

CommandRegistry& CommandRegistry::Get() {
  static CommandRegistry* r = new CommandRegistry();
  return *r;
}

void CommandRegistry::Add(Command c) {
  std::string name = c.name;
  commands_.emplace(std::move(name), std::move(c));
}

const Command* CommandRegistry::Find(std::string_view name) const {
  auto it = commands_.find(name);
  return it == commands_.end() ? nullptr : &it->second;
}

int Fail(const Status& s) {
  std::cerr << "hotline: " << s.message() << "\n";
  return s.code() == StatusCode::kInvalidArgument ? 2 : 1;
}

int Fail(std::string_view message) {
  std::cerr << "hotline: " << message << "\n";
  return 1;
}

int UsageError(std::string_view message, std::string_view usage) {
  std::cerr << "hotline: " << message << "\n" << usage;
  if (!usage.empty() && usage.back() != '\n') std::cerr << "\n";
  return 2;
}

}  // namespace hotline::cli
