// SoftphoneEndpoint: browser calls on a WebSocket path (`/softphone/ws`), each one a
// pipeline::CallSession — the same session, call cap and call list as Twilio and AudioSocket.
//
//   auto phone = SoftphoneEndpoint::Create(stack.resources(), config, nullptr, registry);
//   server->HandleWebSocket("/softphone/ws", (*phone)->Factory());
//
// The wire protocol (transport/softphone/protocol.h, docs/protocols.md): the browser sends a JSON
// `start` with its sample rate (8 or 16 kHz), then PCM16 frames as binary messages; Hotline
// answers with PCM16 at the same rate (binary) and JSON events: `started`, the session's own
// (`partial`, `transcript`, `turn` with the latency ledger, `barge_in`, `error`), `mark` (echoed
// back by the page when its playback reaches it), `clear` (barge-in: flush the playback buffer),
// `hangup` / `transfer` with the reason, then a normal close. Unlike Twilio, playback pacing and
// the jitter buffer are the page's: the server sends audio as it is synthesized.
//
// Bad input (anything ClientDecoder refuses, a payload the session refuses) closes that call only:
// an `error` event, then close 1008 (1009 for an oversized text message) with the reason; logged
// and counted. Over the cap a caller hears `over_capacity_text` (a `busy` event, the audio, a
// mark) and is closed once the page reports the mark played — or, for a page that never does,
// once it has sent that much audio again plus 5 s.
//
// Thread-safety: the factory and handlers run on the server's I/O threads, one connection's
// events at a time; sessions call the sink from their workers (it only queues on the socket).
#pragma once

#include <memory>
#include <string>

#include "common/metrics.h"
#include "common/status.h"
#include "pipeline/call_session.h"
#include "server/calls/call_registry.h"
#include "server/calls/calls_config.h"
#include "server/http_types.h"

namespace hotline::server {

// Cap and busy message when no shared CallRegistry is given; with one (`hotline serve`), the
// registry's calls.max_calls and calls.over_capacity_text apply.
using SoftphoneConfig = CallsConfig;

class SoftphoneEndpoint {
 public:
  // `resources` (and what they point to) must outlive the endpoint and every connection.
  static Result<std::unique_ptr<SoftphoneEndpoint>> Create(
      const pipeline::CallResources& resources, SoftphoneConfig config,
      MetricsRegistry* metrics = nullptr, std::shared_ptr<CallRegistry> registry = nullptr);

  // The WebSocket factory for HttpServer::HandleWebSocket.
  WebSocketFactory Factory();

  int active_calls() const;

  struct Shared;

 private:
  explicit SoftphoneEndpoint(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
  std::shared_ptr<Shared> shared_;
};

}  // namespace hotline::server
