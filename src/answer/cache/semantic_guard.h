// Meaning-flip guard for the L2 semantic cache.
//
// Two questions can be close in words and opposite in meaning; similarity alone cannot tell
// "how do I activate my card" from "how do I cancel my card". Before a stored answer is served
// for a new question, MeaningFlip compares the two (both NormalizeText output) and names the
// first difference that changes the meaning:
//   "negation"  one is negated and the other is not ("my card was charged" / "... was not charged")
//   "action"    opposite actions (cancel/activate, lock/unlock, deposit/withdraw, send/receive...)
//   "roles"     swapped or different source/destination ("from checking to savings" vs reverse)
//   "entities"  different numbers, amounts, dates, months, order/account numbers, or different
//               members of one category (checking/savings, visa/mastercard, dollars/euros)
// and returns an empty view when none is found. Pure function, thread-safe; a few microseconds.
#pragma once

#include <string_view>

namespace hotline::answer {

std::string_view MeaningFlip(std::string_view a, std::string_view b);

}  // namespace hotline::answer
