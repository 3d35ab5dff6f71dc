#include "answer/account/caller.h"

#include "common/log.h"

namespace hotline::answer {

Status CallerConfig::Validate() const {
  if (max_pin_attempts < 1 || max_pin_attempts > 10) {
    return InvalidArgumentError("max_pin_attempts must be in [1, 10], got " +
                                std::to_string(max_pin_attempts));
  }
  return Status::Ok();
}

void CallerSession::RememberPersonal(const std::string& value) {
  // Very short values ("1", "ok") would make every answer look personal.
  if (value.size() < 3 || personal_values_.size() >= 256) return;
  for (const auto& v : personal_values_) {
    if (v == value) return;
  }
  personal_values_.push_back(value);
}

bool CallerSession::MentionsPersonal(std::string_view text) const {
  for (const auto& v : personal_values_) {
    if (text.find(v) != std::string_view::npos) return true;
  }
  return false;
}

std::string DigitsOf(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 256)) {
    if (c >= '0' && c <= '9') out.push_back(c);
  }
  return out;
}

Result<PinOutcome> CallerIdentifier::SubmitPin(CallerSession& session, std::string_view pin_text) {
  if (session.locked_) return PinOutcome::kLocked;
  if (session.identified()) return PinOutcome::kIdentified;
  std::vector<std::string> keys = VerificationLedger::KeysFor(session.caller_id(), "");
  if (ledger_ != nullptr && !keys.empty()) {
    ASSIGN_OR_RETURN(bool locked, ledger_->Locked(keys));
    if (locked) {
      session.locked_ = true;
      HLOG_WARN("verification refused: the calling number is locked out");
      return PinOutcome::kLocked;
    }
  }
  std::optional<Customer> customer;
  if (!session.caller_id().empty()) {
    ASSIGN_OR_RETURN(customer, accounts_.FindByPhone(session.caller_id()));
  }
  if (customer && ledger_ != nullptr) {
    keys = VerificationLedger::KeysFor(session.caller_id(), customer->id);
    ASSIGN_OR_RETURN(bool locked, ledger_->Locked(keys));
    if (locked) {
      session.locked_ = true;
      HLOG_WARN("verification refused: the account is locked out");
      return PinOutcome::kLocked;
    }
  }
  // An unknown number costs the same work as a known one (VerifyPin derives either way).
  ASSIGN_OR_RETURN(
      bool ok, accounts_.VerifyPin(customer ? customer->id : std::string(), DigitsOf(pin_text)));
  if (ok) {
    if (ledger_ != nullptr) RETURN_IF_ERROR(ledger_->RecordSuccess(keys));
    session.customer_id_ = customer->id;
    return PinOutcome::kIdentified;
  }
  ++session.failed_attempts_;
  if (ledger_ != nullptr && !keys.empty()) {
    ASSIGN_OR_RETURN(auto lockout, ledger_->RecordFailure(keys));
    if (lockout) {
      session.locked_ = true;
      return PinOutcome::kLocked;
    }
  }
  if (session.failed_attempts_ >= config_.max_pin_attempts) {
    session.locked_ = true;
    HLOG_WARN("caller locked out for this call after {} wrong PINs", session.failed_attempts_);
    return PinOutcome::kLocked;
  }
  return PinOutcome::kWrongPin;
}

}  // namespace hotline::answer
