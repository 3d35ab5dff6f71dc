#include "answer/account/tools.h"

#include <cstdio>

namespace hotline::answer {

namespace {

constexpr const char* kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                                   "July",    "August",   "September", "October", "November", "December"};

// What the tools say, in the call's language. Statuses are the database's words ("shipped").
struct Phrases {
  std::string (*money)(int64_t cents);
  std::string (*month)(std::string_view yyyy_mm);
  std::string (*status)(std::string_view status);
  std::string (*bill)(const std::string& month, const std::string& amount);
  std::string (*no_bill_for)(const std::string& month);
  const char* no_bills;
  std::string (*order)(const std::string& id, const std::string& status);
  std::string (*eta)(const std::string& eta);
  const char* no_such_order;
  const char* no_orders;
  std::string (*refund)(const std::string& amount, const std::string& order,
                        const std::string& status);
  const char* no_refunds;
};

const Phrases kEnglish = {
    FormatDollars,
    FormatMonth,
    [](std::string_view st) { return std::string(st); },
    [](const std::string& m, const std::string& a) { return "Your bill for " + m + " was " + a + "."; },
    [](const std::string& m) { return "I don't see a bill for " + m + " on your account."; },
    "I don't see any bills on your account yet.",
    [](const std::string& id, const std::string& st) { return "Your order " + id + " is " + st + "."; },
    [](const std::string& eta) { return " It should arrive by " + eta + "."; },
    "I can't find an order with that number on your account.",
    "I don't see any orders on your account.",
    [](const std::string& a, const std::string& o, const std::string& st) {
      return "Your refund of " + a + " for order " + o + " is " + st + ".";
    },
    "I don't see any refunds on your account.",
};

std::string MandarinStatus(std::string_view st) {
  static const std::pair<std::string_view, const char*> kWords[] = {
      {"shipped", "已发货"},    {"delivered", "已送达"}, {"processing", "正在处理"},
      {"cancelled", "已取消"},  {"approved", "已批准"},  {"paid", "已退回到您的账户"},
      {"pending", "正在审核"},  {"rejected", "未通过"}};
  for (const auto& [en, zh] : kWords) {
    if (st == en) return zh;
  }
  return std::string(st);
}

const Phrases kMandarin = {
    FormatYuan,
    FormatMonthChinese,
    MandarinStatus,
    [](const std::string& m, const std::string& a) { return "您" + m + "的话费是" + a + "。"; },
    [](const std::string& m) { return "您的账户上没有" + m + "的账单。"; },
    "您的账户上还没有账单。",
    [](const std::string& id, const std::string& st) { return "您的订单" + id + st + "。"; },
    [](const std::string& eta) { return "预计" + FormatDateChinese(eta) + "前送达。"; },
    "您的账户上没有这个订单号。",
    "您的账户上没有订单。",
    [](const std::string& a, const std::string& o, const std::string& st) {
      return "您订单" + o + "的" + a + "退款" + st + "。";
    },
    "您的账户上没有退款。",
};

class LastBillTool final : public Tool {
 public:
  LastBillTool(AccountsDb& db, const Phrases& say) : db_(db), say_(say) {}
  std::string_view name() const override { return "last_bill"; }
  std::string_view description() const override {
    return "The caller's bill for a month (args: month = YYYY-MM; default the latest bill)";
  }
  bool requires_identified_caller() const override { return true; }
  Result<ToolResult> Run(const ToolArgs& args, const CallerSession& caller) override {
    std::optional<Bill> bill;
    if (auto m = args.find("month"); m != args.end() && !m->second.empty()) {
      ASSIGN_OR_RETURN(bill, db_.BillFor(caller.customer_id(), m->second));
      if (!bill) {
        const std::string month = say_.month(m->second);
        return ToolResult{say_.no_bill_for(month), {{"month", month}}, true};
      }
    } else {
      ASSIGN_OR_RETURN(auto bills, db_.Bills(caller.customer_id(), 1));
      if (bills.empty()) return ToolResult{say_.no_bills, {}, true};
      bill = bills[0];
    }
    ToolResult r;
    r.slots = {{"amount", say_.money(bill->amount_cents)}, {"month", say_.month(bill->month)}};
    r.text = say_.bill(r.slots["month"], r.slots["amount"]);
    return r;
  }

 private:
  AccountsDb& db_;
  const Phrases& say_;
};

class OrderStatusTool final : public Tool {
 public:
  OrderStatusTool(AccountsDb& db, const Phrases& say) : db_(db), say_(say) {}
  std::string_view name() const override { return "order_status"; }
  std::string_view description() const override {
    return "Status of one of the caller's orders (args: order_number; default the latest order)";
  }
  bool requires_identified_caller() const override { return true; }
  Result<ToolResult> Run(const ToolArgs& args, const CallerSession& caller) override {
    std::optional<Order> order;
    if (auto o = args.find("order_number"); o != args.end() && !o->second.empty()) {
      ASSIGN_OR_RETURN(order, db_.OrderFor(caller.customer_id(), o->second));
      if (!order) return ToolResult{say_.no_such_order, {}, true};
    } else {
      ASSIGN_OR_RETURN(auto orders, db_.Orders(caller.customer_id()));
      if (orders.empty()) return ToolResult{say_.no_orders, {}, true};
      order = orders[0];
    }
    ToolResult r;
    r.slots = {{"order_number", order->id}, {"order_status", say_.status(order->status)}};
    r.text = say_.order(order->id, r.slots["order_status"]);
    if (!order->eta.empty() && order->status != "delivered" && order->status != "cancelled") {
      r.slots["eta"] = order->eta;
      r.text += say_.eta(order->eta);
    }
    return r;
  }

 private:
  AccountsDb& db_;
  const Phrases& say_;
};

class RefundStatusTool final : public Tool {
 public:
  RefundStatusTool(AccountsDb& db, const Phrases& say) : db_(db), say_(say) {}
  std::string_view name() const override { return "refund_status"; }
  std::string_view description() const override { return "Status of the caller's latest refund"; }
  bool requires_identified_caller() const override { return true; }
  Result<ToolResult> Run(const ToolArgs&, const CallerSession& caller) override {
    ASSIGN_OR_RETURN(auto refunds, db_.Refunds(caller.customer_id()));
    if (refunds.empty()) return ToolResult{say_.no_refunds, {}, true};
    const Refund& f = refunds[0];
    ToolResult r;
    r.slots = {{"refund_amount", say_.money(f.amount_cents)},
               {"refund_status", say_.status(f.status)},
               {"order_number", f.order_id}};
    r.text = say_.refund(r.slots["refund_amount"], f.order_id, r.slots["refund_status"]);
    return r;
  }

 private:
  AccountsDb& db_;
  const Phrases& say_;
};

}  // namespace

namespace {

// "42.17" for 4217 (sign first), the amount part both currencies share.
std::string Amount(int64_t cents, const char* prefix, const char* suffix) {
  const bool negative = cents < 0;
  const uint64_t abs = negative ? static_cast<uint64_t>(-(cents + 1)) + 1 : static_cast<uint64_t>(cents);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%s%s%llu.%02llu%s", negative ? "-" : "", prefix,
                static_cast<unsigned long long>(abs / 100), static_cast<unsigned long long>(abs % 100),
                suffix);
  return buf;
}

// 1..12 for "YYYY-MM" (also the start of "YYYY-MM-DD"); 0 otherwise.
int MonthOf(std::string_view m) {
  if (m.size() < 7 || m[4] != '-' || m[5] < '0' || m[5] > '1' || m[6] < '0' || m[6] > '9') return 0;
  const int month = (m[5] - '0') * 10 + (m[6] - '0');
  return month >= 1 && month <= 12 ? month : 0;
}

}  // namespace

std::string FormatDollars(int64_t cents) { return Amount(cents, "$", ""); }

std::string FormatMonth(std::string_view m) {
  const int month = m.size() == 7 ? MonthOf(m) : 0;
  if (month == 0) return std::string(m);
  return std::string(kMonths[month - 1]) + " " + std::string(m.substr(0, 4));
}

std::string FormatYuan(int64_t cents) { return Amount(cents, "", "元"); }

std::string FormatMonthChinese(std::string_view m) {
  const int month = m.size() == 7 ? MonthOf(m) : 0;
  if (month == 0) return std::string(m);
  return std::string(m.substr(0, 4)) + "年" + std::to_string(month) + "月";
}

std::string FormatDateChinese(std::string_view d) {
  const int month = MonthOf(d);
  if (d.size() != 10 || d[7] != '-' || month == 0 || d[8] < '0' || d[8] > '3' || d[9] < '0' ||
      d[9] > '9') {
    return std::string(d);
  }
  const int day = (d[8] - '0') * 10 + (d[9] - '0');
  return std::string(d.substr(0, 4)) + "年" + std::to_string(month) + "月" + std::to_string(day) +
         "日";
}

Status ToolRegistry::Register(std::unique_ptr<Tool> tool) {
  if (!tool) return InvalidArgumentError("null tool");
  std::string name(tool->name());
  if (!tools_.emplace(name, std::move(tool)).second) {
    return InvalidArgumentError("tool '" + name + "' is registered twice");
  }
  return Status::Ok();
}

Tool* ToolRegistry::Find(std::string_view name) const {
  auto it = tools_.find(name);
  return it == tools_.end() ? nullptr : it->second.get();
}

std::vector<std::string> ToolRegistry::Names() const {
  std::vector<std::string> out;
  for (const auto& [name, tool] : tools_) out.push_back(name);
  return out;
}

Result<ToolResult> ToolRegistry::Run(std::string_view name, const ToolArgs& args,
                                     const CallerSession& caller) const {
  Tool* tool = Find(name);
  if (!tool) return NotFoundError("no tool named '" + std::string(name) + "'");
  if (tool->requires_identified_caller() && !caller.identified()) {
    return PermissionDeniedError("tool '" + std::string(name) +
                                 "' needs an identified caller; ask for the PIN first");
  }
  ASSIGN_OR_RETURN(ToolResult r, tool->Run(args, caller));
  if (tool->requires_identified_caller()) r.personal = true;  // whatever the tool said
  return r;
}

Result<ToolRegistry> CreateDemoTools(AccountsDb& accounts, std::string_view language) {
  const Phrases* say = nullptr;
  if (language == "en") say = &kEnglish;
  if (language == "zh") say = &kMandarin;
  if (!say) {
    return InvalidArgumentError("no tool phrases for language '" + std::string(language) +
                                "' (en or zh)");
  }
  ToolRegistry r;
  RETURN_IF_ERROR(r.Register(std::make_unique<LastBillTool>(accounts, *say)));
  RETURN_IF_ERROR(r.Register(std::make_unique<OrderStatusTool>(accounts, *say)));
  RETURN_IF_ERROR(r.Register(std::make_unique<RefundStatusTool>(accounts, *say)));
  return r;
}

}  // namespace hotline::answer
