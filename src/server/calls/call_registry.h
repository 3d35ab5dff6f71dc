// CallRegistry: the calls in progress on every transport of one process (Twilio, AudioSocket,
// browser softphone), for the shared concurrent-call cap (`calls.max_calls`) and over-capacity
// text, the admin API's call list and ending a call by its id.
//
//   auto registry = std::make_shared<CallRegistry>(config.calls);
//   auto admission = registry->Admit({.id = uuid, .transport = "audiosocket"}, end_fn);
//   if (admission == nullptr) { /* over capacity: say so and let the caller go */ }
//   ...                        // the call's place is given back when `admission` is destroyed
//
// `end` is how the registry asks a transport to end one of its calls: it must be thread-safe and
// must not block (it flags the call for its own I/O thread), and it may still be called briefly
// after the admission is gone (the registry copies it out before calling, outside its lock).
//
// Thread-safety: every method may be called from any thread. Admit/List/End take one mutex,
// never held while calling out.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "server/calls/calls_config.h"

namespace hotline::server {

struct ActiveCall {
  std::string id;               // the transport's call id (Twilio CallSid, AudioSocket UUID)
  std::string transport;        // "twilio", "audiosocket"
  std::string caller_id;        // may be empty
  std::string remote;           // peer address
  int64_t started_unix_ms = 0;  // set by Admit
  int64_t duration_ms = 0;      // filled by List
};

using EndCallFn = std::function<void(std::string_view reason)>;

class CallRegistry {
 public:
  // A place among max_calls; gives it back on destruction. The registry must outlive it.
  class Admission {
   public:
    ~Admission();
    Admission(const Admission&) = delete;
    Admission& operator=(const Admission&) = delete;

   private:
    friend class CallRegistry;
    Admission(CallRegistry* registry, uint64_t key) : registry_(registry), key_(key) {}
    CallRegistry* registry_;
    uint64_t key_;
  };

  // `config` must be valid (CallsConfig::Validate).
  explicit CallRegistry(CallsConfig config) : config_(std::move(config)) {}
  // A cap of `max_calls` with the default over-capacity text.
  explicit CallRegistry(int max_calls) : CallRegistry(CallsConfig{.max_calls = max_calls}) {}

  // A place for the call, or nullptr when max_calls are in progress.
  std::unique_ptr<Admission> Admit(ActiveCall call, EndCallFn end);
  // The calls in progress, oldest first.
  std::vector<ActiveCall> List() const;
  // Asks every call with this id to end; returns how many were asked (0: no such call).
  size_t End(std::string_view id, std::string_view reason);

  int active() const;
  int max_calls() const { return config_.max_calls; }
  // What a transport says to a call it turns away.
  const std::string& over_capacity_text() const { return config_.over_capacity_text; }

 private:
  struct Entry {
    ActiveCall call;
    std::chrono::steady_clock::time_point started;
    EndCallFn end;
  };
  void Release(uint64_t key);

  const CallsConfig config_;
  mutable std::mutex mu_;
  uint64_t next_key_ = 1;            // guarded by mu_
  std::map<uint64_t, Entry> calls_;  // guarded by mu_; keys increase with admission time
};

}  // namespace hotline::server
