#include "answer/kb/kb_company.h"

#include <cctype>

#include "answer/generate/postprocess.h"
#include "answer/kb/kb_bitext.h"

namespace hotline::answer {

namespace {

// Collects the field names in declaration order.
struct KeyLister {
  std::vector<std::string> keys;
  template <class T>
  void Field(std::string_view key, T&, std::string_view) {
    keys.emplace_back(key);
  }
};

struct ValueLister {
  std::map<std::string, std::string> values;
  void Field(std::string_view key, std::string& value, std::string_view) {
    values.emplace(std::string(key), value);
  }
};

// Names other writers (the Bitext corpus, models trained on it) use for the same facts, as
// PlaceholderSlot normalizes them.
const std::map<std::string, std::string>& Aliases() {
  static const std::map<std::string, std::string> k = {
      {"company_name", "name"},
      {"company", "name"},
      {"website_name", "website"},
      {"website_url", "website"},
      {"website_or_app", "website"},
      {"company_website", "website"},
      {"company_website_url", "website"},
      {"url", "website"},
      {"customer_support_phone_number", "phone"},
      {"customer_service_phone_number", "phone"},
      {"support_phone_number", "phone"},
      {"customer_support_number", "phone"},
      {"customer_support_phone", "phone"},
      {"support_phone", "phone"},
      {"phone_number", "phone"},
      {"toll_free_number", "phone"},
      {"customer_support_email", "email"},
      {"customer_support_email_address", "email"},
      {"customer_service_email", "email"},
      {"support_email", "email"},
      {"support_email_address", "email"},
      {"email_address", "email"},
      {"customer_support_availability", "hours"},
      {"customer_support_hours", "hours"},
      {"customer_service_hours", "hours"},
      {"business_hours", "hours"},
      {"opening_hours", "hours"},
      {"operating_hours", "hours"},
      {"working_hours", "hours"},
      {"live_chat_support", "live_chat"},
      {"customer_support_live_chat", "live_chat"},
      {"refund_period", "refund_window"},
      {"return_window", "refund_window"},
      {"delivery_period", "delivery_time"},
      {"shipping_time", "delivery_time"},
      {"express_shipping_time", "express_delivery_time"},
  };
  return k;
}

std::string KnownKeysList() {
  std::string out;
  for (const auto& k : CompanyKeys()) out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace

Status CompanyConfig::Validate() const {
  CompanyConfig copy = *this;
  ValueLister values;
  copy.Visit(values);
  for (const auto& [key, value] : values.values) {
    if (value.empty()) {
      return InvalidArgumentError(key +
                                  " is empty; every company fact is spoken in answers: "
                                  "give it a value");
    }
    if (value.size() > 200) return InvalidArgumentError(key + " is longer than 200 characters");
    if (value.find("{{") != std::string::npos || value.find("}}") != std::string::npos) {
      return InvalidArgumentError(key + " holds a {{placeholder}}; write the value itself");
    }
    for (unsigned char c : value) {
      if (c < 0x20) return InvalidArgumentError(key + " holds a control character (a line break?)");
    }
  }
  return Status::Ok();
}

std::vector<std::string> CompanyKeys() {
  CompanyConfig c;
  KeyLister keys;
  c.Visit(keys);
  return keys.keys;
}

std::string CompanyKeyOf(std::string_view placeholder_name) {
  const std::string slot = PlaceholderSlot(placeholder_name);
  for (const std::string& k : CompanyKeys()) {
    if (k == slot) return k;
  }
  if (auto it = Aliases().find(slot); it != Aliases().end()) return it->second;
  return "";
}

std::map<std::string, std::string> CompanySlots(const CompanyConfig& company) {
  CompanyConfig copy = company;
  ValueLister values;
  copy.Visit(values);
  std::map<std::string, std::string> out = values.values;
  for (const auto& [alias, key] : Aliases()) out[alias] = values.values[key];
  return out;
}

bool HasDoubleBracePlaceholder(std::string_view text) {
  const size_t open = text.find("{{");
  return open != std::string_view::npos && text.find("}}", open + 2) != std::string_view::npos;
}

Result<std::string> FillCompanyPlaceholders(std::string_view text, const CompanyConfig& company) {
  const std::map<std::string, std::string> slots = CompanySlots(company);
  std::string out;
  size_t pos = 0;
  for (;;) {
    const size_t open = text.find("{{", pos);
    if (open == std::string_view::npos) break;
    const size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos || close - open > 80) {
      return InvalidArgumentError("unclosed '{{' at offset " + std::to_string(open) +
                                  "; write a company fact as {{key}} (" + KnownKeysList() + ")");
    }
    const std::string_view name = text.substr(open + 2, close - open - 2);
    const std::string key = CompanyKeyOf(name);
    if (key.empty()) {
      return InvalidArgumentError("unknown placeholder {{" + std::string(name) +
                                  "}}; a company fact is one of " + KnownKeysList() +
                                  " (set under answer.company), anything else must be written out");
    }
    out.append(text.substr(pos, open - pos));
    out.append(slots.at(key));
    pos = close + 2;
  }
  if (text.find("}}", pos) != std::string_view::npos) {
    return InvalidArgumentError("a '}}' without its '{{'; write a company fact as {{key}}");
  }
  out.append(text.substr(pos));
  return out;
}

std::string DropUnfilledPlaceholders(std::string_view text, const CompanyConfig& company) {
  if (text.find("{{") == std::string_view::npos && text.find("}}") == std::string_view::npos) {
    return std::string(text);
  }
  std::string out;
  for (const std::string& sentence : SplitSentences(text)) {
    auto filled = FillCompanyPlaceholders(sentence, company);
    if (!filled.ok()) continue;
    if (!out.empty()) out.push_back(' ');
    out += *filled;
  }
  return out;
}

}  // namespace hotline::answer
