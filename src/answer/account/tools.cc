#include "answer/account/tools.h"

#include <cstdio>

namespace hotline::answer {

namespace {

constexpr const char* kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                                   "July",    "August",   "September", "October", "November", "December"};

class LastBillTool final : public Tool {
 public:
  explicit LastBillTool(AccountsDb& db) : db_(db) {}
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
        return ToolResult{"I don't see a bill for " + FormatMonth(m->second) + " on your account.",
                          {{"month", FormatMonth(m->second)}}, true};
      }
    } else {
      ASSIGN_OR_RETURN(auto bills, db_.Bills(caller.customer_id(), 1));
      if (bills.empty()) return ToolResult{"I don't see any bills on your account yet.", {}, true};
      bill = bills[0];
    }
    ToolResult r;
    r.slots = {{"amount", FormatDollars(bill->amount_cents)}, {"month", FormatMonth(bill->month)}};
    r.text = "Your bill for " + r.slots["month"] + " was " + r.slots["amount"] + ".";
    return r;
  }

 private:
  AccountsDb& db_;
};

class OrderStatusTool final : public Tool {
 public:
  explicit OrderStatusTool(AccountsDb& db) : db_(db) {}
  std::string_view name() const override { return "order_status"; }
  std::string_view description() const override {
    return "Status of one of the caller's orders (args: order_number; default the latest order)";
  }
  bool requires_identified_caller() const override { return true; }
  Result<ToolResult> Run(const ToolArgs& args, const CallerSession& caller) override {
    std::optional<Order> order;
    if (auto o = args.find("order_number"); o != args.end() && !o->second.empty()) {
      ASSIGN_OR_RETURN(order, db_.OrderFor(caller.customer_id(), o->second));
      if (!order) {
        return ToolResult{"I can't find an order with that number on your account.", {}, true};
      }
    } else {
      ASSIGN_OR_RETURN(auto orders, db_.Orders(caller.customer_id()));
      if (orders.empty()) return ToolResult{"I don't see any orders on your account.", {}, true};
      order = orders[0];
    }
    ToolResult r;
    r.slots = {{"order_number", order->id}, {"order_status", order->status}};
    r.text = "Your order " + order->id + " is " + order->status + ".";
    if (!order->eta.empty() && order->status != "delivered" && order->status != "cancelled") {
      r.slots["eta"] = order->eta;
      r.text += " It should arrive by " + order->eta + ".";
    }
    return r;
  }

 private:
  AccountsDb& db_;
};

class RefundStatusTool final : public Tool {
 public:
  explicit RefundStatusTool(AccountsDb& db) : db_(db) {}
  std::string_view name() const override { return "refund_status"; }
  std::string_view description() const override { return "Status of the caller's latest refund"; }
  bool requires_identified_caller() const override { return true; }
  Result<ToolResult> Run(const ToolArgs&, const CallerSession& caller) override {
    ASSIGN_OR_RETURN(auto refunds, db_.Refunds(caller.customer_id()));
    if (refunds.empty()) return ToolResult{"I don't see any refunds on your account.", {}, true};
    const Refund& f = refunds[0];
    ToolResult r;
    r.slots = {{"refund_amount", FormatDollars(f.amount_cents)}, {"refund_status", f.status},
               {"order_number", f.order_id}};
    r.text = "Your refund of " + r.slots["refund_amount"] + " for order " + f.order_id + " is " +
             f.status + ".";
    return r;
  }

 private:
  AccountsDb& db_;
};

}  // namespace

std::string FormatDollars(int64_t cents) {
  const bool negative = cents < 0;
  const uint64_t abs = negative ? static_cast<uint64_t>(-(cents + 1)) + 1 : static_cast<uint64_t>(cents);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%s$%llu.%02llu", negative ? "-" : "",
                static_cast<unsigned long long>(abs / 100), static_cast<unsigned long long>(abs % 100));
  return buf;
}

std::string FormatMonth(std::string_view m) {
  if (m.size() == 7 && m[4] == '-') {
    const int month = (m[5] - '0') * 10 + (m[6] - '0');
    if (month >= 1 && month <= 12) return std::string(kMonths[month - 1]) + " " + std::string(m.substr(0, 4));
  }
  return std::string(m);
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

Result<ToolRegistry> CreateDemoTools(AccountsDb& accounts) {
  ToolRegistry r;
  RETURN_IF_ERROR(r.Register(std::make_unique<LastBillTool>(accounts)));
  RETURN_IF_ERROR(r.Register(std::make_unique<OrderStatusTool>(accounts)));
  RETURN_IF_ERROR(r.Register(std::make_unique<RefundStatusTool>(accounts)));
  return r;
}

}  // namespace hotline::answer
