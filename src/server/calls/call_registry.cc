#include "server/calls/call_registry.h"

#include <string>
#include <utility>

namespace hotline::server {

Status CallsConfig::Validate() const {
  if (max_calls < 1 || max_calls > 100000) {
    return InvalidArgumentError("max_calls must be in [1, 100000], got " +
                                std::to_string(max_calls));
  }
  if (over_capacity_text.empty() || over_capacity_text.size() > 1000) {
    return InvalidArgumentError("over_capacity_text must be 1..1000 characters");
  }
  if (drain_timeout_ms < 0 || drain_timeout_ms > 3600000) {
    return InvalidArgumentError("drain_timeout_ms must be in [0, 3600000] (an hour), got " +
                                std::to_string(drain_timeout_ms));
  }
  return Status::Ok();
}

CallRegistry::Admission::~Admission() { registry_->Release(key_); }

std::unique_ptr<CallRegistry::Admission> CallRegistry::Admit(ActiveCall call, EndCallFn end) {
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int>(calls_.size()) >= config_.max_calls) return nullptr;
  const uint64_t key = next_key_++;
  call.started_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  calls_.emplace(key, Entry{std::move(call), std::chrono::steady_clock::now(), std::move(end)});
  return std::unique_ptr<Admission>(new Admission(this, key));
}

void CallRegistry::Release(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  calls_.erase(key);
}

std::vector<ActiveCall> CallRegistry::List() const {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ActiveCall> out;
  out.reserve(calls_.size());
  for (const auto& [key, e] : calls_) {
    out.push_back(e.call);
    out.back().duration_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - e.started).count();
  }
  return out;
}

size_t CallRegistry::End(std::string_view id, std::string_view reason) {
  std::vector<EndCallFn> to_end;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, e] : calls_) {
      if (e.call.id == id && e.end) to_end.push_back(e.end);
    }
  }
  for (const auto& end : to_end) end(reason);
  return to_end.size();
}

int CallRegistry::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(calls_.size());
}

}  // namespace hotline::server
