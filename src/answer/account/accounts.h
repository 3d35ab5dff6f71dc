// AccountsDb: the demo accounts database (SQLite) behind Hotline's account tools.
//
// Tables: customers (id, name, phone, PIN as salted PBKDF2-HMAC-SHA256, plan, balance), bills by
// month, orders and refunds. Every query that returns personal data takes the customer id of an
// identified caller and only returns that customer's rows: an order number belonging to someone
// else is "not found", exactly like one that does not exist.
//
// Thread-safety: all methods are thread-safe (calls serialized on one connection). Blocking: disk
// I/O; VerifyPin spends ~10 ms of CPU on purpose (key stretching). Call from worker threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

struct sqlite3;

namespace hotline::answer {

struct Customer {
  std::string id;
  std::string name;
  std::string phone;  // E.164, e.g. "+15550100"
  std::string plan;
  int64_t balance_cents = 0;
};

struct Bill {
  std::string month;  // "YYYY-MM"
  int64_t amount_cents = 0;
};

struct Order {
  std::string id;
  std::string status;     // "processing", "shipped", "delivered", "cancelled"
  std::string placed_on;  // "YYYY-MM-DD"
  std::string eta;        // "YYYY-MM-DD" or empty
};

struct Refund {
  std::string id;
  std::string order_id;
  int64_t amount_cents = 0;
  std::string status;  // "requested", "approved", "paid", "rejected"
};

// Seed data of the demo database (used by CreateDemo and by tests).
struct DemoCustomer {
  Customer customer;
  std::string pin;
  std::vector<Bill> bills;
  std::vector<Order> orders;
  std::vector<Refund> refunds;
};
const std::vector<DemoCustomer>& DemoCustomers();

class AccountsDb {
 public:
  // Opens an existing database (create=false) or creates the schema (create=true).
  static Result<std::unique_ptr<AccountsDb>> Open(const std::string& path, bool create);
  ~AccountsDb();
  AccountsDb(const AccountsDb&) = delete;
  AccountsDb& operator=(const AccountsDb&) = delete;

  // Adds a customer with the given PIN (4-8 digits) and their records, in one transaction.
  Status AddCustomer(const DemoCustomer& c);
  // Creates the demo customers (idempotent: existing ids are left alone).
  Status SeedDemo();

  Result<std::optional<Customer>> FindByPhone(std::string_view phone);
  Result<std::optional<Customer>> Get(std::string_view customer_id);
  // True when `pin` matches the customer's PIN. Constant-time comparison of the derived keys.
  Result<bool> VerifyPin(std::string_view customer_id, std::string_view pin);
  // The customer's most recent bills, newest first.
  Result<std::vector<Bill>> Bills(std::string_view customer_id, int limit);
  Result<std::optional<Bill>> BillFor(std::string_view customer_id, std::string_view month);
  Result<std::optional<Order>> OrderFor(std::string_view customer_id, std::string_view order_id);
  Result<std::vector<Order>> Orders(std::string_view customer_id);
  Result<std::vector<Refund>> Refunds(std::string_view customer_id);

  // Expiring counters (table verification_counters) for the verification ledger
  // (verification.h): wrong PINs and lock-outs kept across calls and restarts. Times are Unix ms.
  // Increment: +1, a new or expired key starts at 1 and expires at now_ms + ttl_ms; returns the
  // new value. CounterGet: 0 when absent or expired.
  Result<int64_t> CounterIncrement(std::string_view key, int64_t ttl_ms, int64_t now_ms);
  Result<int64_t> CounterGet(std::string_view key, int64_t now_ms);
  Status CounterPut(std::string_view key, int64_t value, int64_t ttl_ms, int64_t now_ms);
  Status CounterDelete(std::string_view key);

 private:
  explicit AccountsDb(sqlite3* db) : db_(db) {}
  std::mutex mu_;
  sqlite3* db_;
};

}  // namespace hotline::answer
