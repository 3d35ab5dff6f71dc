// AudioSocketServer: Asterisk AudioSocket calls over TCP (the dialplan's
// `AudioSocket(<uuid>,<host>:<port>)`), each one a pipeline::CallSession.
//
//   auto as = AudioSocketServer::Create(stack.resources(), config.audiosocket, &metrics, registry);
//   (*as)->Start();               // binds config.port (0: a free one), port() tells which
//   ...
//   (*as)->Stop();                // hangs every call up (0x00), closes, joins
//
// Per connection: the first packet must be the call's UUID (0x01) within uuid_timeout_ms; the
// call then takes a place in the CallRegistry (shared with the Twilio endpoint, so the cap counts
// calls on both transports) and a CallSession answers in signed 16-bit little-endian PCM at 8 kHz
// (0x10 both ways). DTMF (0x03) goes to CallSession::PushDtmf as Twilio's `dtmf` does; the
// caller's hang-up (0x00) or the socket closing ends the session; an error packet (0xff) from
// Asterisk is logged and counted.
//
// Reply audio is paced here, not by the peer: the session's audio waits in a per-call outbox and
// a timer sends one 320-byte (20 ms) 0x10 packet every 20 ms on an absolute schedule (deadline +=
// 20 ms, so timer lateness never accumulates into drift; a stall of over 200 ms resynchronizes to
// now instead of bursting what it missed). A mark is reported played (CallSession::MarkPlayed)
// when the pacer has sent the audio before it. Barge-in (CallSink::Clear) drops the queued,
// unsent audio at once. The agent's hang-up, or a transfer (carried out by Asterisk's dialplan
// after AudioSocket() returns), sends the audio still queued, then 0x00, then closes.
//
// Bad input ends that connection only: a first packet that is not a UUID, an unknown packet type,
// an audio payload that is odd-sized or over max_audio_bytes, a malformed DTMF or hang-up packet,
// a second UUID — each is logged with what was wrong, answered with an error packet (0xff) and the
// socket closed, and counted. A peer that stops reading is cut off once max_send_queue_bytes are
// waiting; one that sends nothing for idle_timeout_ms is closed.
//
// Over capacity: the caller hears the registry's over-capacity text (calls.over_capacity_text,
// synthesized once at Create), then 0x00.
//
// Threads: one I/O thread of its own runs every socket and pacer; sessions call the sink from
// their workers (it only queues under a mutex). Nothing blocks the I/O thread but
// CallSession::Create (a few ms per call).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/metrics.h"
#include "common/status.h"
#include "pipeline/call_session.h"
#include "server/calls/call_registry.h"

namespace hotline::server {

// True when `peer_ip` is in `allowed` (AudioSocketConfig::allowed_peers; empty allows any).
bool AudioSocketPeerAllowed(std::string_view peer_ip, const std::vector<std::string>& allowed);

struct AudioSocketConfig {
  // TCP port for Asterisk AudioSocket connections; -1: off; 0: any free port (tests).
  int port = -1;
  // Listen address. Asterisk usually runs on the same host or a private network.
  std::string host = "127.0.0.1";
  // Largest inbound audio packet (bytes). Asterisk sends 320 (20 ms); bigger is refused.
  int max_audio_bytes = 3200;
  // Time a new connection has to send its UUID packet.
  int uuid_timeout_ms = 5000;
  // A call that sends no packet for this long is closed (Asterisk sends audio every 20 ms).
  int idle_timeout_ms = 10000;
  // Reply audio waiting to be paced out, per call (ms); beyond it audio is dropped and counted.
  int max_queued_audio_ms = 120000;
  // Bytes queued for a peer that does not read before the connection is cut off.
  int max_send_queue_bytes = 64 << 10;
  // Open AudioSocket connections (identified or not); more are refused with an error packet.
  int max_connections = 1024;
  // Peers allowed to connect: IPv4/IPv6 addresses or CIDR blocks ("10.0.0.0/8", "::1").
  // Others are refused before any packet is read, counted and logged. Empty: any peer (a
  // start-up warning says so unless host is a loopback address).
  std::vector<std::string> allowed_peers;

  template <class V>
  void Visit(V& v) {
    v.Field("port", port, "AudioSocket TCP port (-1: off; 0: any free port)");
    v.Field("host", host, "AudioSocket listen address");
    v.Field("max_audio_bytes", max_audio_bytes, "Largest inbound audio packet (bytes)");
    v.Field("uuid_timeout_ms", uuid_timeout_ms, "Time for a connection to send its UUID (ms)");
    v.Field("idle_timeout_ms", idle_timeout_ms, "Close a call silent on the wire this long (ms)");
    v.Field("max_queued_audio_ms", max_queued_audio_ms, "Reply audio queued per call (ms)");
    v.Field("max_send_queue_bytes", max_send_queue_bytes,
            "Bytes queued for a peer that does not read before it is cut off");
    v.Field("max_connections", max_connections, "Open AudioSocket connections at most");
    v.Field("allowed_peers", allowed_peers,
            "Addresses or CIDR blocks allowed to connect (empty: any)");
  }
  Status Validate() const;
};

class AudioSocketServer {
 public:
  // `resources` must outlive the server. `registry`: the process's calls (cap shared with the
  // other transports, admin API); null: one of its own with the CallsConfig defaults.
  static Result<std::unique_ptr<AudioSocketServer>> Create(
      const pipeline::CallResources& resources, AudioSocketConfig config,
      MetricsRegistry* metrics = nullptr, std::shared_ptr<CallRegistry> registry = nullptr);
  ~AudioSocketServer();
  AudioSocketServer(const AudioSocketServer&) = delete;
  AudioSocketServer& operator=(const AudioSocketServer&) = delete;

  // Binds host:port and starts the I/O thread. Unavailable when the address cannot be bound.
  Status Start();
  // Stops accepting, hangs up every call (0x00), waits up to 2 s for the sockets to close, joins.
  // Idempotent; also run by the destructor.
  void Stop();

  int port() const { return port_; }
  int active_calls() const;
  int open_connections() const;

  struct Shared;

 private:
  explicit AudioSocketServer(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
  std::shared_ptr<Shared> shared_;
  std::thread io_thread_;
  int port_ = 0;
  bool started_ = false;
  bool stopped_ = false;
};

}  // namespace hotline::server
