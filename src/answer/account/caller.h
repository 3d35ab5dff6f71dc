// CallerSession: who is on the line, and whether they proved it.
//
// The transport gives a caller ID (the calling number); that alone never unlocks personal data,
// because caller IDs can be spoofed. The caller is identified only when the caller ID matches a
// customer AND the caller then gives that customer's PIN, by keypad (DTMF) or spoken digits.
// After max_pin_attempts wrong PINs the session is locked for the rest of the call; with a
// VerificationLedger, wrong PINs also count across calls per number and per account, and a
// locked-out number or account is refused on every call until its lock-out expires.
//
// No account enumeration: a number without an account gets exactly the outcomes of a wrong PIN
// (kWrongPin, then kLocked), with the same key-stretching work, and is counted the same way.
//
// One CallerSession per call; it is not shared between calls. Thread-safety: a session is used
// by its call's thread only (not thread-safe); CallerIdentifier is thread-safe.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "answer/account/accounts.h"
#include "answer/account/verification.h"
#include "answer/understand/clarify.h"
#include "common/status.h"

namespace hotline::answer {

struct CallerConfig {
  // Wrong PINs tolerated per call before personal data is locked for the rest of the call.
  // Higher is kinder to callers who mistype, lower resists guessing.
  int max_pin_attempts = 3;

  template <class V>
  void Visit(V& v) {
    v.Field("max_pin_attempts", max_pin_attempts, "Wrong PINs allowed per call");
  }
  Status Validate() const;
};

class CallerSession {
 public:
  // `caller_id`: the number from the transport (may be empty: withheld).
  explicit CallerSession(std::string caller_id) : caller_id_(std::move(caller_id)) {}

  const std::string& caller_id() const { return caller_id_; }
  bool identified() const { return customer_id_.has_value(); }
  // The identified customer's id. REQUIRES: identified().
  const std::string& customer_id() const { return *customer_id_; }
  bool locked() const { return locked_; }
  int failed_attempts() const { return failed_attempts_; }

  // A personal request waiting for the PIN (tool name and arguments), answered once identified.
  struct PendingRequest {
    std::string tool;
    std::map<std::string, std::string> args;
  };
  std::optional<PendingRequest>& pending() { return pending_; }
  const std::optional<PendingRequest>& pending() const { return pending_; }

  // A clarifying question asked on this call and not yet answered (understand/clarify.h).
  std::optional<PendingClarification>& clarification() { return clarification_; }
  const std::optional<PendingClarification>& clarification() const { return clarification_; }

  // Values of personal data spoken to this caller (amounts, order numbers). Any answer that
  // mentions one is treated as personal, whatever tier produced it.
  void RememberPersonal(const std::string& value);
  bool MentionsPersonal(std::string_view text) const;

 private:
  friend class CallerIdentifier;
  std::string caller_id_;
  std::optional<std::string> customer_id_;
  int failed_attempts_ = 0;
  bool locked_ = false;
  std::optional<PendingRequest> pending_;
  std::optional<PendingClarification> clarification_;
  std::vector<std::string> personal_values_;
};

// kLocked: this call's attempts are used up, or the number or account is locked out (the caller
// is offered a human agent).
enum class PinOutcome { kIdentified, kWrongPin, kLocked };

class CallerIdentifier {
 public:
  // `accounts` and `ledger` (null: attempts are only counted per call) must outlive the
  // identifier.
  CallerIdentifier(AccountsDb& accounts, CallerConfig config, VerificationLedger* ledger = nullptr)
      : accounts_(accounts), config_(config), ledger_(ledger) {}

  // Checks `pin_text` (keypad digits, or a normalized utterance whose digits are the PIN: every
  // non-digit is ignored) against the customer that owns the session's caller ID.
  Result<PinOutcome> SubmitPin(CallerSession& session, std::string_view pin_text);

 private:
  AccountsDb& accounts_;
  CallerConfig config_;
  VerificationLedger* ledger_;
};

// The digits of `text` in order ("one two three four" should be normalized to "1234" first).
std::string DigitsOf(std::string_view text);

}  // namespace hotline::answer
