// Entity extraction from normalized text: dates and months, amounts, order and account numbers.
//
// Runs on NormalizeText output (spoken numbers are digits there). Entities fill the slots of L1
// answer templates ({month}, {amount}, {order_number}) and are compared by the L2 semantic
// cache's meaning-flip guard (questions about different months or amounts never share an answer).
// Values are canonical so that equal meanings compare equal:
//   kMonth          "01".."12", or "last_month" / "this_month" / "next_month"
//   kDate           "MM-DD", "YYYY-MM-DD", or "today" / "yesterday" / "tomorrow"
//   kAmount         "12.50" (two decimals), unit "USD" / "GBP" / "EUR" / "" (unknown currency)
//   kOrderNumber    the identifier after "order" (letters and digits, at least 4 characters)
//   kAccountNumber  the digits after "account" (at least 4)
//   kNumber         any other number ("2 cards"), value as written
//
// Entities contain personal data (account numbers): they live with the call, never in logs.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace hotline::answer {

enum class EntityType { kMonth, kDate, kAmount, kOrderNumber, kAccountNumber, kNumber };

// "month", "date", "amount", "order_number", "account_number", "number": the slot names L1
// templates use.
std::string_view EntityTypeName(EntityType type);

struct Entity {
  EntityType type = EntityType::kNumber;
  std::string value;  // canonical, see above
  std::string unit;   // currency for kAmount, else empty
  size_t first_word = 0;  // word index range [first_word, end_word) in the normalized text
  size_t end_word = 0;

  friend bool operator==(const Entity& a, const Entity& b) {
    return a.type == b.type && a.value == b.value && a.unit == b.unit;
  }
};

std::vector<Entity> ExtractEntities(std::string_view normalized);

}  // namespace hotline::answer
