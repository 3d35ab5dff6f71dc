#include "answer/account/verification.h"

#include <openssl/evp.h>

#include <algorithm>
#include <charconv>

#include "answer/account/accounts.h"
#include "answer/cache/store.h"
#include "common/log.h"

namespace hotline::answer {

namespace {

using Ms = std::chrono::milliseconds;

int64_t SystemUnixMs() {
  return std::chrono::duration_cast<Ms>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class AccountsCounters final : public AttemptCounters {
 public:
  AccountsCounters(AccountsDb& db, std::function<int64_t()> now)
      : db_(db), now_(now ? std::move(now) : SystemUnixMs) {}
  Result<int64_t> Increment(std::string_view key, Ms ttl) override {
    return db_.CounterIncrement(key, ttl.count(), now_());
  }
  Result<int64_t> Get(std::string_view key) override { return db_.CounterGet(key, now_()); }
  Status Put(std::string_view key, int64_t value, Ms ttl) override {
    return db_.CounterPut(key, value, ttl.count(), now_());
  }
  Status Delete(std::string_view key) override { return db_.CounterDelete(key); }
  std::string_view name() const override { return "accounts database"; }

 private:
  AccountsDb& db_;
  std::function<int64_t()> now_;
};

class StoreCounters final : public AttemptCounters {
 public:
  explicit StoreCounters(Store& store) : store_(store) {}
  Result<int64_t> Increment(std::string_view key, Ms ttl) override {
    return store_.Increment(key, ttl);
  }
  Result<int64_t> Get(std::string_view key) override {
    ASSIGN_OR_RETURN(std::optional<std::string> v, store_.Get(key));
    if (!v) return int64_t{0};
    int64_t n = 0;
    const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    // Anything but a number under a counter key was not written by Hotline: treat as locked.
    if (ec != std::errc() || end != v->data() + v->size()) return int64_t{1};
    return n;
  }
  Status Put(std::string_view key, int64_t value, Ms ttl) override {
    return store_.Set(key, std::to_string(value), ttl);
  }
  Status Delete(std::string_view key) override { return store_.Delete(key); }
  std::string_view name() const override { return "answer store"; }

 private:
  Store& store_;
};

std::string Digest(std::string_view kind, std::string_view value) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  const std::string input = std::string(kind) + ":" + std::string(value);
  EVP_Digest(input.data(), input.size(), md, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(kind);
  out.push_back(':');
  for (unsigned int i = 0; i < std::min(len, 16u); ++i) {
    out.push_back(kHex[md[i] >> 4]);
    out.push_back(kHex[md[i] & 15]);
  }
  return out;
}

std::string FailKey(const std::string& key) { return "pin:fail:" + key; }
std::string LockKey(const std::string& key) { return "pin:lock:" + key; }
std::string StrikeKey(const std::string& key) { return "pin:strikes:" + key; }

}  // namespace

Status VerificationConfig::Validate() const {
  if (max_failures < 1 || max_failures > 100) {
    return InvalidArgumentError("max_failures must be in [1, 100], got " +
                                std::to_string(max_failures));
  }
  for (auto [name, v] :
       {std::pair{"failure_window_s", failure_window_s}, std::pair{"lockout_s", lockout_s},
        std::pair{"max_lockout_s", max_lockout_s},
        std::pair{"backoff_memory_s", backoff_memory_s}}) {
    if (v < 1 || v > 365 * 86400) {
      return InvalidArgumentError(std::string(name) + " must be in [1, 31536000] seconds, got " +
                                  std::to_string(v));
    }
  }
  if (max_lockout_s < lockout_s) {
    return InvalidArgumentError("max_lockout_s (" + std::to_string(max_lockout_s) +
                                ") must be at least lockout_s (" + std::to_string(lockout_s) + ")");
  }
  return Status::Ok();
}

std::unique_ptr<AttemptCounters> AccountsAttemptCounters(AccountsDb& accounts,
                                                         std::function<int64_t()> now_unix_ms) {
  return std::make_unique<AccountsCounters>(accounts, std::move(now_unix_ms));
}

std::unique_ptr<AttemptCounters> StoreAttemptCounters(Store& store) {
  return std::make_unique<StoreCounters>(store);
}

VerificationLedger::VerificationLedger(VerificationConfig config,
                                       std::vector<AttemptCounters*> backends,
                                       MetricsRegistry* metrics)
    : config_(config), backends_(std::move(backends)) {
  MetricsRegistry& m = metrics != nullptr ? *metrics : MetricsRegistry::Global();
  failures_ =
      &m.GetCounter("hotline_answer_pin_failures_total", "Wrong PINs (unknown numbers included)");
  lockouts_ =
      &m.GetCounter("hotline_answer_pin_lockouts_total",
                    "Numbers or accounts locked out after answer.verification.max_failures");
  refused_ = &m.GetCounter("hotline_answer_pin_refused_total",
                           "PINs refused unchecked because the number or account was locked out");
}

std::vector<std::string> VerificationLedger::KeysFor(std::string_view caller_id,
                                                     std::string_view customer_id) {
  std::vector<std::string> keys;
  if (!caller_id.empty()) keys.push_back(Digest("number", caller_id.substr(0, 64)));
  if (!customer_id.empty()) keys.push_back(Digest("account", customer_id.substr(0, 64)));
  return keys;
}

Status VerificationLedger::Each(const std::function<Status(AttemptCounters&)>& op,
                                std::string_view what) {
  Status last = Status::Ok();
  int ok = 0;
  for (AttemptCounters* b : backends_) {
    Status s = op(*b);
    if (s.ok()) {
      ++ok;
    } else {
      HLOG_WARN("verification: {} in the {} failed: {}", what, b->name(), s.message());
      last = s;
    }
  }
  if (ok == 0 && !backends_.empty()) return last;
  return Status::Ok();
}

Result<bool> VerificationLedger::Locked(const std::vector<std::string>& keys) {
  bool locked = false;
  RETURN_IF_ERROR(Each(
      [&](AttemptCounters& b) -> Status {
        for (const auto& k : keys) {
          ASSIGN_OR_RETURN(int64_t v, b.Get(LockKey(k)));
          if (v > 0) locked = true;
        }
        return Status::Ok();
      },
      "reading a lock-out"));
  if (locked) refused_->Increment();
  return locked;
}

Result<std::optional<std::chrono::seconds>> VerificationLedger::RecordFailure(
    const std::vector<std::string>& keys) {
  failures_->Increment();
  std::optional<std::chrono::seconds> caused;
  for (const auto& k : keys) {
    int64_t failures = 0;
    RETURN_IF_ERROR(Each(
        [&](AttemptCounters& b) -> Status {
          ASSIGN_OR_RETURN(int64_t n,
                           b.Increment(FailKey(k), Ms(config_.failure_window_s * 1000ll)));
          failures = std::max(failures, n);
          return Status::Ok();
        },
        "counting a wrong PIN"));
    if (failures < config_.max_failures) continue;
    int64_t strikes = 0;
    RETURN_IF_ERROR(Each(
        [&](AttemptCounters& b) -> Status {
          ASSIGN_OR_RETURN(int64_t n,
                           b.Increment(StrikeKey(k), Ms(config_.backoff_memory_s * 1000ll)));
          strikes = std::max(strikes, n);
          return Status::Ok();
        },
        "counting a lock-out"));
    int64_t lock_s = config_.lockout_s;
    for (int64_t i = 1; i < strikes && lock_s < config_.max_lockout_s; ++i) lock_s *= 2;
    lock_s = std::min<int64_t>(lock_s, config_.max_lockout_s);
    RETURN_IF_ERROR(Each(
        [&](AttemptCounters& b) -> Status {
          RETURN_IF_ERROR(b.Put(LockKey(k), strikes, Ms(lock_s * 1000)));
          return b.Delete(FailKey(k));
        },
        "writing a lock-out"));
    lockouts_->Increment();
    // The key is a digest: it names the number or account without writing it in the log.
    HLOG_WARN("verification: {} locked out for {} s after {} wrong PINs (lock-out {} in a row)", k,
              lock_s, failures, strikes);
    if (!caused || *caused < std::chrono::seconds(lock_s)) caused = std::chrono::seconds(lock_s);
  }
  return caused;
}

Status VerificationLedger::RecordSuccess(const std::vector<std::string>& keys) {
  return Each(
      [&](AttemptCounters& b) -> Status {
        for (const auto& k : keys) {
          RETURN_IF_ERROR(b.Delete(FailKey(k)));
          RETURN_IF_ERROR(b.Delete(StrikeKey(k)));
        }
        return Status::Ok();
      },
      "forgetting wrong PINs");
}

}  // namespace hotline::answer
