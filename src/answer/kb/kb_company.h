// CompanyConfig: the facts a caller needs to act on an answer (phone line, website, opening
// hours, refund window, delivery times, ...), and the {{placeholder}} filling that puts them
// into every answer.
//
// Knowledge-base articles (and L1 templates) name company facts as {{key}}: "Call us on
// {{phone}}, {{hours}}." Keys are CompanyConfig's field names; the Bitext corpus's own names are
// accepted as aliases ("{{Customer Support Phone Number}}" is {{phone}}, "{{Website URL}}" is
// {{website}}). Two fillers:
//   - FillCompanyPlaceholders (load time: knowledge-base imports, configured L1 templates) is
//     strict: an unknown {{name}} is an error that names it and lists the known keys, so a
//     knowledge base with a hole never loads.
//   - DropUnfilledPlaceholders (run time: model output, cached answers) fills what it knows and
//     drops every sentence that still holds a {{…}}, so no placeholder ever reaches a caller.
//
// Values are written as they should be spoken ("1 800 555 0100", "example dot com"): answers
// are read aloud.
//
// Thread-safety: pure functions; a CompanyConfig is a plain value.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace hotline::answer {

struct CompanyConfig {
  std::string name = "Hotline Demo Shop";
  std::string website = "example dot com";
  std::string phone = "1 800 555 0100";
  std::string email = "help at example dot com";
  std::string hours = "from 8 am to 8 pm, Monday to Saturday";
  std::string live_chat = "the live chat on our website";
  std::string refund_window = "30 days";
  std::string refund_time = "5 to 10 working days";
  std::string delivery_time = "3 to 5 working days";
  std::string express_delivery_time = "1 to 2 working days";
  std::string cancellation_window = "until your order ships";

  template <class V>
  void Visit(V& v) {
    v.Field("name", name, "Company name, as spoken ({{name}} in answers)");
    v.Field("website", website, "Website, as spoken: 'example dot com' ({{website}})");
    v.Field("phone", phone, "Support phone line, as spoken: digit groups ({{phone}})");
    v.Field("email", email, "Support e-mail, as spoken: 'help at example dot com' ({{email}})");
    v.Field("hours", hours, "Opening hours of the phone line, a phrase ({{hours}})");
    v.Field("live_chat", live_chat, "Where the live chat is ({{live_chat}})");
    v.Field("refund_window", refund_window,
            "How long after delivery a refund can be asked ({{refund_window}})");
    v.Field("refund_time", refund_time,
            "How long an approved refund takes to arrive ({{refund_time}})");
    v.Field("delivery_time", delivery_time, "Standard delivery time ({{delivery_time}})");
    v.Field("express_delivery_time", express_delivery_time,
            "Express delivery time ({{express_delivery_time}})");
    v.Field("cancellation_window", cancellation_window,
            "Until when an order can be cancelled ({{cancellation_window}})");
  }
  Status Validate() const;
};

// The keys {{…}} may name (CompanyConfig's fields), in declaration order.
std::vector<std::string> CompanyKeys();

// The company key a placeholder name stands for: "phone", "Customer Support Phone Number" and
// "customer_support_phone_number" are all "phone". Empty when it names no company fact.
std::string CompanyKeyOf(std::string_view placeholder_name);

// key -> value for every key and alias (for SpeechStream's slots, whose names are
// PlaceholderSlot-normalized).
std::map<std::string, std::string> CompanySlots(const CompanyConfig& company);

// True when `text` holds a "{{" ... "}}" pair.
bool HasDoubleBracePlaceholder(std::string_view text);

// Every {{name}} of `text` filled from `company`. An unknown name (or an unclosed "{{") is an
// InvalidArgument error naming it and the known keys.
Result<std::string> FillCompanyPlaceholders(std::string_view text, const CompanyConfig& company);

// Run-time form: known {{name}}s filled; each sentence that still holds "{{" or "}}" is dropped.
// May return an empty string (nothing speakable is left).
std::string DropUnfilledPlaceholders(std::string_view text, const CompanyConfig& company);

}  // namespace hotline::answer
