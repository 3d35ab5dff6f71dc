// Tools: account look-ups the answerer can run for an identified caller.
//
// A Tool takes named arguments (from entities: "month" -> "2026-11", "order_number" -> "A5531")
// and the call's CallerSession, and returns a spoken sentence plus the slot values it used. Tools
// that read personal data declare requires_identified_caller(); ToolRegistry::Run refuses them
// (PermissionDenied) until the caller is identified, so no tool can be reached around the check.
// Every result of such a tool is flagged personal: it is spoken to this caller and never stored
// in a shared cache.
//
// Thread-safety: tools and the registry are thread-safe once built (registration happens at
// start-up). Blocking: tools query SQLite; call from worker threads.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "answer/account/accounts.h"
#include "answer/account/caller.h"
#include "common/status.h"

namespace hotline::answer {

using ToolArgs = std::map<std::string, std::string>;

struct ToolResult {
  std::string text;                          // one or two sentences for the caller
  std::map<std::string, std::string> slots;  // values used, for templates ("amount" -> "$42.17")
  bool personal = true;                      // carries the caller's data
};

class Tool {
 public:
  virtual ~Tool() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  virtual bool requires_identified_caller() const = 0;
  // REQUIRES (enforced by ToolRegistry): caller identified when requires_identified_caller().
  virtual Result<ToolResult> Run(const ToolArgs& args, const CallerSession& caller) = 0;
};

class ToolRegistry {
 public:
  Status Register(std::unique_ptr<Tool> tool);
  Tool* Find(std::string_view name) const;
  std::vector<std::string> Names() const;
  // Runs the tool after checking the caller: PermissionDenied when the tool needs an identified
  // caller and this one is not; NotFound for an unknown tool.
  Result<ToolResult> Run(std::string_view name, const ToolArgs& args, const CallerSession& caller) const;

 private:
  std::map<std::string, std::unique_ptr<Tool>, std::less<>> tools_;
};

// The demo tools over `accounts` (which must outlive them): "last_bill", "order_status",
// "refund_status", speaking `language`: "en" (dollars, "November 2026") or "zh" (元,
// "2026年11月", statuses in Chinese). Another language is an error.
Result<ToolRegistry> CreateDemoTools(AccountsDb& accounts, std::string_view language = "en");

// "$42.17" for 4217 cents.
std::string FormatDollars(int64_t cents);
// "November 2026" for "2026-11" (the input itself when it is not YYYY-MM).
std::string FormatMonth(std::string_view yyyy_mm);
// "42.17元" for 4217 fen.
std::string FormatYuan(int64_t cents);
// "2026年11月" for "2026-11"; "2026年12月4日" for "2026-12-04" (the input when it is neither).
std::string FormatMonthChinese(std::string_view yyyy_mm);
std::string FormatDateChinese(std::string_view yyyy_mm_dd);

}  // namespace hotline::answer
