#include "server/calls/call_registry.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "common/log.h"
#include "common/log_format.h"

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
  if (no_audio_timeout_ms != 0 && (no_audio_timeout_ms < 1000 || no_audio_timeout_ms > 600000)) {
    return InvalidArgumentError("no_audio_timeout_ms must be 0 (never) or in [1000, 600000], got " +
                                std::to_string(no_audio_timeout_ms));
  }
  if (max_call_ms != 0 && (max_call_ms < 10000 || max_call_ms > 24 * 3600 * 1000)) {
    return InvalidArgumentError("max_call_ms must be 0 (no limit) or in [10000, 86400000], got " +
                                std::to_string(max_call_ms));
  }
  return Status::Ok();
}

std::string_view CallEndReasonName(CallEndReason r) {
  switch (r) {
    case CallEndReason::kNoAudio:
      return "no_audio";
    case CallEndReason::kMaxDuration:
      return "max_duration";
    case CallEndReason::kNoSpeech:
      return "no_speech";
    case CallEndReason::kAgentHangup:
      return "agent_hangup";
    case CallEndReason::kTransfer:
      return "transfer";
    case CallEndReason::kAdmin:
      return "admin";
  }
  return "unknown";
}

CallRegistry::CallRegistry(CallsConfig config, MetricsRegistry* metrics, bool watchdog)
    : config_(std::move(config)) {
  MetricsRegistry& m = metrics != nullptr ? *metrics : MetricsRegistry::Global();
  for (int i = 0; i < kCallEndReasons; ++i) {
    const auto reason = static_cast<CallEndReason>(i);
    ended_[i] = &m.GetCounter("hotline_calls_ended_total",
                              "Calls ended by Hotline, by reason (every transport)",
                              {{"reason", std::string(CallEndReasonName(reason))}});
  }
  if (watchdog && (config_.no_audio_timeout_ms > 0 || config_.max_call_ms > 0)) {
    watchdog_ = std::thread([this] { WatchdogLoop(); });
  }
}

CallRegistry::~CallRegistry() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

void CallRegistry::WatchdogLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    stop_cv_.wait_for(lock, kWatchdogPeriod);
    if (stopping_) break;
    lock.unlock();
    Sweep(std::chrono::steady_clock::now());
    lock.lock();
  }
}

int CallRegistry::Sweep(std::chrono::steady_clock::time_point now) {
  struct ToEnd {
    std::string id;
    EndCallFn end;
    CallEndReason reason;
    int64_t after_ms;
  };
  std::vector<ToEnd> to_end;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = calls_.begin(); it != calls_.end();) {
      const Entry& e = it->second;
      const auto last_audio = std::chrono::steady_clock::time_point(
          std::chrono::steady_clock::duration(e.last_audio->load(std::memory_order_relaxed)));
      const auto since_audio = std::chrono::duration_cast<std::chrono::milliseconds>(
          now - std::max(last_audio, e.started));
      const auto age = std::chrono::duration_cast<std::chrono::milliseconds>(now - e.started);
      std::optional<CallEndReason> reason;
      int64_t after_ms = 0;
      if (config_.max_call_ms > 0 && age.count() >= config_.max_call_ms + kMaxCallBackstopMs) {
        reason = CallEndReason::kMaxDuration;
        after_ms = age.count();
      } else if (config_.no_audio_timeout_ms > 0 &&
                 since_audio.count() >= config_.no_audio_timeout_ms) {
        reason = CallEndReason::kNoAudio;
        after_ms = since_audio.count();
      }
      if (!reason) {
        ++it;
        continue;
      }
      // The place is given back now, not when the transport gets round to closing: a squatter
      // that never answers the close cannot keep it.
      to_end.push_back({e.call.id, e.end, *reason, after_ms});
      it = calls_.erase(it);
    }
  }
  for (const auto& t : to_end) {
    ended_[static_cast<int>(t.reason)]->Increment();
    HLOG_WARN("call {}: ended by the call timer ({}, after {} ms)", LogEscape(t.id),
              CallEndReasonName(t.reason), t.after_ms);
    if (t.end) t.end(CallEndReasonName(t.reason));
  }
  return static_cast<int>(to_end.size());
}

void CallRegistry::CountEnded(CallEndReason reason) {
  ended_[static_cast<int>(reason)]->Increment();
}

void CallRegistry::Admission::NoteAudio() {
  last_audio_->store(std::chrono::steady_clock::now().time_since_epoch().count(),
                     std::memory_order_relaxed);
}

CallRegistry::Admission::~Admission() { registry_->Release(key_); }

std::unique_ptr<CallRegistry::Admission> CallRegistry::Admit(ActiveCall call, EndCallFn end) {
  std::lock_guard<std::mutex> lock(mu_);
  if (static_cast<int>(calls_.size()) >= config_.max_calls) return nullptr;
  const uint64_t key = next_key_++;
  call.started_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  const auto now = std::chrono::steady_clock::now();
  auto last_audio = std::make_shared<std::atomic<int64_t>>(now.time_since_epoch().count());
  calls_.emplace(key, Entry{std::move(call), now, std::move(end), last_audio});
  return std::unique_ptr<Admission>(new Admission(this, key, std::move(last_audio)));
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
  for (const auto& end : to_end) {
    CountEnded(CallEndReason::kAdmin);
    end(reason);
  }
  return to_end.size();
}

int CallRegistry::active() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(calls_.size());
}

}  // namespace hotline::server
