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
// Call timers independent of audio: a watchdog thread (every kWatchdogPeriod) ends a call whose
// transport has reported no caller audio (Admission::NoteAudio) for calls.no_audio_timeout_ms —
// pings, DTMF and marks do not count — or that has lasted calls.max_call_ms + kMaxCallBackstopMs
// (at calls.max_call_ms the call's own session says goodbye and hangs up; the registry ends the
// calls whose session cannot: no audio flowing, a peer that never plays it). It frees the call's
// place at once, counts hotline_calls_ended_total{reason}, logs, and asks the transport to end the
// call through `end` with the reason ("no_audio", "max_duration").
//
// Thread-safety: every method may be called from any thread. Admit/List/End/Sweep take one mutex,
// never held while calling out.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/metrics.h"
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

// Why Hotline ended a call (the label of hotline_calls_ended_total).
enum class CallEndReason {
  kNoAudio,      // the transport carried no caller audio for calls.no_audio_timeout_ms
  kMaxDuration,  // calls.max_call_ms reached
  kNoSpeech,     // the caller said nothing through the re-prompts (call.reprompt_*): goodbye
  kAgentHangup,  // the agent hung up otherwise (the caller said goodbye)
  kTransfer,     // handed to a human agent
  kAdmin,        // ended through the admin API
};
inline constexpr int kCallEndReasons = 6;
std::string_view CallEndReasonName(CallEndReason reason);

class CallRegistry {
 public:
  // How long after calls.max_call_ms the registry ends a call its session has not ended: the
  // session's grace for a turn in progress plus time to say its goodbye.
  static constexpr int64_t kMaxCallBackstopMs = 30000;

  // A place among max_calls; gives it back on destruction. The registry must outlive it.
  class Admission {
   public:
    ~Admission();
    Admission(const Admission&) = delete;
    Admission& operator=(const Admission&) = delete;

    // The transport received caller audio for this call (resets the no-audio timer). Lock-free;
    // call it for every audio frame, never for pings, DTMF or marks.
    void NoteAudio();

   private:
    friend class CallRegistry;
    Admission(CallRegistry* registry, uint64_t key,
              std::shared_ptr<std::atomic<int64_t>> last_audio)
        : registry_(registry), key_(key), last_audio_(std::move(last_audio)) {}
    CallRegistry* registry_;
    uint64_t key_;
    std::shared_ptr<std::atomic<int64_t>> last_audio_;  // steady_clock ticks
  };

  static constexpr std::chrono::milliseconds kWatchdogPeriod{200};

  // `config` must be valid (CallsConfig::Validate). `metrics` null: the global registry.
  // `watchdog` false: no timer thread (tests drive Sweep themselves).
  explicit CallRegistry(CallsConfig config, MetricsRegistry* metrics = nullptr,
                        bool watchdog = true);
  // A cap of `max_calls` with the default over-capacity text.
  explicit CallRegistry(int max_calls) : CallRegistry(CallsConfig{.max_calls = max_calls}) {}
  ~CallRegistry();
  CallRegistry(const CallRegistry&) = delete;
  CallRegistry& operator=(const CallRegistry&) = delete;

  // Ends the calls whose timers expired at `now` (see the file comment); returns how many. The
  // watchdog calls it; tests may too.
  int Sweep(std::chrono::steady_clock::time_point now);
  // Counts a call the agent ended (the transports' sinks report it; see CallConnection).
  void CountEnded(CallEndReason reason);

  // A place for the call, or nullptr when max_calls are in progress.
  std::unique_ptr<Admission> Admit(ActiveCall call, EndCallFn end);
  // The calls in progress, oldest first.
  std::vector<ActiveCall> List() const;
  // Asks every call with this id to end; returns how many were asked (0: no such call).
  size_t End(std::string_view id, std::string_view reason);

  int active() const;
  const CallsConfig& config() const { return config_; }
  int max_calls() const { return config_.max_calls; }
  // What a transport says to a call it turns away.
  const std::string& over_capacity_text() const { return config_.over_capacity_text; }

 private:
  struct Entry {
    ActiveCall call;
    std::chrono::steady_clock::time_point started;
    EndCallFn end;
    std::shared_ptr<std::atomic<int64_t>> last_audio;
  };
  void Release(uint64_t key);
  void WatchdogLoop();

  const CallsConfig config_;
  Counter* ended_[kCallEndReasons];
  std::thread watchdog_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by mu_
  mutable std::mutex mu_;
  uint64_t next_key_ = 1;            // guarded by mu_
  std::map<uint64_t, Entry> calls_;  // guarded by mu_; keys increase with admission time
};

}  // namespace hotline::server
