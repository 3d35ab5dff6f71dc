#include "answer/account/accounts.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "answer/kb/kb_sqlite.h"

namespace hotline::answer {

namespace {

using sqlite_util::Exec;
using sqlite_util::Stmt;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS customers(
  id TEXT PRIMARY KEY, name TEXT NOT NULL, phone TEXT NOT NULL UNIQUE,
  pin_salt BLOB NOT NULL, pin_hash BLOB NOT NULL, plan TEXT NOT NULL,
  balance_cents INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS bills(
  customer_id TEXT NOT NULL REFERENCES customers(id), month TEXT NOT NULL,
  amount_cents INTEGER NOT NULL, PRIMARY KEY(customer_id, month));
CREATE TABLE IF NOT EXISTS orders(
  id TEXT PRIMARY KEY, customer_id TEXT NOT NULL REFERENCES customers(id),
  status TEXT NOT NULL, placed_on TEXT NOT NULL, eta TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS refunds(
  id TEXT PRIMARY KEY, customer_id TEXT NOT NULL REFERENCES customers(id),
  order_id TEXT NOT NULL, amount_cents INTEGER NOT NULL, status TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS verification_counters(
  key TEXT PRIMARY KEY, value INTEGER NOT NULL, expires_ms INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS verification_counters_expiry ON verification_counters(expires_ms);
)sql";

// PIN storage: PBKDF2-HMAC-SHA256 with a per-customer random salt. PINs have few digits, so the
// stretching (and the attempt limits: per call in CallerIdentifier, across calls in the
// VerificationLedger) is what slows guessing.
constexpr int kPinIterations = 20000;
constexpr size_t kSaltBytes = 16;
constexpr size_t kHashBytes = 32;

Result<std::string> DerivePin(std::string_view pin, std::string_view salt) {
  std::string out(kHashBytes, '\0');
  if (PKCS5_PBKDF2_HMAC(pin.data(), static_cast<int>(pin.size()),
                        reinterpret_cast<const unsigned char*>(salt.data()),
                        static_cast<int>(salt.size()), kPinIterations, EVP_sha256(),
                        static_cast<int>(out.size()),
                        reinterpret_cast<unsigned char*>(out.data())) != 1) {
    return InternalError("PBKDF2 failed");
  }
  return out;
}

Customer ReadCustomer(const Stmt& s) {
  return Customer{s.Text(0), s.Text(1), s.Text(2), s.Text(3), s.Int(4)};
}

bool ValidPin(std::string_view pin) {
  if (pin.size() < 4 || pin.size() > 8) return false;
  for (char c : pin) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

const std::vector<DemoCustomer>& DemoCustomers() {
  static const std::vector<DemoCustomer> k = {
      {{"C1001", "Alice Martin", "+15550100", "Unlimited Plus", 4217},
       "4821",
       {{"2026-09", 3950}, {"2026-10", 4105}, {"2026-11", 4217}},
       {{"A5531", "shipped", "2026-11-24", "2026-12-04"}, {"A5502", "delivered", "2026-11-02", ""}},
       {{"R7001", "A5502", 1999, "approved"}}},
      {{"C1002", "Bob Chen", "+15550101", "Basic", 0},
       "1379",
       {{"2026-09", 8800}, {"2026-10", 8800}, {"2026-11", 9312}},
       {{"B7710", "processing", "2026-11-30", "2026-12-09"}},
       {}},
      {{"C1003", "Carmen Diaz", "+15550102", "Family", 12050},
       "5060",
       {{"2026-10", 15075}, {"2026-11", 12050}},
       {{"C9001", "cancelled", "2026-10-15", ""}},
       {{"R7002", "C9001", 5400, "paid"}}},
  };
  return k;
}

Result<std::unique_ptr<AccountsDb>> AccountsDb::Open(const std::string& path, bool create) {
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string msg = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return NotFoundError("cannot open accounts database " + path + ": " + msg);
  }
  std::unique_ptr<AccountsDb> a(new AccountsDb(db));
  sqlite3_busy_timeout(db, 2000);
  RETURN_IF_ERROR(Exec(db, kSchema).WithContext("accounts database " + path));
  return a;
}

AccountsDb::~AccountsDb() { sqlite3_close(db_); }

Status AccountsDb::AddCustomer(const DemoCustomer& c) {
  if (!ValidPin(c.pin)) return InvalidArgumentError("PIN must be 4 to 8 digits");
  std::string salt(kSaltBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(salt.data()), static_cast<int>(salt.size())) != 1) {
    return InternalError("no randomness for the PIN salt");
  }
  ASSIGN_OR_RETURN(std::string hash, DerivePin(c.pin, salt));
  std::lock_guard lock(mu_);
  RETURN_IF_ERROR(Exec(db_, "BEGIN IMMEDIATE"));
  auto run = [&]() -> Status {
    Stmt s(db_, "INSERT INTO customers(id, name, phone, pin_salt, pin_hash, plan, balance_cents) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)");
    RETURN_IF_ERROR(s.status());
    s.Bind(1, c.customer.id);
    s.Bind(2, c.customer.name);
    s.Bind(3, c.customer.phone);
    s.Bind(4, salt);
    s.Bind(5, hash);
    s.Bind(6, c.customer.plan);
    s.Bind(7, c.customer.balance_cents);
    RETURN_IF_ERROR(s.Step().status());
    for (const auto& b : c.bills) {
      Stmt q(db_, "INSERT INTO bills(customer_id, month, amount_cents) VALUES (?, ?, ?)");
      RETURN_IF_ERROR(q.status());
      q.Bind(1, c.customer.id);
      q.Bind(2, b.month);
      q.Bind(3, b.amount_cents);
      RETURN_IF_ERROR(q.Step().status());
    }
    for (const auto& o : c.orders) {
      Stmt q(db_, "INSERT INTO orders(id, customer_id, status, placed_on, eta) VALUES (?, ?, ?, ?, ?)");
      RETURN_IF_ERROR(q.status());
      q.Bind(1, o.id);
      q.Bind(2, c.customer.id);
      q.Bind(3, o.status);
      q.Bind(4, o.placed_on);
      q.Bind(5, o.eta);
      RETURN_IF_ERROR(q.Step().status());
    }
    for (const auto& r : c.refunds) {
      Stmt q(db_, "INSERT INTO refunds(id, customer_id, order_id, amount_cents, status) VALUES (?, ?, ?, ?, ?)");
      RETURN_IF_ERROR(q.status());
      q.Bind(1, r.id);
      q.Bind(2, c.customer.id);
      q.Bind(3, r.order_id);
      q.Bind(4, r.amount_cents);
      q.Bind(5, r.status);
      RETURN_IF_ERROR(q.Step().status());
    }
    return Status::Ok();
  };
  Status s = run();
  if (!s.ok()) {
    (void)Exec(db_, "ROLLBACK");
    return s.WithContext("adding customer " + c.customer.id);
  }
  return Exec(db_, "COMMIT");
}

Status AccountsDb::SeedDemo() {
  for (const auto& c : DemoCustomers()) {
    ASSIGN_OR_RETURN(auto existing, Get(c.customer.id));
    if (existing) continue;
    RETURN_IF_ERROR(AddCustomer(c));
  }
  return Status::Ok();
}

Result<std::optional<Customer>> AccountsDb::FindByPhone(std::string_view phone) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT id, name, phone, plan, balance_cents FROM customers WHERE phone = ?");
  RETURN_IF_ERROR(s.status());
  s.Bind(1, phone);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<Customer>();
  return std::optional<Customer>(ReadCustomer(s));
}

Result<std::optional<Customer>> AccountsDb::Get(std::string_view id) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT id, name, phone, plan, balance_cents FROM customers WHERE id = ?");
  RETURN_IF_ERROR(s.status());
  s.Bind(1, id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<Customer>();
  return std::optional<Customer>(ReadCustomer(s));
}

Result<bool> AccountsDb::VerifyPin(std::string_view customer_id, std::string_view pin) {
  std::string salt, hash;
  {
    std::lock_guard lock(mu_);
    Stmt s(db_, "SELECT pin_salt, pin_hash FROM customers WHERE id = ?");
    RETURN_IF_ERROR(s.status());
    s.Bind(1, customer_id);
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (row) {
      salt = s.Text(0);
      hash = s.Text(1);
    }
  }
  if (hash.empty()) {
    // No such customer: spend the same work, so that timing does not tell an unknown number from
    // a wrong PIN.
    ASSIGN_OR_RETURN(std::string unused,
                     DerivePin(pin.substr(0, 16), std::string(kSaltBytes, 'x')));
    (void)unused;
    return false;
  }
  // Derive even for malformed PINs so that timing does not tell them apart.
  ASSIGN_OR_RETURN(std::string derived, DerivePin(pin.substr(0, 16), salt));
  const bool same = derived.size() == hash.size() &&
                    CRYPTO_memcmp(derived.data(), hash.data(), hash.size()) == 0;
  return same && ValidPin(pin);
}

Result<std::vector<Bill>> AccountsDb::Bills(std::string_view customer_id, int limit) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT month, amount_cents FROM bills WHERE customer_id = ? ORDER BY month DESC LIMIT ?");
  RETURN_IF_ERROR(s.status());
  s.Bind(1, customer_id);
  s.Bind(2, static_cast<int64_t>(limit));
  std::vector<Bill> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(Bill{s.Text(0), s.Int(1)});
  }
  return out;
}

Result<std::optional<Bill>> AccountsDb::BillFor(std::string_view customer_id, std::string_view month) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT month, amount_cents FROM bills WHERE customer_id = ? AND month = ?");
  RETURN_IF_ERROR(s.status());
  s.Bind(1, customer_id);
  s.Bind(2, month);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<Bill>();
  return std::optional<Bill>(Bill{s.Text(0), s.Int(1)});
}

Result<std::optional<Order>> AccountsDb::OrderFor(std::string_view customer_id,
                                                  std::string_view order_id) {
  std::lock_guard lock(mu_);
  // The customer id is part of the key: another customer's order is indistinguishable from none.
  Stmt s(db_, "SELECT id, status, placed_on, eta FROM orders WHERE customer_id = ? AND id = ? COLLATE NOCASE");
  RETURN_IF_ERROR(s.status());
  s.Bind(1, customer_id);
  s.Bind(2, order_id);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return std::optional<Order>();
  return std::optional<Order>(Order{s.Text(0), s.Text(1), s.Text(2), s.Text(3)});
}

Result<std::vector<Order>> AccountsDb::Orders(std::string_view customer_id) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT id, status, placed_on, eta FROM orders WHERE customer_id = ? ORDER BY placed_on DESC");
  RETURN_IF_ERROR(s.status());
  s.Bind(1, customer_id);
  std::vector<Order> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(Order{s.Text(0), s.Text(1), s.Text(2), s.Text(3)});
  }
  return out;
}

Result<std::vector<Refund>> AccountsDb::Refunds(std::string_view customer_id) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT id, order_id, amount_cents, status FROM refunds WHERE customer_id = ? ORDER BY id DESC");
  RETURN_IF_ERROR(s.status());
  s.Bind(1, customer_id);
  std::vector<Refund> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, s.Step());
    if (!row) break;
    out.push_back(Refund{s.Text(0), s.Text(1), s.Int(2), s.Text(3)});
  }
  return out;
}

Result<int64_t> AccountsDb::CounterIncrement(std::string_view key, int64_t ttl_ms, int64_t now_ms) {
  std::lock_guard lock(mu_);
  // One statement, so that several processes on the same file never lose an increment.
  Stmt s(db_,
         "INSERT INTO verification_counters(key, value, expires_ms) VALUES (?1, 1, ?2 + ?3) "
         "ON CONFLICT(key) DO UPDATE SET "
         "value = CASE WHEN expires_ms <= ?2 THEN 1 ELSE value + 1 END, "
         "expires_ms = CASE WHEN expires_ms <= ?2 THEN ?2 + ?3 ELSE expires_ms END "
         "RETURNING value");
  RETURN_IF_ERROR(s.status());
  s.Bind(1, key);
  s.Bind(2, now_ms);
  s.Bind(3, ttl_ms);
  ASSIGN_OR_RETURN(bool row, s.Step());
  if (!row) return InternalError("verification counter update returned no row");
  const int64_t value = s.Int(0);
  (void)s.Step();  // completes the statement
  if (value == 1) {
    // A new key: drop expired ones, so that numbers tried once do not pile up.
    Stmt prune(db_, "DELETE FROM verification_counters WHERE expires_ms <= ?");
    RETURN_IF_ERROR(prune.status());
    prune.Bind(1, now_ms);
    RETURN_IF_ERROR(prune.Step().status());
  }
  return value;
}

Result<int64_t> AccountsDb::CounterGet(std::string_view key, int64_t now_ms) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT value FROM verification_counters WHERE key = ? AND expires_ms > ?");
  RETURN_IF_ERROR(s.status());
  s.Bind(1, key);
  s.Bind(2, now_ms);
  ASSIGN_OR_RETURN(bool row, s.Step());
  return row ? s.Int(0) : int64_t{0};
}

Status AccountsDb::CounterPut(std::string_view key, int64_t value, int64_t ttl_ms, int64_t now_ms) {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         "INSERT OR REPLACE INTO verification_counters(key, value, expires_ms) VALUES (?, ?, ?)");
  RETURN_IF_ERROR(s.status());
  s.Bind(1, key);
  s.Bind(2, value);
  s.Bind(3, now_ms + ttl_ms);
  return s.Step().status();
}

Status AccountsDb::CounterDelete(std::string_view key) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "DELETE FROM verification_counters WHERE key = ?");
  RETURN_IF_ERROR(s.status());
  s.Bind(1, key);
  return s.Step().status();
}

}  // namespace hotline::answer
