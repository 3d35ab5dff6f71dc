// TwilioEndpoint: Twilio Media Streams calls on a WebSocket path (`/twilio`), each one a
// pipeline::CallSession.
//
//   auto twilio = TwilioEndpoint::Create(stack.resources(), config.twilio);
//   server->HandleWebSocket("/twilio", (*twilio)->Factory());
//
// Per connection: `connected` is noted; `start` checks the media format (8 kHz mono μ-law), takes
// the caller's number from the stream's custom parameters (TwiML `<Parameter name="caller"
// value="{{From}}"/>`), opens a CallSession and speaks the greeting; `media` payloads go to
// CallSession::PushAudio, `dtmf` to PushDtmf, `mark` to MarkPlayed; `stop` or the socket closing
// hangs the session up. The session talks back through a sink that turns its audio into `media`
// messages followed by a `mark` per chunk, barge-in into `clear`, and hang-up / transfer into a
// normal close of the stream with the reason: with `<Connect><Stream>`, Twilio then carries on
// with the TwiML after `<Connect>` (a `<Dial>` to the agents' queue for a transfer).
//
// Trust: the upgrade is refused (403) for a browser Origin other than the server's own or
// calls.allowed_origins, and — when an auth token is configured (validate_signature) — without a
// valid X-Twilio-Signature. The caller's number is believed only from a signed stream (or with
// trust_unsigned_caller_id); otherwise the caller is anonymous.
//
// Bad input closes that call only: binary frames, malformed JSON, bad base64, wrong types,
// oversized messages, media before `start`, an unsupported media format — each closes the socket
// with 1008 (policy) or 1009 (too big) and the decoder's message as the reason, logged and counted.
//
// Capacity: at most the CallRegistry's `max_calls` sessions at once, shared with the other
// transports; a call over it hears the registry's over-capacity text (synthesized once at Create)
// and is closed when Twilio reports it played (its mark), without a session.
//
// Thread-safety: the factory and handlers run on the server's I/O threads, one connection's
// events at a time; sessions call the sink from their workers (it only queues on the socket).
// Nothing here blocks an I/O thread but CallSession::Create (per-call state: a synthesizer and
// resamplers, a few ms).
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "common/metrics.h"
#include "common/status.h"
#include "pipeline/call_session.h"
#include "server/calls/call_registry.h"
#include "server/http_types.h"

namespace hotline::server {

// The call cap and over-capacity text are transport-neutral: `calls` (CallsConfig).
struct TwilioConfig {
  // Custom parameters of `start` read, in order, for the caller's number (the tools' caller
  // identification). Empty: the caller is anonymous.
  std::vector<std::string> caller_id_parameters = {"caller", "From", "from", "caller_id"};
  // The Twilio account's auth token, for the X-Twilio-Signature of each stream's WebSocket
  // upgrade. Empty: the environment's HOTLINE_TWILIO_AUTH_TOKEN, then TWILIO_AUTH_TOKEN.
  std::string auth_token = {};
  // Check signatures whenever a token is configured: an upgrade without a valid one is refused
  // (403). Without a token nothing can be checked; `hotline serve` warns at start-up.
  bool validate_signature = true;
  // The stream URL exactly as Twilio is told in the TwiML (<Stream url="wss://host/twilio">),
  // which is what Twilio signs. Empty: "wss://" + the upgrade's Host header + its path.
  std::string public_url = {};
  // Believe the caller's number from a stream whose signature was not checked (no token). Off:
  // such callers are anonymous (no account can be verified), since anyone can open /twilio and
  // claim any number. Only for development or a stream reachable from Twilio alone.
  bool trust_unsigned_caller_id = false;

  template <class V>
  void Visit(V& v) {
    v.Field("caller_id_parameters", caller_id_parameters,
            "start.customParameters names holding the caller's number");
    v.Field("auth_token", auth_token,
            "Twilio auth token for X-Twilio-Signature (empty: HOTLINE_TWILIO_AUTH_TOKEN, "
            "TWILIO_AUTH_TOKEN)");
    v.Field("validate_signature", validate_signature,
            "Refuse upgrades without a valid X-Twilio-Signature when a token is configured");
    v.Field("public_url", public_url, "Stream URL as Twilio signs it (empty: wss://Host/path)");
    v.Field("trust_unsigned_caller_id", trust_unsigned_caller_id,
            "Believe the caller's number on streams whose signature was not checked");
  }
  Status Validate() const;
  // auth_token, or the environment's when empty.
  std::string EffectiveAuthToken() const;
};

class TwilioEndpoint {
 public:
  // `resources` (and what they point to) must outlive the endpoint and every connection.
  // `registry`: the process's calls, for a cap shared with other transports and the admin API;
  // null: a registry of this endpoint's own with the CallsConfig defaults.
  static Result<std::unique_ptr<TwilioEndpoint>> Create(const pipeline::CallResources& resources,
                                                        TwilioConfig config,
                                                        MetricsRegistry* metrics = nullptr,
                                                        std::shared_ptr<CallRegistry> registry =
                                                            nullptr);

  // The WebSocket factory for HttpServer::HandleWebSocket.
  WebSocketFactory Factory();

  int active_calls() const;

  struct Shared;  // state the connections share (outlives the endpoint while calls run)

 private:
  explicit TwilioEndpoint(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
  std::shared_ptr<Shared> shared_;
};

}  // namespace hotline::server
