// The part of a call's life that every transport (Twilio, AudioSocket, browser softphone) shares,
// from admission to the session's end; the transports keep only their wire formats.
//
//   // Once per transport, at Create:
//   auto transport = std::make_unique<CallTransport>("twilio", "Twilio", registry, metrics);
//   ASSIGN_OR_RETURN(auto busy, SynthesizeAnnouncement(resources, registry->over_capacity_text(),
//                                                      8000));
//   // Per connection, on the call's first message:
//   CallConnection call(*transport);
//   if (!call.Admit({.id = sid, .transport = "twilio"}, end_fn)) { /* play `busy`, let go */ }
//   Status s = call.Open(resources, std::move(info), sink);   // the CallSession
//   if (s.ok()) call.session()->Start(); else { /* say why, close */ call.End(); }
//   ...
//   call.End();   // the caller or the agent hung up, bad input, the socket closed
//
// CallTransport holds what one transport's connections share: the CallRegistry (the process's
// call cap and over-capacity text) and the transport's counters and gauge, named
// hotline_<name>_{calls_total, over_capacity_total, protocol_errors_total, transfers_total,
// active_calls}. CallConnection is one connection's admission, session and sink: it counts the
// call while admitted, and End() gives everything back in one order (the session hung up, the
// sink cut off, the gauge, the place in the registry). The session's hang-ups and transfers are
// counted by reason in the registry (hotline_calls_ended_total{reason}) on their way to the sink;
// the registry's call timers end calls that carry no audio or last too long.
//
// Thread-safety: CallTransport's methods may be called from any thread. A CallConnection belongs
// to its connection's I/O thread (one event at a time); End never blocks.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/metrics.h"
#include "common/status.h"
#include "pipeline/call_session.h"
#include "pipeline/call_sink.h"
#include "server/calls/call_registry.h"
#include "server/http_types.h"

namespace hotline::server {

// A session's way back to the caller that the transport cuts off when the call ends (the session's
// workers may still be finishing): after Detach, sends are ignored and the sink holds nothing of
// the connection's. Detach is called on the connection's thread, the rest on session workers.
class DetachableCallSink : public pipeline::CallSink {
 public:
  virtual void Detach() = 0;
};

class CallTransport {
 public:
  // `name` is the metric prefix and the log's transport ("twilio"), `title` starts the metrics'
  // help texts ("Twilio"). `registry` must not be null.
  CallTransport(std::string name, std::string_view title, std::shared_ptr<CallRegistry> registry,
                MetricsRegistry& metrics);

  CallRegistry& registry() const { return *registry_; }
  const std::string& name() const { return name_; }
  // Calls of this transport admitted and not yet ended.
  int active() const { return active_.load(); }
  // Connections closed for input the transport's decoder or the session refused.
  Counter& protocol_errors() const { return *protocol_errors_; }
  // Calls the agent handed to a human.
  Counter& transfers() const { return *transfers_; }

 private:
  friend class CallConnection;

  const std::string name_;
  const std::shared_ptr<CallRegistry> registry_;
  std::atomic<int> active_{0};
  Counter* calls_;
  Counter* over_capacity_;
  Counter* protocol_errors_;
  Counter* transfers_;
  Gauge* active_gauge_;
};

class CallConnection {
 public:
  // `transport` must outlive the connection.
  explicit CallConnection(CallTransport& transport) : transport_(transport) {}
  ~CallConnection() { End(); }
  CallConnection(const CallConnection&) = delete;
  CallConnection& operator=(const CallConnection&) = delete;

  // Takes a place for the call in the registry (`end`: see CallRegistry) and counts it (calls
  // answered, active gauge). False when the cap is reached: counted and logged as turned away;
  // the transport then plays its busy message in its own format. At most once per connection.
  bool Admit(ActiveCall call, EndCallFn end);
  // Opens the call's session talking back through `sink`, kept until End. On failure the error is
  // logged and returned; the transport says so in its format, closes, and calls End.
  // REQUIRES: Admit returned true.
  Status Open(const pipeline::CallResources& resources, pipeline::CallInfo info,
              std::shared_ptr<DetachableCallSink> sink);
  // The open session, or null (before Open, after End).
  pipeline::CallSession* session() const { return session_.get(); }
  bool admitted() const { return admission_ != nullptr; }
  // The transport received caller audio (a media frame; never pings, DTMF or marks): resets the
  // call's no-audio timer (calls.no_audio_timeout_ms, see CallRegistry). Lock-free.
  void NoteAudio() {
    if (admission_ != nullptr) admission_->NoteAudio();
  }

  // Hangs the session up (never blocks), detaches the sink, uncounts the call and gives back its
  // place. Idempotent; also run by the destructor.
  void End();

 private:
  CallTransport& transport_;
  std::string call_id_;
  std::unique_ptr<CallRegistry::Admission> admission_;
  std::unique_ptr<pipeline::CallSession> session_;
  std::shared_ptr<DetachableCallSink> sink_;
  bool counted_ = false;
};

// `text` spoken by the transports' synthesizer at `rate_hz` (mono): what a transport plays itself,
// such as the over-capacity message. Synthesis and resampling errors are returned.
Result<std::vector<int16_t>> SynthesizeAnnouncement(const pipeline::CallResources& resources,
                                                    std::string_view text, int rate_hz);
// Samples as PCM16 little-endian bytes (AudioSocket and softphone audio).
std::string EncodePcm16Le(std::span<const int16_t> samples);

// The WebSocket upgrade's Origin check (calls.allowed_origins): OK without an Origin header (not
// a browser), for the server's own origin (http:// or https:// + the Host header), an origin in
// `allowed`, or anything when `allowed` holds "*"; PermissionDenied (403) otherwise.
Status CheckUpgradeOrigin(const Request& upgrade, const std::vector<std::string>& allowed);

// True when `a` equals `b`, compared in time independent of where they differ (tokens).
bool SameSecret(std::string_view a, std::string_view b);

}  // namespace hotline::server
